//! `fprev check`: replay a saved tree on random inputs against a black box,
//! and save the first input on which they differ (reveal's confirmation
//! saves its mismatch the same way).

use std::path::PathBuf;

use fprev::document::TreeDocument;
use fprev::error::Result;
use fprev::workflow;
use fprev_present::check::{json, summary};

use super::{alignment, open_guarded};
use crate::args::{CheckArgs, Report};
use crate::mismatch::{save_mismatch, saved_to};
use crate::write::{self, check_writable};

/// Runs `fprev check`: 0 when every replay gives the black box's bits, 1
/// when one differs (its input saved, in every --format and with --quiet).
pub(super) fn run(a: CheckArgs) -> Result<i32> {
    let doc = TreeDocument::read(&a.tree)?;
    check_writable(Some(&a.mismatch.mismatch_out))?;
    let tree = a.tree.display().to_string();
    a.guard.start();
    let checked = workflow::check::check(
        &doc,
        &tree,
        a.black_box.options(doc.dtype.or(a.spec.default_dtype())),
        a.spec.takes_offset(),
        a.trials,
        a.seed,
        a.row,
        &mut |o| open_guarded(&a.spec, o),
    )?;
    if checked.offset_of_file
        && let Some(line) = alignment(&a.spec, checked.offset, checked.format)
    {
        eprintln!("fprev: note: as the tree file was found: {line}");
    }
    let report = &checked.report;
    let file = &a.mismatch.mismatch_out;
    let saved = match &report.mismatch {
        Some(m) => {
            save_mismatch(file, &a.spec, checked.offset, checked.format, a.row, m).then_some(file)
        }
        None => None,
    };
    match a.report.report() {
        Report::Quiet => {}
        Report::Text => {
            let spec = a.spec.as_str();
            write::println(summary(
                report,
                &tree,
                spec,
                checked.format,
                checked.declared,
            ))?;
            if report.mismatch.is_some() {
                write::println(saved_to(saved.map(PathBuf::as_path)))?;
            }
        }
        Report::Json => {
            let input_file = saved.map(|f| f.display().to_string());
            let json = json(
                &checked,
                &tree,
                a.spec.as_str(),
                a.seed,
                a.row,
                input_file.as_deref(),
            );
            write::println(format_args!("{json:#}"))?;
        }
    }
    Ok(if report.mismatch.is_some() { 1 } else { 0 })
}
