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
//! once match by luck.
//!
//! ```
//! use fprev::workflow::survey::{Plan, Survey, compare::{Agreement, compare}};
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
//! assert_eq!(c.entries[0].verdict, Agreement::Differ);
//! assert_eq!(c.entries[0].first_differing, Some(3));
//! assert_eq!(compare(&a, &a).entries[0].verdict, Agreement::Same);
//! ```

use serde::Serialize;

use super::{Entry, Machine, Survey, gpu, side};
use crate::error::abbreviated;
use crate::spec::Spec;

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

/// One black box and dtype in both surveys.
#[derive(Clone, Debug, Serialize)]
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
    /// Why, in one line.
    pub reason: String,
    /// The first rule of the formulas that differs: `(from n, here,
    /// there)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<(usize, String, String)>,
    /// At the first size whose trees differ: the smallest subtree each
    /// side has that the other lacks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtree: Option<[String; 2]>,
    /// That size (after sizes of other arithmetic, it may be past the
    /// first differing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtree_at: Option<usize>,
    /// Where the trees agree but the arithmetic parts: `(n, where)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arithmetic: Option<(usize, String)>,
    /// How the thread counts' effect differs, where both compared them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<String>,
    /// Machine facts that differ and bear on this black box.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suspects: Vec<String>,
    /// Knobs either survey found changing this black box, where their
    /// values on the two machines explain a difference or leave the same
    /// bits unpinned.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub knobs: Vec<KnobNote>,
    /// For `varies`: what each survey saw of its answers from call to
    /// call, A's first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub varies: Option<[String; 2]>,
    /// B's black box, where it is another name: the instruction of
    /// another GPU that takes and gives the same types.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_b: Option<String>,
    /// Of two simulated GPU instructions: what each computes, and how
    /// they differ.
    #[serde(skip_serializing_if = "Option::is_none")]
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
/// the two machines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
    /// What to do, in one line.
    pub note: String,
}

