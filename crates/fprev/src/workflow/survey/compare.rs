//! Comparing two surveys (`fprev compare A.json B.json`): for every black
//! box, dtype and size both cover, the same bits or not, and why: the
//! first rule of the formula where they part, the first subtree, or "same
//! order, different arithmetic" with the node; and the machine facts that
//! differ and touch that library, as the likely cause. Where a survey
//! tried the black box's knobs (`--knobs`), a knob recorded as changing it
//! that is set otherwise on the two machines (or unset on one) is named as
//! the cause, to pin; where the bits agree but such a knob is unset, a
//! note says to pin it to keep them so. A black box whose answers varied
//! from call to call in either survey is never the same: bits that matched
//! once match by luck. Reasons and notes are typed ([`Reason`],
//! [`KnobNote`]); fprev-present words them.
//!
//! ```
//! use fprev::workflow::survey::{Scope, Survey, compare::{Agreement, compare}};
//! use fprev::Format;
//!
//! let survey = |spec: &'static str| {
//!     let mut s = Survey::new(Scope {
//!         black_boxes: vec!["native:sum".into()],
//!         dtypes: vec![Format::F32],
//!         sizes: "1..12".parse().unwrap(),
//!         ..Scope::default()
//!     });
//!     // The same name on two machines, two kernels.
//!     s.run(&mut move |_, o| fprev::open(spec, o), &mut |_| {}, &mut |_| Ok(())).unwrap();
//!     s
//! };
//! let (a, b) = (survey("native:sequential"), survey("native:pairwise"));
//! let c = compare(&a, &b);
//! assert_eq!(c.entries[0].verdict, Agreement::Differ);
//! assert_eq!(c.entries[0].first_differing, Some(3));
//! assert_eq!(compare(&a, &a).entries[0].verdict, Agreement::Same);
//! ```

use serde::Serialize;

use super::{Entry, Machine, Survey, gpu};
use crate::spec::Spec;
use crate::variation::Variation;

/// What two surveys say of one black box in one dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agreement {
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

/// One of the two surveys compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The first.
    A,
    /// The second.
    B,
}

/// Why an entry has its verdict: the case, with what its words need
/// beyond the entry's other fields.
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    /// Its answers varied from call to call in one survey or both: what
    /// each saw, A's first.
    Varies([Seen; 2]),
    /// A survey failed at this black box: the error (A's where both
    /// failed).
    Failed(String),
    /// A side's model failed its check against the black box, so it
    /// gives no bits to compare.
    Refuted {
        /// The side (A where both failed).
        side: Side,
        /// The size checked.
        n: usize,
    },
    /// Some size gives other bits: [`EntryComparison::differing`], and
    /// where they part in its `rule`, `subtree` and `arithmetic`.
    Differ {
        /// The sizes both surveys visited, with a tree or not.
        visited: usize,
    },
    /// The same order at every size both cover with a tree, but at these
    /// a replay did not reproduce the bits, so they were not compared.
    Unconfirmed(Vec<usize>),
    /// No size has a tree in both surveys.
    NoTree,
    /// The same order and arithmetic, confirmed by replay, at every size
    /// both cover ([`EntryComparison::sizes`]).
    Same,
}

/// What one survey saw of a black box's answers from call to call.
#[derive(Clone, Debug, PartialEq)]
pub enum Seen {
    /// They varied.
    Varied {
        /// The sizes where they varied on the black box's own thread
        /// count.
        sizes: Vec<usize>,
        /// Each `(n, thread count)` where they varied as thread counts
        /// were compared.
        threads: Vec<(usize, usize)>,
        /// The widest spread among them.
        widest: Box<Variation>,
    },
    /// They gave the same bits on every call.
    Held {
        /// The calls of each input at the largest size, where the survey
        /// looked for variation on purpose (`None`: it did not).
        runs: Option<usize>,
    },
}

/// How the thread count changes a black box's tree in each survey, where
/// both compared counts and found it changing the tree at other sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadDifference {
    /// The counts each compared, A's first.
    pub counts: [Vec<usize>; 2],
    /// The sizes whose tree each found depending on the count.
    pub dependent: [Vec<usize>; 2],
}

