//! The mismatch file: the input on which a replay differed from the black
//! box, saved as JSON for the user to rerun (by `fprev check` and by
//! reveal's confirmation alike).

use std::path::Path;

use fprev::Spec;
use fprev::check::Mismatch;
use fprev::format::Format;
use fprev::probe::Offset;
use serde_json::json;

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
    let mut json = serde_json::json!({
        "probe": spec.as_str(),
        "dtype": format.name(),
        "n": m.input.len(),
        "row": row,
        "trial": m.trial,
        "kind": m.kind.to_string(),
        "replayed": m.replayed,
        "accumulator": m.accumulator.name(),
        "black_box": m.black_box,
        "input": m.input,
    });
    if let Some(o) = offset {
        json["offset"] = serde_json::json!(o.to_string());
    }
    if let Some(y) = &m.weights {
        json["weights"] = serde_json::json!(y);
    }
    if m.against.is_some() {
        json["against"] = against(m);
    }
    match write_out(format!("{json}\n").as_bytes(), Some(path)) {
        Ok(()) => true,
        Err(e) => {
            crate::report(&e);
            false
        }
    }
}

/// The nearest alternative an input was made to tell the model from, and
/// what its replay gives (`null` for a random input).
pub(crate) fn against(m: &Mismatch) -> serde_json::Value {
    match &m.against {
        Some((model, gives)) => json!({"model": model.to_string(), "gives": gives}),
        None => serde_json::Value::Null,
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
