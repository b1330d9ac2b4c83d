//! `fprev diff`: compare two saved trees (the library's
//! [`workflow::diff`](fprev::workflow::diff)), and say so as text, as one
//! JSON object (`--format json`) or by the exit status alone (`--quiet`).

use fprev::document::TreeDocument;
use fprev::error::Result;
use fprev::workflow::diff::diff;
use fprev_present::diff::{json, text};

use crate::args::{DiffArgs, Report};
use crate::write;

/// Runs `fprev diff`: 0 when the trees agree, 1 when they differ (with the
/// first subtrees where they part).
pub(super) fn run(a: DiffArgs) -> Result<i32> {
    let c = diff(&TreeDocument::read(&a.a)?, &TreeDocument::read(&a.b)?)?;
    let (name_a, name_b) = (a.a.display().to_string(), a.b.display().to_string());
    match a.report.report() {
        Report::Quiet => {}
        Report::Json => write::println(format_args!("{:#}", json(&c, &name_a, &name_b)))?,
        Report::Text => write::print(text(&c, &name_a, &name_b).as_bytes())?,
    }
    Ok(if c.same() { 0 } else { 1 })
}