/// One black box and dtype in both surveys.
#[derive(Clone, Debug)]
pub struct EntryComparison {
    /// The black box.
    pub spec: String,
    /// Its dtype.
    pub dtype: String,
    /// The verdict.
    pub verdict: Agreement,
    /// The sizes both cover with a tree.
    pub sizes: Vec<usize>,
    /// The sizes whose bits differ.
    pub differing: Vec<usize>,
    /// The first of them.
    pub first_differing: Option<usize>,
    /// Why.
    pub reason: Reason,
    /// The first rule of the formulas that differs: `(from n, here,
    /// there)`.
    pub rule: Option<(usize, String, String)>,
    /// At the first size whose trees differ: the smallest subtree each
    /// side has that the other lacks.
    pub subtree: Option<[String; 2]>,
    /// That size (after sizes of other arithmetic, it may be past the
    /// first differing).
    pub subtree_at: Option<usize>,
    /// Where the trees agree but the arithmetic parts: `(n, where)`.
    pub arithmetic: Option<(usize, String)>,
    /// How the thread counts' effect differs, where both compared them.
    pub threads: Option<ThreadDifference>,
    /// Machine facts that differ and bear on this black box: `(fact, A,
    /// B)`.
    pub suspects: Vec<(String, String, String)>,
    /// Knobs either survey found changing this black box, where their
    /// values on the two machines explain a difference or leave the same
    /// bits unpinned.
    pub knobs: Vec<KnobNote>,
    /// B's black box, where it is another name: the instruction of
    /// another GPU that takes and gives the same types.
    pub spec_b: Option<String>,
    /// Of two simulated GPU instructions: what each computes, and how
    /// they differ.
    pub gpu: Option<GpuChange>,
}

/// What two simulated GPUs' instructions of one kind compute
/// ([`gpu::Arithmetic`]), and the aspects in which they differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GpuChange {
    /// The instructions' input and result types (`f16`, `f32`).
    pub types: (String, String),
    /// A's arithmetic; `None` where no model of it was confirmed.
    pub a: Option<gpu::Arithmetic>,
    /// B's.
    pub b: Option<gpu::Arithmetic>,
    /// Where both have one: the aspects that differ (none: the same
    /// arithmetic).
    pub changed: Vec<gpu::Aspect>,
}

impl GpuChange {
    /// Of two entries, where both are simulated GPU instructions.
    fn of(a: &Entry, b: &Entry) -> Option<GpuChange> {
        let x = crate::spec::Instruction::parse(&a.spec)?;
        crate::spec::Instruction::parse(&b.spec)?;
        let (p, q) = (gpu::Arithmetic::of(a), gpu::Arithmetic::of(b));
        let changed = match (&p, &q) {
            (Some(p), Some(q)) => p.differences(q),
            _ => Vec::new(),
        };
        Some(GpuChange {
            types: x.kind(),
            a: p,
            b: q,
            changed,
        })
    }
}

/// A knob a survey recorded as changing a black box, and its values on
/// the two machines: where the bits differ, one set otherwise (the likely
/// cause, to pin); where they are the same, one unset or set otherwise (to
/// pin to keep them so).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnobNote {
    /// The environment variable, or `threads`.
    pub knob: String,
    /// Its value on A (`None`: unset; for `threads`, no thread variable
    /// of the library set).
    pub a: Option<String>,
    /// Its value on B.
    pub b: Option<String>,
    /// Whether the values differ, so the knob explains a difference.
    pub differs: bool,
    /// The size at which a survey found it changing the order.
    pub n: usize,
    /// Each machine's cores, which a thread count left to itself follows.
    pub cores: [usize; 2],
}

impl EntryComparison {
    /// The machine facts to show as the likely reason: the suspects,
    /// where the black box's bits are not the same and no knob set
    /// otherwise on the two machines explains it.
    pub fn likely_why(&self) -> &[(String, String, String)] {
        let explained = self.knobs.iter().any(|k| k.differs);
        match self.verdict == Agreement::Same || explained {
            true => &[],
            false => &self.suspects,
        }
    }
}

