//! An explanation in words (`fprev explain`): the formula, its sentence,
//! and what it was checked against, or the closest formula where none
//! regenerates every tree.

use fprev::formula::Formula;
use fprev::formula::infer::Inference;
use fprev::sizes::runs;

/// How a front end names what its user can do next: the command line's
/// flags (`--no-cache`), or a Python keyword.
pub struct Remedies<'a> {
    /// How to explain afresh, not from the cache.
    pub afresh: &'a str,
    /// How to check sizes past those revealed.
    pub verify: &'a str,
}

/// The formula (`native:FORMULA`) and its sentence, each on a line.
fn named(formula: &Formula) -> String {
    let sentence = crate::formula::sentence(formula);
    let mut c = sentence.chars();
    let capitalised: String = match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    };
    format!("native:{formula}\n{capitalised}.\n")
}

/// A formula the cache kept, found before from `from` and proven again now
/// at `proven`, not checked from `unchecked` (why).
pub fn kept(
    formula: &Formula,
    from: &[usize],
    proven: &[usize],
    unchecked: Option<&(usize, String)>,
    remedies: &Remedies<'_>,
) -> String {
    let mut out = named(formula);
    out += &format!(
        "# from the cache, not explained now: found before from n = {}; its tree proven again \
         now at n = {} (masked checks, or revealed, and confirmed by replay); it speaks for the \
         sizes checked, to n = {} ({} explains afresh)\n",
        runs(from),
        runs(proven),
        proven.last().copied().unwrap_or(0),
        remedies.afresh
    );
    if let Some((n, why)) = unchecked {
        out += &format!("# not checked from n = {n}: {why}\n");
    }
    out
}

/// What an explanation of `spec` found from the trees revealed at
/// `revealed` (ascending), checked past them at `verified`: its formula
/// and what it speaks for, or the closest where none gives every tree.
///
/// ```
/// use fprev::formula::infer::Inference;
/// use fprev_present::explain::{Remedies, found};
///
/// let inference = Inference { formula: Some("pairwise".parse().unwrap()), closest: None, gaps: vec![] };
/// let remedies = Remedies { afresh: "--no-cache", verify: "--verify" };
/// let text = found(&inference, "native:pairwise", &[1, 2, 3], &[], &remedies);
/// assert!(text.starts_with("native:pairwise\n"));
/// assert!(text.contains("it speaks for n <= 3 (--verify checks larger sizes)"));
/// ```
pub fn found(
    inference: &Inference,
    spec: &str,
    revealed: &[usize],
    verified: &[usize],
    remedies: &Remedies<'_>,
) -> String {
    let sizes = runs(revealed);
    let Some(formula) = &inference.formula else {
        let closest = match &inference.closest {
            Some((f, at)) => format!(
                "; the closest, native:{f}, gives every revealed tree below n = {at} but not the \
                 one at {at}"
            ),
            None => "; it gave two different trees at one size".to_string(),
        };
        return format!(
            "# not explained: no formula of the order language regenerates every tree {spec} \
             revealed at n = {sizes}{closest}\n"
        );
    };
    let mut out = named(formula);
    out += &format!(
        "# regenerates the revealed tree of {spec} at each of {} sizes: n = {sizes}\n",
        revealed.len(),
    );
    let largest = revealed.last().copied().unwrap_or(0);
    out += &match verified {
        [] => format!(
            "# checked at the sizes revealed only: it speaks for n <= {largest} ({} checks \
             larger sizes)\n",
            remedies.verify
        ),
        [.., last] => format!(
            "# checked past them: its tree is the black box's at n = {} (proven with masked \
             checks, or revealed, and confirmed by replay); it speaks for the sizes checked, to \
             n = {last}\n",
            runs(verified)
        ),
    };
    for (lo, hi) in &inference.gaps {
        out += &format!(
            "# the switch at n = {hi} may lie anywhere in {lo}..{hi}: sizes there were not \
             revealed\n"
        );
    }
    out
}

/// An explanation in a few lines, as Python's `str(Explanation)` says it:
/// the formula and its sentence, how many sizes it regenerates and the
/// largest checked (`revealed` and `verified`); or the closest formula and
/// the first size it fails at, where none regenerates every tree.
///
/// ```
/// use fprev::formula::infer::Inference;
///
/// let inference = Inference { formula: Some("pairwise".parse().unwrap()), closest: None, gaps: vec![] };
/// let text = fprev_present::explain::brief(&inference, &[1, 2, 3], &[64]);
/// assert!(text.starts_with("native:pairwise\n"));
/// assert!(text.ends_with("\n# regenerates the revealed tree at each of 3 sizes; checked to n = 64"));
/// ```
pub fn brief(inference: &Inference, revealed: &[usize], verified: &[usize]) -> String {
    if let Some(formula) = &inference.formula {
        let checked = verified.iter().chain(revealed).max().copied().unwrap_or(0);
        return format!(
            "{}# regenerates the revealed tree at each of {} sizes; checked to n = {checked}",
            named(formula),
            revealed.len()
        );
    }
    match &inference.closest {
        Some((f, at)) => format!(
            "# not explained: the closest, native:{f}, gives every revealed tree below n = {at}"
        ),
        None => "# not explained: two different trees at one size".into(),
    }
}
