//! `fprev compare`: two surveys, which results change between them and why.

use std::path::{Path, PathBuf};

use fprev::error::Result;
use fprev::workflow::survey::{Survey, compare};
use fprev_present::{compare::text, html};

use crate::args::{CompareArgs, Report};
use crate::write::{self, check_writable, write_out};

/// Runs `fprev compare`: 0 when every black box both surveyed gives the
/// same bits at every size both cover, 1 when one does not (or none could
/// be compared), 2 on a bad file.
pub(super) fn run(a: CompareArgs) -> Result<i32> {
    let (pa, pb) = (survey_file(&a.a), survey_file(&a.b));
    let (sa, sb) = (Survey::read(&pa)?, Survey::read(&pb)?);
    check_writable(a.html.as_deref())?;
    let c = compare::compare(&sa, &sb);
    let names = [pa.display().to_string(), pb.display().to_string()];
    if let Some(path) = &a.html {
        let page = html::compare_page(&c, &sa, &sb, [&names[0], &names[1]], !a.no_draw);
        write_out(page.as_bytes(), Some(path))?;
    }
    match a.report.report() {
        Report::Quiet => {}
        Report::Json => write::println(c.to_json())?,
        Report::Text => {
            write::print(text(&c, &names[0], &names[1]).as_bytes())?;
            if c.entries.is_empty() {
                write::println("no black box and dtype is in both surveys: nothing was compared")?;
            }
        }
    }
    Ok(if c.all_same() && !c.entries.is_empty() {
        0
    } else {
        1
    })
}

/// `path`, or its `survey.json` when it is a directory.
fn survey_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("survey.json")
    } else {
        path.to_path_buf()
    }
}
