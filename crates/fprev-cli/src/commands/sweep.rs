//! `fprev sweep`: reveal across sizes and thread counts, and report where
//! the order changes, as a table or JSON.

use fprev::error::Result;
use fprev::probe::ProbeOptions;
use fprev::sweep;
use fprev_present::sweep::Table;

use super::open_guarded;
use crate::args::{SweepArgs, SweepFormat};
use crate::progress::SweepBar;
use crate::write::{check_writable, format_of, stdout_or, write_out};

/// Runs `fprev sweep`: 0, 3 when a size broke an assumption, else 6 when a
/// size's answers varied from call to call, else 5 when a size's tree was
/// not confirmed.
pub(super) fn run(a: SweepArgs) -> Result<i32> {
    let output = stdout_or(a.output.as_deref());
    let formats = [("json", SweepFormat::Json), ("txt", SweepFormat::Table)];
    let json = format_of(a.format, output, &formats, "sweep")? == Some(SweepFormat::Json);
    check_writable(output)?;
    let threads: Vec<Option<usize>> = if a.threads.is_empty() {
        vec![None]
    } else {
        a.threads.iter().map(|t| Some(usize::from(*t))).collect()
    };
    a.guard.start();
    let s = sweep::sweep_with(
        a.spec.as_str(),
        &ProbeOptions {
            shape: a.shape,
            ..a.number.options(None)
        },
        &a.sizes,
        &threads,
        &a.engine.options(),
        a.confirm,
        a.runs,
        &mut |po| open_guarded(&a.spec, po),
        &mut SweepBar::default(),
    )?;
    let text = if json {
        s.to_json() + "\n"
    } else {
        Table(&s).to_string()
    };
    write_out(text.as_bytes(), output)?;
    Ok(if s.any_broken() {
        3
    } else if s.any_varies() {
        6
    } else if s.any_unconfirmed() {
        5
    } else {
        0
    })
}
