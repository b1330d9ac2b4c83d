//! Comparing two surveys (`fprev compare A.json B.json`): for every black
//! box, dtype and size both cover, the same bits or not, and why: the
//! first rule of the formula where they part, the first subtree, or "same
//! order, different arithmetic" with the node; and the machine facts that
//! differ and touch that library, as the likely cause. A black box whose
//! answers varied from call to call in either survey is never the same:
//! bits that matched once match by luck.
//!
//! ```
//! use fprev::survey::{Plan, Survey, compare::{Verdict, compare}};
//! use fprev::Format;
//!
//! let survey = |spec: &'static str| {
//!     let mut s = Survey::new(Plan {
//!         black_boxes: vec!["native:sum".into()],
//!         dtypes: vec![Format::F32],
//!         sizes: "1..12".parse().unwrap(),
//!         ..Plan::default()
//!     });
//!     // The same name on two machines, two kernels.
//!     s.run(&mut move |_, o| fprev::open(spec, o), &mut |_| {}, &mut |_| Ok(())).unwrap();
//!     s
//! };
//! let (a, b) = (survey("native:sequential"), survey("native:pairwise"));
//! let c = compare(&a, &b);
//! assert_eq!(c.entries[0].verdict, Verdict::Differ);
//! assert_eq!(c.entries[0].first_differing, Some(3));
//! assert_eq!(compare(&a, &a).entries[0].verdict, Verdict::Same);
//! ```

use serde::Serialize;

use super::{Entry, Survey, side};
use crate::error::abbreviated;
use crate::spec::Spec;

/// What two surveys say of one black box in one dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The same tree and arithmetic, confirmed by replay on both, at every
    /// size both cover.
    Same,
    /// Some size both cover gives other bits.
    Differ,
    /// Not every size could be compared: a side failed, or a tree was not
    /// confirmed by replay, or no size is covered by both.
    Unknown,
    /// Its answers varied from call to call in one survey or both: no bits
    /// of it are the same but by luck.
    Varies,
}

/// One black box and dtype in both surveys.
#[derive(Clone, Debug, Serialize)]
pub struct EntryComparison {
    /// The black box.
    pub spec: String,
    /// Its dtype.
    pub dtype: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The sizes both cover with a tree.
    pub sizes: Vec<usize>,
    /// The sizes whose bits differ.
    pub differing: Vec<usize>,
    /// The first of them.
    pub first_differing: Option<usize>,
    /// Why, in one line.
    pub reason: String,
    /// The first rule of the formulas that differs: `(from n, here,
    /// there)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<(usize, String, String)>,
    /// At the first differing size: the smallest subtree each side has
    /// that the other lacks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtree: Option<[String; 2]>,
    /// Where the trees agree but the arithmetic parts: `(n, where)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arithmetic: Option<(usize, String)>,
    /// How the thread counts' effect differs, where both compared them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<String>,
    /// Machine facts that differ and bear on this black box.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suspects: Vec<String>,
    /// For `varies`: what each survey saw of its answers from call to
    /// call, A's first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub varies: Option<[String; 2]>,
}

/// Two surveys compared.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// The machine facts that differ: `(fact, A, B)`.
    pub machine: Vec<(String, String, String)>,
    /// Each black box and dtype both surveyed, in A's order.
    pub entries: Vec<EntryComparison>,
    /// Surveyed by A only (`spec dtype`).
    pub only_a: Vec<String>,
    /// Surveyed by B only.
    pub only_b: Vec<String>,
}

impl Comparison {
    /// Whether every entry both surveyed gives the same bits.
    pub fn all_same(&self) -> bool {
        self.entries.iter().all(|e| e.verdict == Verdict::Same)
    }

    /// How many entries have `verdict`.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.entries.iter().filter(|e| e.verdict == verdict).count()
    }

    /// The comparison as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a comparison serialises")
    }
}

/// Compares survey `a` with survey `b`.
pub fn compare(a: &Survey, b: &Survey) -> Comparison {
    let machine = a.machine.differences(&b.machine);
    let label = |e: &Entry| format!("{} {}", e.spec, e.dtype);
    let entries = a
        .entries
        .iter()
        .filter_map(|x| {
            let y = b.entry(&x.spec, &x.dtype)?;
            Some(compare_entry([x, y], [a, b], &machine))
        })
        .collect();
    let only = |p: &Survey, q: &Survey| {
        p.entries
            .iter()
            .filter(|e| q.entry(&e.spec, &e.dtype).is_none())
            .map(label)
            .collect()
    };
    Comparison {
        machine,
        entries,
        only_a: only(a, b),
        only_b: only(b, a),
    }
}