/// Two surveys compared.
#[derive(Clone, Debug)]
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
        self.entries.iter().all(|e| e.verdict == Agreement::Same)
    }

    /// How many entries have `verdict`.
    pub fn count(&self, verdict: Agreement) -> usize {
        self.entries.iter().filter(|e| e.verdict == verdict).count()
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
            let y = counterpart(x, b)?;
            let mut c = compare_entry([x, y], [a, b], &machine);
            c.knobs = knob_notes([x, y], [&a.machine, &b.machine], c.verdict);
            c.spec_b = (y.spec != x.spec).then(|| y.spec.clone());
            c.gpu = GpuChange::of(x, y);
            Some(c)
        })
        .collect();
    let only = |p: &Survey, q: &Survey| {
        p.entries
            .iter()
            .filter(|e| counterpart(e, q).is_none())
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

/// The entry of `survey` that `e` is compared with: the same black box
/// in the same dtype; for a simulated GPU's instruction, the one of
/// another architecture that takes and gives the same types (the first
/// such), as a GEMM moved from one GPU to another runs it.
fn counterpart<'a>(e: &Entry, survey: &'a Survey) -> Option<&'a Entry> {
    survey.entry(&e.spec, &e.dtype).or_else(|| {
        let kind = crate::spec::Instruction::parse(&e.spec)?;
        survey.entries.iter().find(|y| {
            y.dtype == e.dtype
                && crate::spec::Instruction::parse(&y.spec)
                    .is_some_and(|i| i.arch != kind.arch && i.kind() == kind.kind())
        })
    })
}

