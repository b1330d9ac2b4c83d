//! A check's outcome in words (`fprev check`'s line, Python's
//! `CheckResult.message`, a survey entry's check).

use fprev::check::{Alternative, CheckReport, Mismatch, Power};
use fprev::format::Format;
use fprev::probe::Offset;
use fprev::workflow::check::Checked;
use fprev::workflow::survey::ModelCheck;
use serde_json::{Value, json};

/// A survey entry's model check in a few words: on how many inputs it
/// held, or where it failed, which leaves the instruction not modelled.
pub fn entry_check(c: &ModelCheck) -> String {
    match &c.mismatch {
        None => format!("checked on {} inputs at n = {}", c.trials, c.n),
        Some((trial, kind)) => format!(
            "its model failed a check at n = {} (input {trial}, {kind}): not modelled",
            c.n
        ),
    }
}

/// One line saying how the check of `tree` (a name for it) against the
/// black box `spec` in `format` ended; `declared` is the black box's
/// declared accumulator.
///
/// ```
/// use fprev::{check, probe, Format, Order};
/// use fprev_present::check::summary;
///
/// let opts = probe::ProbeOptions { n: Some(8), ..Default::default() };
/// let mut bb = fprev::open("native:pairwise", &opts).unwrap();
/// let report = check::check(&Order::Pairwise.tree(8), &mut bb, 10, 1).unwrap();
/// assert_eq!(
///     summary(&report, "the tree", "native:pairwise", Format::F32, Format::F32),
///     "ok: 10 random f32 inputs, replay of the tree (adding in f32) matched native:pairwise \
///      bit for bit"
/// );
/// ```
pub fn summary(
    report: &CheckReport,
    tree: &str,
    spec: &str,
    format: Format,
    declared: Format,
) -> String {
    match &report.mismatch {
        None => {
            let adding = match &report.model {
                Some(m) => format!("nodes adding as {m}"),
                None => format!("adding in {}", report.accumulator.unwrap_or(declared)),
            };
            let power = report.power.as_ref().map_or(String::new(), power);
            format!(
                "ok: {} random {format} inputs, replay of {tree} ({adding}) matched {spec} \
                 bit for bit{power}",
                report.trials
            )
        }
        Some(m) => match &m.against {
            Some((alternative, theirs)) => format!(
                "mismatch on trial {} (an input made to tell the model from {alternative}): \
                 replay gave {:e}, {alternative} gives {theirs:e}, {spec} gave {:e}",
                m.trial + 1,
                m.replayed,
                m.black_box
            ),
            None => format!(
                "mismatch on trial {} ({} input): replay gave {:e}, {spec} gave {:e}",
                m.trial + 1,
                m.kind,
                m.replayed,
                m.black_box
            ),
        },
    }
}

/// `; told from its 5 nearest alternatives (...)`, and those it was not
/// told from (`; NOT distinguished from ...`).
pub fn power(p: &Power) -> String {
    let list = |ms: &[fprev::check::Alternative]| {
        ms.iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut s = String::new();
    if !p.distinguished.is_empty() {
        s += &format!(
            "; inputs told it from its {} nearest alternatives ({})",
            p.told(),
            list(&p.distinguished)
        );
    }
    if !p.undistinguished.is_empty() {
        s += &format!(
            "; not distinguished from {} (no input searched told them apart, or none was \
             searched where said)",
            list(&p.undistinguished)
        );
    }
    s
}

/// `fprev check --format json`: the check of the tree file `tree` against
/// `spec` (its input from `seed`, output `row`), the differing input
/// saved to `input_file` where one differed and could be saved.
pub fn json(
    checked: &Checked,
    tree: &str,
    spec: &str,
    seed: u64,
    row: usize,
    input_file: Option<&str>,
) -> Value {
    let report = &checked.report;
    let mismatch = report.mismatch.as_ref().map(|m| {
        json!({
            "accumulator": m.accumulator.name(),
            "against": against(m),
            "black_box": m.black_box,
            "input_file": input_file,
            "kind": m.kind.to_string(),
            "replayed": m.replayed,
            "trial": m.trial,
        })
    });
    let words = |ms: Option<&Vec<Alternative>>| -> Vec<String> {
        ms.into_iter().flatten().map(ToString::to_string).collect()
    };
    let power = report.power.as_ref();
    // Keys in alphabetical order, the order serde_json keeps.
    let mut json = json!({
        "accumulator": report.accumulator.map(|f| f.name()),
        "distinguished_from": words(power.map(|p| &p.distinguished)),
        "dtype": checked.format.name(),
        "mismatch": mismatch,
        "model": report.model.as_ref().map(ToString::to_string),
        "not_distinguished_from": words(power.map(|p| &p.undistinguished)),
        "ok": report.mismatch.is_none(),
        "passed": report.passed(),
        "row": row,
        "seed": seed,
        "spec": spec,
        "tree": tree,
        "trials": report.trials,
    });
    if let Some(o) = checked.offset {
        json["offset"] = json!(o.to_string());
    }
    json
}

/// The mismatch file: the input on which a replay and the black box
/// `spec` (handed its input at `offset`, output `row`) differed, with
/// both results, for the user to rerun.
pub fn mismatch_file(
    spec: &str,
    offset: Option<Offset>,
    format: Format,
    row: usize,
    m: &Mismatch,
) -> Value {
    let mut json = json!({
        "probe": spec,
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
        json["offset"] = json!(o.to_string());
    }
    if let Some(y) = &m.weights {
        json["weights"] = json!(y);
    }
    if m.against.is_some() {
        json["against"] = against(m);
    }
    json
}

/// The nearest alternative an input was made to tell the model from, and
/// what its replay gives (`null` for a random input).
fn against(m: &Mismatch) -> Value {
    match &m.against {
        Some((model, gives)) => json!({"model": model.to_string(), "gives": gives}),
        None => Value::Null,
    }
}