fn compare_entry(
    [a, b]: [&Entry; 2],
    surveys: [&Survey; 2],
    machine: &[(String, String, String)],
) -> EntryComparison {
    let mut c = EntryComparison {
        spec: a.spec.clone(),
        dtype: a.dtype.clone(),
        verdict: Verdict::Same,
        sizes: Vec::new(),
        differing: Vec::new(),
        first_differing: None,
        reason: String::new(),
        rule: None,
        subtree: None,
        arithmetic: None,
        threads: thread_difference(a, b),
        suspects: suspects(&a.spec, machine),
        varies: None,
    };
    if !a.variations().is_empty() || !b.variations().is_empty() {
        let [x, y] = [(a, surveys[0]), (b, surveys[1])].map(|(e, s)| seen(e, s.plan.runs));
        c.verdict = Verdict::Varies;
        c.reason = format!("varies from call to call: A {x}; B {y}");
        c.varies = Some([x, y]);
        return c;
    }
    if let Some(why) = [a, b].iter().find_map(|e| e.error.as_deref()) {
        c.verdict = Verdict::Unknown;
        c.reason = format!("not compared: a survey failed here ({})", abbreviated(why));
        return c;
    }
    let mut unconfirmed = Vec::new();
    // Sizes both surveys visited, with a tree or not.
    let mut common = 0;
    for x in &a.sizes {
        let Some(y) = b.sizes.iter().find(|y| y.n == x.n) else {
            continue;
        };
        common += 1;
        let (Some(tx), Some(ty)) = (a.tree_at(x.n), b.tree_at(x.n)) else {
            if x.outcome != y.outcome {
                c.differing.push(x.n);
            }
            continue;
        };
        c.sizes.push(x.n);
        if let Some(d) = tx.diff(&ty) {
            if c.subtree.is_none() {
                c.subtree = Some(d.texts(&tx, &ty).map(side));
            }
            c.differing.push(x.n);
            continue;
        }
        match (&x.arithmetic, &y.arithmetic) {
            (Some(p), Some(q)) => {
                if let Some(parting) = p.parting(q, &tx) {
                    if c.arithmetic.is_none() && c.subtree.is_none() {
                        c.arithmetic = Some((x.n, parting.to_string()));
                    }
                    c.differing.push(x.n);
                }
            }
            _ => unconfirmed.push(x.n),
        }
    }
    c.differing.sort_unstable();
    c.first_differing = c.differing.first().copied();
    c.rule = first_rule(a, b);
    let covered = crate::sizes::runs(&c.sizes);
    if let Some(n) = c.first_differing {
        c.verdict = Verdict::Differ;
        let share = format!("{} of {common} sizes", c.differing.len());
        c.reason = match (&c.subtree, &c.arithmetic, &c.rule) {
            (Some(_), _, Some((from, x, y))) => format!(
                "other order at {share} from n = {n}: the formulas part from n = {from}, {} \
                 against {}",
                abbreviated(x),
                abbreviated(y)
            ),
            (Some([x, y]), _, None) => {
                format!("other order at {share} from n = {n}: the trees part at {x} against {y}")
            }
            (None, Some((m, at)), _) => {
                format!("same order, different arithmetic at {share} from n = {m}: {at}")
            }
            _ => format!("other outcome at n = {n}"),
        };
    } else if !unconfirmed.is_empty() {
        c.verdict = Verdict::Unknown;
        c.reason = format!(
            "same order at n = {covered}, but at n = {} a replay did not reproduce the bits, \
             so they were not compared",
            crate::sizes::runs(&unconfirmed)
        );
    } else if c.sizes.is_empty() {
        c.verdict = Verdict::Unknown;
        c.reason = "no size with a tree in both surveys".into();
    } else {
        c.reason = format!(
            "same bits: the same order and arithmetic, confirmed by replay, at n = {covered}"
        );
    }
    c
}

