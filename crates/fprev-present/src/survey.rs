//! A survey in words as it runs (`fprev survey`'s progress on stderr) and
//! as it ends: each entry's line, the end line, the entries that failed.

use std::path::Path;

use fprev::workflow::survey::{Detail, Entry, SizeResult, Status, Step, Survey};

use crate::check::entry_check;

/// The survey file (`survey.json`): each formula's sentence
/// ([`formula::sentence`](crate::formula::sentence)) and each thread
/// check's line ([`thread_detail`]) in this crate's words.
pub fn json(survey: &Survey) -> String {
    survey.to_json(&crate::formula::sentence, &thread_detail)
}

/// A line of a thread check's detail, as `survey.json` keeps it and the
/// survey's page shows it: where the trees of two thread counts part at
/// one size, or that a count's answers varied.
///
/// ```
/// use fprev::workflow::survey::Detail;
///
/// let parts = Detail::Parts { n: 8, counts: [1, 4], sides: [Some("(0+1)".into()), None] };
/// assert_eq!(
///     fprev_present::survey::thread_detail(&parts),
///     "n = 8: 1 thread(s) have (0+1), 4 have nothing the other lacks"
/// );
/// ```
pub fn thread_detail(detail: &Detail) -> String {
    let side = |text: &Option<String>| match text {
        Some(t) => fprev::error::abbreviated(t),
        None => "nothing the other lacks".to_string(),
    };
    match detail {
        Detail::Recorded(words) => words.clone(),
        Detail::Varies {
            n,
            threads,
            variation,
        } => format!(
            "n = {n}: on {threads} thread(s) its answers vary from call to call: {}",
            crate::note::variation(variation)
        ),
        Detail::Parts { n, counts, sides } => format!(
            "n = {n}: {} thread(s) have {}, {} have {}",
            counts[0],
            side(&sides[0]),
            counts[1],
            side(&sides[1]),
        ),
        Detail::Outcomes { n } => format!("n = {n}: the outcomes differ"),
    }
}

/// The progress of `step`, a survey kept in `file` going on: the text
/// as it starts (no line's end: its end follows) or ends (a line's end).
pub fn progress(step: &Step<'_>, file: &Path) -> String {
    match step {
        Step::Resumed { kept } => format!(
            "fprev: going on with {}: {kept} entries already surveyed\n",
            file.display()
        ),
        Step::Starting {
            done,
            total,
            spec,
            dtype,
        } => format!("[{:>3}/{total}] {spec} {dtype} … ", done + 1),
        Step::Finished { entry, .. } => format!("{} ({:.1} s)\n", summary(entry), entry.seconds),
        Step::Threads {
            spec,
            dtype,
            counts,
        } => {
            let counts: Vec<String> = counts.iter().map(usize::to_string).collect();
            format!(
                "[threads] {spec} {dtype} on {} threads … ",
                counts.join(", ")
            )
        }
        Step::Threaded { entry, seconds } => {
            let found = match &entry.threads {
                Some(t) if t.error.is_some() => "not compared (see survey.json)".to_string(),
                Some(t) if !t.varies.is_empty() => {
                    let on: Vec<String> = t
                        .varies
                        .iter()
                        .map(|v| format!("n = {} on {}", v.n, v.threads))
                        .collect();
                    format!(
                        "its answers vary from call to call at {} thread(s)",
                        on.join(", ")
                    )
                }
                Some(t) if t.dependent.is_empty() => "the same tree".to_string(),
                Some(t) => format!(
                    "the tree depends on the count at n = {}",
                    fprev::sizes::runs(&t.dependent)
                ),
                None => String::new(),
            };
            format!("{found} ({seconds:.1} s)\n")
        }
        Step::Knob {
            spec,
            dtype,
            knob,
            n,
        } => format!(
            "[knobs] {spec} {dtype} at n = {n}: {}={} …\n",
            knob.name,
            knob.values.join(",")
        ),
        Step::Knobbed { check, seconds } => {
            let found = match (&check.error, check.changes) {
                (Some(why), _) => format!("not tried: {}", fprev::error::abbreviated(why)),
                (None, true) => format!("changes the order: {}", check.outcomes.join("; ")),
                (None, false) => "the same order".to_string(),
            };
            format!("[knobs] {}: {found} ({seconds:.1} s)\n", check.name)
        }
    }
}

