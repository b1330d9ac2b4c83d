//! `fprev compare`: two surveys, which results change between them and why.

use fprev::error::Result;
use fprev::workflow;
use fprev_present::compare::{json, text};
use fprev_present::html;

use crate::args::{CompareArgs, Report};
use crate::write::{self, check_writable, write_out};

/// Runs `fprev compare`: 0 when every black box both surveyed gives the
/// same bits at every size both cover, 1 when one does not (or none could
/// be compared), 2 on a bad file.
pub(super) fn run(a: CompareArgs) -> Result<i32> {
    check_writable(a.html.as_deref())?;
    let found = workflow::compare::compare(&a.a, &a.b)?;
    let [sa, sb] = &found.surveys;
    let c = &found.comparison;
    let names = found.files.each_ref().map(|f| f.display().to_string());
    if let Some(path) = &a.html {
        let page = html::compare_page(c, sa, sb, [&names[0], &names[1]], !a.no_draw);
        write_out(page.as_bytes(), Some(path))?;
    }
    match a.report.report() {
        Report::Quiet => {}
        Report::Json => write::println(json(c))?,
        Report::Text => {
            write::print(text(c, &names[0], &names[1]).as_bytes())?;
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