/// What a survey saw of `e`'s answers from call to call, having looked
/// for variation on purpose with `runs` calls of each input: where they
/// varied, and the widest spread.
fn seen(e: &Entry, runs: usize) -> String {
    let found = e.variations();
    let widest = found
        .iter()
        .map(|(_, _, v)| *v)
        .max_by(|v, w| v.spread_ulps.total_cmp(&w.spread_ulps));
    let Some(widest) = widest else {
        return if runs > 1 {
            format!(
                "gave the same bits on every call (up to {runs} calls of each input at its \
                 largest size)"
            )
        } else {
            "gave the same bits on every call it made (not looked for on purpose)".into()
        };
    };
    let own: Vec<usize> = found
        .iter()
        .filter(|(_, t, _)| t.is_none())
        .map(|(n, _, _)| *n)
        .collect();
    let mut at: Vec<String> = Vec::new();
    if !own.is_empty() {
        at.push(crate::sizes::runs(&own));
    }
    at.extend(
        found
            .iter()
            .filter_map(|(n, t, _)| Some(format!("{n} on {} thread(s)", (*t)?))),
    );
    format!("varied at n = {}: {widest}", at.join(", "))
}

/// The first regime of the formulas that differs: `(from, A's, B's)`.
fn first_rule(a: &Entry, b: &Entry) -> Option<(usize, String, String)> {
    let (ra, rb) = (a.regimes(), b.regimes());
    if ra.is_empty() || rb.is_empty() {
        return None;
    }
    ra.iter()
        .zip(&rb)
        .find(|(x, y)| x != y)
        .map(|((fa, x), (fb, y))| (*fa.min(fb), x.clone(), y.clone()))
        .or_else(|| {
            // One chain is longer: its next switch is the first difference.
            let longer = if ra.len() > rb.len() { &ra } else { &rb };
            longer.get(ra.len().min(rb.len())).map(|(from, f)| {
                let last = |r: &Vec<(usize, String)>| r.last().map(|x| x.1.clone());
                let (x, y) = if ra.len() > rb.len() {
                    (f.clone(), last(&rb).unwrap_or_default())
                } else {
                    (last(&ra).unwrap_or_default(), f.clone())
                };
                (*from, x, y)
            })
        })
}

/// How the effect of the thread count differs, where both surveys compared
/// the same counts.
fn thread_difference(a: &Entry, b: &Entry) -> Option<String> {
    let (x, y) = (a.threads.as_ref()?, b.threads.as_ref()?);
    if x.dependent == y.dependent || x.error.is_some() || y.error.is_some() {
        return None;
    }
    let says = |d: &[usize]| {
        if d.is_empty() {
            "at no size".to_string()
        } else {
            format!("at n = {}", crate::sizes::runs(d))
        }
    };
    Some(format!(
        "the thread count ({} against {}) changes the tree {} here, {} there",
        counts(&x.counts),
        counts(&y.counts),
        says(&x.dependent),
        says(&y.dependent)
    ))
}

fn counts(c: &[usize]) -> String {
    c.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(" vs ")
}

/// The machine facts of `machine` that bear on `spec`: the CPU, its
/// library's own facts, and the environment variables that steer it.
fn suspects(spec: &str, machine: &[(String, String, String)]) -> Vec<String> {
    // A survey read from a file may name a family this build lacks (a
    // Python library without the `python` feature): its prefix labels it.
    let parsed = spec.parse::<Spec>();
    let (library, prefix) = match &parsed {
        Ok(s) => (s.label(), s.prefix()),
        Err(_) => {
            let prefix = spec.split_once(':').map_or(spec, |(p, _)| p);
            (prefix.to_string(), prefix)
        }
    };
    // A black box of the user's own (python:, dylib:) may read any of them.
    let variables: &[&str] = match prefix {
        "blas" => &["OPENBLAS_", "GOTO_", "OMP_", "BLIS_", "MKL_", "FPREV_BLAS"],
        "numpy" => &["NPY_", "OPENBLAS_", "OMP_"],
        "jax" => &["XLA_", "TF_"],
        "torch" => &["OMP_", "MKL_", "CUBLAS_", "NVIDIA_"],
        "rayon" => &["RAYON_"],
        "ndarray" | "native" | "reduce" | "replay" => &[],
        _ => &[""],
    };
    machine
        .iter()
        .filter(|(fact, _, _)| {
            fact.starts_with("cpu")
                || fact == "cores"
                || fact.starts_with(&format!("{library} "))
                || fact
                    .strip_prefix('$')
                    .is_some_and(|v| variables.iter().any(|p| v.starts_with(p)))
        })
        .map(|(fact, x, y)| change(fact, x, y))
        .collect()
}

