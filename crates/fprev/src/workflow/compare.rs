//! Comparing two surveys (`fprev compare`): read from their files, each
//! black box both surveyed compared size by size ([`survey::compare`]).

use std::path::{Path, PathBuf};

use crate::error::Result;

use super::survey::{self, Survey, compare::Comparison};

/// Two surveys and what changes between them.
#[derive(Debug)]
pub struct Surveys {
    /// The files read: each path given, or its `survey.json`.
    pub files: [PathBuf; 2],
    /// The surveys.
    pub surveys: [Survey; 2],
    /// What changes between them, and the likely reasons.
    pub comparison: Comparison,
}

/// Reads the surveys at `a` and `b` (a survey's file, or the directory
/// `fprev survey` wrote it in) and compares them.
pub fn compare(a: &Path, b: &Path) -> Result<Surveys> {
    let files = [survey_file(a), survey_file(b)];
    let surveys = [Survey::read(&files[0])?, Survey::read(&files[1])?];
    let comparison = survey::compare::compare(&surveys[0], &surveys[1]);
    Ok(Surveys {
        files,
        surveys,
        comparison,
    })
}

/// `path`, or its `survey.json` when it is a directory.
fn survey_file(path: &Path) -> PathBuf {
    match path.is_dir() {
        true => path.join("survey.json"),
        false => path.to_path_buf(),
    }
}