/// An entry's line at the survey's end: its black box, dtype and
/// [`summary`].
pub fn line(e: &Entry) -> String {
    format!("{:<22} {:<4} {}", e.spec, e.dtype, summary(e))
}

/// The survey's last line: its entries, its time and where it was kept
/// (`file`) and drawn (`page`).
pub fn end(s: &Survey, file: &Path, page: &Path) -> String {
    format!(
        "# {} entries in {:.0} s: {} and {}",
        s.entries.len(),
        s.seconds,
        file.display(),
        page.display()
    )
}

/// What is said of `failed` entries that could not be surveyed, of a
/// simulated GPU's instructions (`gpu`) or of black boxes.
pub fn failed(failed: usize, gpu: bool) -> String {
    match gpu {
        // A simulated instruction fails alike on every run: fprev cannot
        // probe it (its error says why).
        true => format!(
            "{failed} instruction(s) could not be surveyed: their error says what fprev cannot \
             probe"
        ),
        false => format!(
            "{failed} black box(es) could not be surveyed (see their error); run the same \
             command again to retry them"
        ),
    }
}

/// What an entry found, in a few words.
pub fn summary(e: &Entry) -> String {
    let formula = |f: &str| fprev::error::abbreviated(f);
    let mut out = match (e.status, &e.formula) {
        (Status::Explained, Some(f)) => format!("native:{}", formula(f)),
        (Status::NotExplained, _) => match &e.closest {
            Some((f, at)) => format!(
                "not explained by a formula: the closest, native:{}, fails at n = {at} (trees \
                 kept)",
                formula(f)
            ),
            None => "not explained by a formula (trees kept)".into(),
        },
        (Status::NotRevealed, _) => "no tree past 2 summands".into(),
        (Status::Varies, _) => {
            let found = e.variations();
            let at: Vec<usize> = found.iter().map(|(n, _, _)| *n).collect();
            let widest = found
                .iter()
                .map(|(_, _, v)| v.spread_ulps)
                .fold(0.0, f64::max);
            format!(
                "varies from call to call at n = {} (results up to {widest:.3} ulps apart)",
                fprev::sizes::runs(&at)
            )
        }
        _ => format!(
            "failed: {}",
            fprev::error::abbreviated(e.error.as_deref().unwrap_or("?"))
        ),
    };
    let tree = |s: &&SizeResult| matches!(s.outcome.as_str(), "tree" | "unconfirmed");
    let modelled = e.sizes.iter().filter(tree).any(|s| s.arithmetic.is_some());
    if e.status != Status::Failed && e.sizes.iter().any(|s| tree(&s)) && !modelled {
        out += "; no model reproduced its bits (not modelled)";
    }
    if let Some(c) = &e.check {
        match e.model_at(c.n).filter(|_| c.passed) {
            Some(model) => out += &format!("; {model}, {}", entry_check(c)),
            None => out += &format!("; {}", entry_check(c)),
        }
    }
    let departures = e.departures();
    if !departures.is_empty() {
        out += &format!("; other trees at n = {}", fprev::sizes::runs(&departures));
    }
    if let Some(t) = e.threads.as_ref().filter(|t| !t.dependent.is_empty()) {
        out += &format!(
            "; thread-dependent at n = {}",
            fprev::sizes::runs(&t.dependent)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_not_explained_names_its_closest_formula_and_where_it_fails() {
        let mut entry = Entry {
            spec: "blas:dot@mkl".into(),
            dtype: "f32".into(),
            status: Status::NotExplained,
            formula: None,
            closest: Some(("simd(4, 4, 2, 1, fold, first)".into(), 16384)),
            uncertain: Vec::new(),
            sizes: Vec::new(),
            threads: None,
            knobs: None,
            check: None,
            error: None,
            calls: 0,
            seconds: 0.0,
        };
        assert_eq!(
            summary(&entry),
            "not explained by a formula: the closest, native:simd(4, 4, 2, 1, fold, first), \
             fails at n = 16384 (trees kept)"
        );
        entry.closest = None;
        assert_eq!(summary(&entry), "not explained by a formula (trees kept)");
    }
}