impl EntryComparison {
    /// The machine facts to show as the likely reason: the suspects,
    /// where the black box's bits are not the same and no knob set
    /// otherwise on the two machines explains it.
    pub fn likely_why(&self) -> &[String] {
        let explained = self.knobs.iter().any(|k| k.differs);
        match self.verdict == Agreement::Same || explained {
            true => &[],
            false => &self.suspects,
        }
    }
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
        self.entries.iter().all(|e| e.verdict == Agreement::Same)
    }

    /// How many entries have `verdict`.
    pub fn count(&self, verdict: Agreement) -> usize {
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
        reason: String::new(),
        rule: None,
        subtree: None,
        subtree_at: None,
        arithmetic: None,
        threads: thread_difference(a, b),
        suspects: suspects(&a.spec, machine),
        knobs: Vec::new(),
        varies: None,
        spec_b: None,
        gpu: None,
    };
    if !a.variations().is_empty() || !b.variations().is_empty() {
        let [x, y] = [(a, surveys[0]), (b, surveys[1])].map(|(e, s)| seen(e, s.plan.runs));
        c.verdict = Agreement::Varies;
        c.reason = format!("varies from call to call: A {x}; B {y}");
        c.varies = Some([x, y]);
        return c;
    }
    if let Some(why) = [a, b].iter().find_map(|e| e.error.as_deref()) {
        c.verdict = Agreement::Unknown;
        c.reason = format!("not compared: a survey failed here ({})", abbreviated(why));
        return c;
    }
    // A model its check refuted gives no bits to compare.
    let refuted = |e: &Entry| e.check.as_ref().filter(|k| !k.passed).map(|k| k.n);
    if let Some((side, n)) = [("A", a), ("B", b)]
        .iter()
        .find_map(|(side, e)| Some((side, refuted(e)?)))
    {
        c.verdict = Agreement::Unknown;
        c.reason = format!(
            "not compared: {side}'s model failed its check against the black box at n = {n}"
        );
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
    let covered = crate::sizes::runs(&c.sizes);
    if let Some(n) = c.first_differing {
        c.verdict = Agreement::Differ;
        let share = format!("{} of {common} sizes", c.differing.len());
        c.reason = match (&c.subtree, &c.arithmetic, &c.rule) {
            // Other arithmetic first (two GPUs' fused windows), then
            // other order where the trees part.
            (Some(_), Some((m, at)), Some((from, x, y))) => format!(
                "different arithmetic at {share} from n = {m}: {at}; and other order from n = \
                 {}: the formulas part from n = {from}, {} against {}",
                c.subtree_at.unwrap_or(n),
                abbreviated(x),
                abbreviated(y)
            ),
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
        c.verdict = Agreement::Unknown;
        c.reason = format!(
            "same order at n = {covered}, but at n = {} a replay did not reproduce the bits, \
             so they were not compared",
            crate::sizes::runs(&unconfirmed)
        );
    } else if c.sizes.is_empty() {
        c.verdict = Agreement::Unknown;
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
        .map(|(fact, x, y)| change(fact, x, y))
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
    let spec = &entries[0].spec;
    let mut notes = Vec::new();
    for (name, n) in changing {
        let [a, b] = machines.map(|m| knob_value(m, name, entries));
        let cores = machines.map(|m| m.cores);
        // Left to itself, a thread count follows the cores.
        let differs = a != b || (name == "threads" && a.is_none() && cores[0] != cores[1]);
        let shown = |v: &Option<String>, cores: usize| match (v, name) {
            (Some(v), _) => v.clone(),
            (None, "threads") => format!("its default on {cores} cores"),
            (None, _) => "unset".into(),
        };
        let (x, y) = (shown(&a, cores[0]), shown(&b, cores[1]));
        let what = match name {
            "threads" => "the thread count".to_string(),
            _ => name.to_string(),
        };
        let note = match (verdict, differs) {
            (Agreement::Same, false) if a.is_some() => continue,
            (Agreement::Same, false) => format!(
                "same here, but {what} changes it (at n = {n}) and is {x} on both: pin {what} to \
                 keep it so"
            ),
            (Agreement::Same, true) => format!(
                "same here, though {what} differs ({x} on A, {y} on B) and changes it (at n = \
                 {n}): pin {what} to keep it so"
            ),
            (_, false) => continue,
            (_, true) => format!(
                "{what} differs ({x} on A, {y} on B) and changes {spec} (at n = {n}): pin it"
            ),
        };
        notes.push(KnobNote {
            knob: name.to_string(),
            a,
            b,
            differs,
            n,
            note,
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

/// `fact: here -> there`, each side cut to a readable length.
pub fn change(fact: &str, here: &str, there: &str) -> String {
    format!("{fact}: {} -> {}", abbreviated(here), abbreviated(there))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Format;
    use crate::probe::ProbeOptions;
    use crate::workflow::survey::Plan;

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
        assert_eq!(
            k.note,
            "OPENBLAS_CORETYPE differs (Haswell on A, unset on B) and changes native:sum \
             (at n = 10): pin it"
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
        assert!(!e.knobs[0].differs);
        assert!(
            e.knobs[0]
                .note
                .starts_with("same here, but OPENBLAS_CORETYPE changes it"),
            "{}",
            e.knobs[0].note
        );
        // Pinned to one value on both: nothing to say.
        let pinned = knobbed(&x, true, Some("Haswell"));
        assert!(compare(&pinned, &pinned).entries[0].knobs.is_empty());
        // Set otherwise, the same bits all the same.
        let other = knobbed(&x, true, Some("Prescott"));
        let e = &compare(&pinned, &other).entries[0];
        assert_eq!(e.verdict, Agreement::Same);
        assert!(
            e.knobs[0]
                .note
                .starts_with("same here, though OPENBLAS_CORETYPE differs")
        );
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
        assert_eq!(
            e.knobs[0].note,
            "the thread count differs (its default on 2 cores on A, its default on 16 cores \
             on B) and changes native:sum (at n = 10): pin it"
        );
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
        let mut c = a.clone();
        c.entries[0].sizes[5].outcome = "unconfirmed".into();
        c.entries[0].sizes[5].arithmetic = None;
        let cmp = compare(&a, &c);
        assert_eq!(cmp.entries[0].verdict, Agreement::Unknown);
        assert!(!cmp.all_same());
        assert!(compare(&a, &a).all_same());
    }
}