fn compare_entry(
    [a, b]: [&Entry; 2],
    surveys: [&Survey; 2],
    machine: &[(String, String, String)],
) -> EntryComparison {
    let mut c = EntryComparison {
        spec: a.spec.clone(),
        dtype: a.dtype.clone(),
        verdict: Agreement::Same,
        sizes: Vec::new(),
        differing: Vec::new(),
        first_differing: None,
        reason: Reason::Same,
        rule: None,
        subtree: None,
        subtree_at: None,
        arithmetic: None,
        threads: thread_difference(a, b),
        suspects: suspects(&a.spec, machine),
        knobs: Vec::new(),
        spec_b: None,
        gpu: None,
    };
    if !a.variations().is_empty() || !b.variations().is_empty() {
        c.verdict = Agreement::Varies;
        c.reason =
            Reason::Varies([(a, surveys[0]), (b, surveys[1])].map(|(e, s)| seen(e, s.scope.runs)));
        return c;
    }
    if let Some(why) = [a, b].iter().find_map(|e| e.error.as_ref()) {
        c.verdict = Agreement::Unknown;
        c.reason = Reason::Failed(why.clone());
        return c;
    }
    // A model its check refuted gives no bits to compare.
    let refuted = |e: &Entry| e.check.as_ref().filter(|k| !k.passed).map(|k| k.n);
    if let Some((side, n)) = [(Side::A, a), (Side::B, b)]
        .into_iter()
        .find_map(|(side, e)| Some((side, refuted(e)?)))
    {
        c.verdict = Agreement::Unknown;
        c.reason = Reason::Refuted { side, n };
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
                c.subtree_at = Some(x.n);
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
    if c.first_differing.is_some() {
        c.verdict = Agreement::Differ;
        c.reason = Reason::Differ { visited: common };
    } else if !unconfirmed.is_empty() {
        c.verdict = Agreement::Unknown;
        c.reason = Reason::Unconfirmed(unconfirmed);
    } else if c.sizes.is_empty() {
        c.verdict = Agreement::Unknown;
        c.reason = Reason::NoTree;
    }
    c
}

/// What a survey saw of `e`'s answers from call to call, having looked
/// for variation on purpose with `runs` calls of each input: where they
/// varied, and the widest spread.
fn seen(e: &Entry, runs: usize) -> Seen {
    let found = e.variations();
    let widest = found
        .iter()
        .map(|(_, _, v)| *v)
        .max_by(|v, w| v.spread_ulps.total_cmp(&w.spread_ulps));
    let Some(widest) = widest else {
        return Seen::Held {
            runs: (runs > 1).then_some(runs),
        };
    };
    Seen::Varied {
        sizes: found
            .iter()
            .filter(|(_, t, _)| t.is_none())
            .map(|(n, _, _)| *n)
            .collect(),
        threads: found
            .iter()
            .filter_map(|(n, t, _)| Some((*n, (*t)?)))
            .collect(),
        widest: Box::new(widest.clone()),
    }
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
fn thread_difference(a: &Entry, b: &Entry) -> Option<ThreadDifference> {
    let (x, y) = (a.threads.as_ref()?, b.threads.as_ref()?);
    if x.dependent == y.dependent || x.error.is_some() || y.error.is_some() {
        return None;
    }
    Some(ThreadDifference {
        counts: [x.counts.clone(), y.counts.clone()],
        dependent: [x.dependent.clone(), y.dependent.clone()],
    })
}

/// The machine facts of `machine` that bear on `spec`: the CPU, its
/// library's own facts, and the environment variables that steer it.
fn suspects(spec: &str, machine: &[(String, String, String)]) -> Vec<(String, String, String)> {
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
    let variables = crate::spec::profile(prefix).steering;
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
        .cloned()
        .collect()
}

/// The knobs either survey found changing the black box of `entries` (A's
/// first, each once, at the size found), with their values on
/// `machines`: where its bits are not the same, those set otherwise on
/// the two (the likely cause, to pin); where they are, those unset or set
/// otherwise (the same bits by luck of the setting, to pin to keep so).
fn knob_notes(entries: [&Entry; 2], machines: [&Machine; 2], verdict: Agreement) -> Vec<KnobNote> {
    let mut changing: Vec<(&str, usize)> = Vec::new();
    for k in entries.iter().flat_map(|e| e.knobs.iter().flatten()) {
        if k.changes && !changing.iter().any(|(name, _)| *name == k.name) {
            changing.push((&k.name, k.n));
        }
    }
    let mut notes = Vec::new();
    for (name, n) in changing {
        let [a, b] = machines.map(|m| knob_value(m, name, entries));
        let cores = machines.map(|m| m.cores);
        // Left to itself, a thread count follows the cores.
        let differs = a != b || (name == "threads" && a.is_none() && cores[0] != cores[1]);
        // Set alike on both, it explains no difference; where the bits
        // are the same, only unset does it leave them unpinned.
        let pinned = a.is_some() || verdict != Agreement::Same;
        if !differs && pinned {
            continue;
        }
        notes.push(KnobNote {
            knob: name.to_string(),
            a,
            b,
            differs,
            n,
            cores,
        });
    }
    notes
}

/// The value of knob `name` on `machine`: an environment variable's, as
/// recorded; for `threads`, the first thread variable of the library's
/// knobs set there (`OPENBLAS_NUM_THREADS=1`).
fn knob_value(machine: &Machine, name: &str, entries: [&Entry; 2]) -> Option<String> {
    if name != "threads" {
        return machine.environment.get(name).cloned();
    }
    entries
        .iter()
        .flat_map(|e| e.knobs.iter().flatten())
        .filter(|k| k.name.ends_with("_NUM_THREADS"))
        .find_map(|k| {
            let v = machine.environment.get(&k.name)?;
            Some(format!("{}={v}", k.name))
        })
}

/// One side of [`Difference::texts`](crate::tree::Difference::texts),
/// cut to a readable length.
fn side(text: Option<String>) -> String {
    text.map_or("nothing the other lacks".to_string(), |t| {
        crate::error::abbreviated(&t)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Format;
    use crate::probe::ProbeOptions;
    use crate::workflow::survey::Scope;

    /// A survey of one black box, `spec` adding in `acc`, under one name.
    fn surveyed(spec: &'static str, acc: Format) -> Survey {
        let mut s = Survey::new(Scope {
            black_boxes: vec!["native:sum".into()],
            dtypes: vec![Format::F32],
            sizes: "1..10".parse().unwrap(),
            threads: Vec::new(),
            ..Scope::default()
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
            Agreement::Differ,
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
        assert_eq!(e.reason, Reason::Differ { visited: 10 });
    }

    #[test]
    fn other_order_names_the_first_rule_and_subtree() {
        let a = surveyed("native:strided:4", Format::F32);
        let b = surveyed("native:strided:2", Format::F32);
        let e = &compare(&a, &b).entries[0];
        assert_eq!(e.verdict, Agreement::Differ);
        // Up to 2 summands both are one addition; strided:2 parts at 3.
        assert_eq!(e.first_differing, Some(3));
        assert_eq!(e.rule, Some((1, "strided:4".into(), "strided:2".into())));
        assert_eq!(e.subtree, Some(["(1+2)".to_string(), "(0+2)".to_string()]));
        // Every size from 3 on differs, and only those.
        assert_eq!(e.differing, (3..=10).collect::<Vec<_>>());
    }

    #[test]
    fn a_black_box_that_varied_in_either_survey_is_never_the_same() {
        use crate::workflow::survey::file::tests::surveyed_as;
        let varying = surveyed_as(None);
        let fixed = surveyed_as(Some("native:pairwise"));
        for (a, b) in [(&varying, &fixed), (&fixed, &varying), (&varying, &varying)] {
            let c = compare(a, b);
            let e = &c.entries[0];
            assert_eq!(e.verdict, Agreement::Varies, "{e:?}");
            assert!(!c.all_same());
            let Reason::Varies(seen) = &e.reason else {
                panic!("{e:?}")
            };
            for (side, seen) in [a, b].iter().zip(seen) {
                let varied = !side.entries[0].variations().is_empty();
                assert_eq!(matches!(seen, Seen::Varied { .. }), varied, "{seen:?}");
            }
        }
        assert_eq!(compare(&fixed, &fixed).entries[0].verdict, Agreement::Same);
    }

    /// `s` with a knob record on its entry and `value` of the variable.
    fn knobbed(s: &Survey, changes: bool, value: Option<&str>) -> Survey {
        let mut s = s.clone();
        s.entries[0].knobs = Some(vec![crate::workflow::survey::KnobCheck {
            name: "OPENBLAS_CORETYPE".into(),
            values: vec!["Haswell".into(), "Prescott".into()],
            n: 10,
            changes,
            outcomes: vec!["sequential".into(), "pairwise".into()],
            error: None,
        }]);
        s.machine.environment.remove("OPENBLAS_CORETYPE");
        if let Some(v) = value {
            s.machine
                .environment
                .insert("OPENBLAS_CORETYPE".into(), v.into());
        }
        s
    }

    #[test]
    fn a_changing_knob_set_otherwise_is_named_instead_of_the_suspects() {
        let (x, y) = (
            surveyed("native:sequential", Format::F32),
            surveyed("native:pairwise", Format::F32),
        );
        // Recorded by B's survey only: it still explains.
        let (a, b) = (knobbed(&x, false, Some("Haswell")), knobbed(&y, true, None));
        let e = &compare(&a, &b).entries[0];
        assert_eq!(e.verdict, Agreement::Differ);
        assert_eq!(e.knobs.len(), 1, "{e:?}");
        let k = &e.knobs[0];
        assert_eq!((k.a.as_deref(), k.b.as_deref()), (Some("Haswell"), None));
        assert!(
            k.differs && k.knob == "OPENBLAS_CORETYPE" && k.n == 10,
            "{k:?}"
        );
        assert!(e.likely_why().is_empty());
        // The same value on both explains nothing: the suspects stand.
        let (a, b) = (
            knobbed(&x, true, Some("Haswell")),
            knobbed(&y, true, Some("Haswell")),
        );
        let e = &compare(&a, &b).entries[0];
        assert!(e.knobs.is_empty(), "{e:?}");
        assert_eq!(e.likely_why(), e.suspects.as_slice());
        // A knob that changed nothing is never named.
        let (a, b) = (
            knobbed(&x, false, Some("Haswell")),
            knobbed(&y, false, None),
        );
        assert!(compare(&a, &b).entries[0].knobs.is_empty());
    }

    #[test]
    fn the_same_bits_under_an_unpinned_knob_say_to_pin_it() {
        let x = surveyed("native:sequential", Format::F32);
        let unset = knobbed(&x, true, None);
        let e = &compare(&unset, &unset).entries[0];
        assert_eq!(e.verdict, Agreement::Same);
        assert_eq!(e.knobs.len(), 1);
        assert!(!e.knobs[0].differs && e.knobs[0].a.is_none() && e.knobs[0].b.is_none());
        // Pinned to one value on both: nothing to say.
        let pinned = knobbed(&x, true, Some("Haswell"));
        assert!(compare(&pinned, &pinned).entries[0].knobs.is_empty());
        // Set otherwise, the same bits all the same.
        let other = knobbed(&x, true, Some("Prescott"));
        let e = &compare(&pinned, &other).entries[0];
        assert_eq!(e.verdict, Agreement::Same);
        assert!(e.knobs[0].differs, "{e:?}");
    }

    #[test]
    fn a_thread_count_left_to_itself_follows_the_cores() {
        let (x, y) = (
            surveyed("native:sequential", Format::F32),
            surveyed("native:pairwise", Format::F32),
        );
        let with = |s: &Survey, cores: usize, pinned: Option<&str>| {
            let mut s = s.clone();
            let knob = |name: &str, changes| crate::workflow::survey::KnobCheck {
                name: name.into(),
                values: vec!["1".into(), "2".into()],
                n: 10,
                changes,
                outcomes: vec!["sequential".into(), "pairwise".into()],
                error: None,
            };
            s.entries[0].knobs = Some(vec![
                knob("OPENBLAS_NUM_THREADS", false),
                knob("threads", true),
            ]);
            s.machine.cores = cores;
            s.machine.environment.remove("OPENBLAS_NUM_THREADS");
            if let Some(v) = pinned {
                s.machine
                    .environment
                    .insert("OPENBLAS_NUM_THREADS".into(), v.into());
            }
            s
        };
        let e = &compare(&with(&x, 2, None), &with(&y, 16, None)).entries[0];
        assert_eq!(e.knobs.len(), 1, "{e:?}");
        let k = &e.knobs[0];
        assert_eq!((k.knob.as_str(), &k.a, &k.b), ("threads", &None, &None));
        assert!(k.differs && k.cores == [2, 16], "{k:?}");
        // The library's thread variable set alike on both pins it.
        let e = &compare(&with(&x, 2, Some("1")), &with(&y, 16, Some("1"))).entries[0];
        assert!(e.knobs.is_empty(), "{e:?}");
        let e = &compare(&with(&x, 2, Some("1")), &with(&y, 2, None)).entries[0];
        assert_eq!(e.knobs[0].a.as_deref(), Some("OPENBLAS_NUM_THREADS=1"));
        assert!(e.knobs[0].differs);
    }

    #[test]
    fn a_failed_or_unconfirmed_side_is_never_called_the_same() {
        let a = surveyed("native:pairwise", Format::F32);
        let mut b = a.clone();
        b.entries[0].error = Some("the black box crashed".into());
        let e = &compare(&a, &b).entries[0];
        assert_eq!(e.verdict, Agreement::Unknown);
        assert_eq!(e.reason, Reason::Failed("the black box crashed".into()));
        let mut c = a.clone();
        c.entries[0].sizes[5].outcome = "unconfirmed".into();
        c.entries[0].sizes[5].arithmetic = None;
        let cmp = compare(&a, &c);
        assert_eq!(cmp.entries[0].verdict, Agreement::Unknown);
        assert_eq!(cmp.entries[0].reason, Reason::Unconfirmed(vec![6]));
        assert!(!cmp.all_same());
        assert!(compare(&a, &a).all_same());
    }
}