/// `fact: here -> there`, each side cut to a readable length.
pub fn change(fact: &str, here: &str, there: &str) -> String {
    format!("{fact}: {} -> {}", abbreviated(here), abbreviated(there))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Format;
    use crate::probe::ProbeOptions;
    use crate::survey::Plan;

    /// A survey of one black box, `spec` adding in `acc`, under one name.
    fn surveyed(spec: &'static str, acc: Format) -> Survey {
        let mut s = Survey::new(Plan {
            black_boxes: vec!["native:sum".into()],
            dtypes: vec![Format::F32],
            sizes: "1..10".parse().unwrap(),
            threads: Vec::new(),
            ..Plan::default()
        });
        let mut open = move |_: &Spec, o: &ProbeOptions| {
            let o = ProbeOptions {
                accumulator: Some(acc),
                ..o.clone()
            };
            crate::open(spec, &o)
        };
        s.run(&mut open, &mut |_| {}, &mut |_| Ok(())).unwrap();
        s
    }

    #[test]
    fn same_order_other_arithmetic_is_named_with_its_node() {
        let a = surveyed("native:sequential", Format::F32);
        let b = surveyed("native:sequential", Format::F64);
        let e = &compare(&a, &b).entries[0];
        assert_eq!(
            e.verdict,
            Verdict::Differ,
            "{e:?}\n{:?}",
            b.entries[0].sizes
        );
        assert!(e.subtree.is_none() && e.rule.is_none(), "{e:?}");
        let (n, at) = e.arithmetic.clone().unwrap();
        assert_eq!(Some(n), e.first_differing);
        assert!(
            at.contains("computes f32") && at.contains("against f64"),
            "{at}"
        );
        assert!(
            e.reason.starts_with("same order, different arithmetic"),
            "{}",
            e.reason
        );
    }

    #[test]
    fn other_order_names_the_first_rule_and_subtree() {
        let a = surveyed("native:strided:4", Format::F32);
        let b = surveyed("native:strided:2", Format::F32);
        let e = &compare(&a, &b).entries[0];
        assert_eq!(e.verdict, Verdict::Differ);
        // Up to 2 summands both are one addition; strided:2 parts at 3.
        assert_eq!(e.first_differing, Some(3));
        assert_eq!(e.rule, Some((1, "strided:4".into(), "strided:2".into())));
        assert_eq!(e.subtree, Some(["(1+2)".to_string(), "(0+2)".to_string()]));
        // Every size from 3 on differs, and only those.
        assert_eq!(e.differing, (3..=10).collect::<Vec<_>>());
    }

    #[test]
    fn a_black_box_that_varied_in_either_survey_is_never_the_same() {
        use crate::survey::file::tests::surveyed_as;
        let varying = surveyed_as(None);
        let fixed = surveyed_as(Some("native:pairwise"));
        for (a, b) in [(&varying, &fixed), (&fixed, &varying), (&varying, &varying)] {
            let c = compare(a, b);
            let e = &c.entries[0];
            assert_eq!(e.verdict, Verdict::Varies, "{e:?}");
            assert!(!c.all_same());
            let [x, y] = e.varies.clone().unwrap();
            for (side, text) in [(a, x), (b, y)] {
                let varied = !side.entries[0].variations().is_empty();
                assert_eq!(text.starts_with("varied at n = "), varied, "{text}");
                assert_eq!(text.contains("ulps"), varied, "{text}");
            }
            assert!(
                e.reason.starts_with("varies from call to call: A "),
                "{}",
                e.reason
            );
            assert!(!e.reason.contains("same bits:"), "{}", e.reason);
        }
        assert_eq!(compare(&fixed, &fixed).entries[0].verdict, Verdict::Same);
    }

    #[test]
    fn a_failed_or_unconfirmed_side_is_never_called_the_same() {
        let a = surveyed("native:pairwise", Format::F32);
        let mut b = a.clone();
        b.entries[0].error = Some("the black box crashed".into());
        let e = &compare(&a, &b).entries[0];
        assert_eq!(e.verdict, Verdict::Unknown);
        let mut c = a.clone();
        c.entries[0].sizes[5].outcome = "unconfirmed".into();
        c.entries[0].sizes[5].arithmetic = None;
        let cmp = compare(&a, &c);
        assert_eq!(cmp.entries[0].verdict, Verdict::Unknown);
        assert!(!cmp.all_same());
        assert!(compare(&a, &a).all_same());
    }
}
