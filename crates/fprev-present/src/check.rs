//! A check's outcome in words (`fprev check`'s line, Python's
//! `CheckResult.message`, a survey entry's check).

use fprev::check::{CheckReport, Power};
use fprev::format::Format;
use fprev::workflow::survey::ModelCheck;

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
