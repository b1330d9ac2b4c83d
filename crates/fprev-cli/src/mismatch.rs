//! The mismatch file: the input on which a replay differed from the black
//! box, saved as JSON for the user to rerun (by `fprev check` and by
//! reveal's confirmation alike).

use std::path::Path;

use fprev::Spec;
use fprev::check::Mismatch;
use fprev::format::Format;
use fprev::probe::Offset;

use crate::write::write_out;

/// Saves the input on which a replay and the black box `spec` (handed its
/// input at `offset`) differ, with both results, as JSON; says whether it
/// could. A failure is said in one line and never loses the result it
/// belongs to (the path was checked before the work; a disk can still fill).
pub(crate) fn save_mismatch(
    path: &Path,
    spec: &Spec,
    offset: Option<Offset>,
    format: Format,
    row: usize,
    m: &Mismatch,
) -> bool {
    let json = fprev_present::check::mismatch_file(spec.as_str(), offset, format, row, m);
    match write_out(format!("{json}\n").as_bytes(), Some(path)) {
        Ok(()) => true,
        Err(e) => {
            crate::report(&e);
            false
        }
    }
}

/// Where the differing input went: `file`, or nowhere when it could not
/// be written (that error already said why).
pub(crate) fn saved_to(file: Option<&Path>) -> String {
    match file {
        Some(file) => format!("the input is saved to {}", file.display()),
        None => "the input could not be saved".into(),
    }
}
