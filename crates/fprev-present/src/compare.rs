//! A comparison of two surveys for people (`fprev compare`'s output): the
//! machine facts that differ, each black box's verdict and why (a knob set
//! otherwise that changes it, or else the facts that bear on it), and the
//! counts, in text and as JSON; and the words of each typed reason and
//! note, which the HTML page shows too.

use fprev::error::abbreviated;
use fprev::sizes::runs;
use fprev::workflow::survey::compare::{
    Agreement, Comparison, EntryComparison, GpuChange, KnobNote, Reason, Seen, Side,
    ThreadDifference,
};
use fprev::workflow::survey::gpu::{Arithmetic, Aspect};
use serde::Serialize;

/// What `fprev compare` prints for people, with `a` and `b` naming the
/// surveys.
pub fn text(c: &Comparison, a: &str, b: &str) -> String {
    let mut out = format!("A: {a}\nB: {b}\n");
    if c.machine.is_empty() {
        out += "the machines' recorded facts are the same\n";
    } else {
        out += "the machines differ in:\n";
        for (fact, x, y) in &c.machine {
            out += &format!("  {}\n", change(fact, x, y));
        }
    }
    out += "\n";
    for e in &c.entries {
        let word = match e.verdict {
            Agreement::Same => "same",
            Agreement::Differ => "DIFFERENT",
            Agreement::Unknown => "UNKNOWN",
            Agreement::Varies => "VARIES",
        };
        let against = e
            .spec_b
            .as_ref()
            .map_or(String::new(), |b| format!(" against {b}"));
        out += &format!("{} {}{against}: {word}: {}\n", e.spec, e.dtype, reason(e));
        if let Some(g) = &e.gpu {
            out += &format!("    {}\n", gpu_change(g));
        }
        if let (Some([x, y]), Some(_)) = (&e.subtree, &e.rule) {
            out += &format!(
                "    at n = {}: A has {x}, B has {y}\n",
                e.subtree_at.or(e.first_differing).unwrap_or(0)
            );
        }
        if let Some(t) = &e.threads {
            out += &format!("    {}\n", threads(t));
        }
        for k in &e.knobs {
            out += &format!("    {}\n", knob_note(e, k));
        }
        let why = likely_why(e);
        if !why.is_empty() {
            out += &format!("    likely why: {}\n", why.join("; "));
        }
    }
    for (side, list) in [("A", &c.only_a), ("B", &c.only_b)] {
        if !list.is_empty() {
            out += &format!(
                "surveyed by {side} only (not compared): {}\n",
                list.join(", ")
            );
        }
    }
    out += &format!(
        "\n{} same, {} different, {} unknown",
        c.count(Agreement::Same),
        c.count(Agreement::Differ),
        c.count(Agreement::Unknown)
    );
    match c.count(Agreement::Varies) {
        0 => out += "\n",
        k => out += &format!(", {k} varying from call to call\n"),
    }
    out
}

/// Why `e` has its verdict, in one line.
pub fn reason(e: &EntryComparison) -> String {
    let covered = runs(&e.sizes);
    match &e.reason {
        Reason::Varies([x, y]) => format!("varies from call to call: A {}; B {}", seen(x), seen(y)),
        Reason::Failed(why) => format!("not compared: a survey failed here ({})", abbreviated(why)),
        Reason::Refuted { side, n } => format!(
            "not compared: {}'s model failed its check against the black box at n = {n}",
            side_name(*side)
        ),
        Reason::Differ { visited } => {
            let n = e.first_differing.unwrap_or(0);
            let share = format!("{} of {visited} sizes", e.differing.len());
            match (&e.subtree, &e.arithmetic, &e.rule) {
                // Other arithmetic first (two GPUs' fused windows), then
                // other order where the trees part.
                (Some(_), Some((m, at)), Some((from, x, y))) => format!(
                    "different arithmetic at {share} from n = {m}: {at}; and other order from \
                     n = {}: the formulas part from n = {from}, {} against {}",
                    e.subtree_at.unwrap_or(n),
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
                    format!(
                        "other order at {share} from n = {n}: the trees part at {x} against {y}"
                    )
                }
                (None, Some((m, at)), _) => {
                    format!("same order, different arithmetic at {share} from n = {m}: {at}")
                }
                _ => format!("other outcome at n = {n}"),
            }
        }
        Reason::Unconfirmed(sizes) => format!(
            "same order at n = {covered}, but at n = {} a replay did not reproduce the bits, so \
             they were not compared",
            runs(sizes)
        ),
        Reason::NoTree => "no size with a tree in both surveys".into(),
        Reason::Same => format!(
            "same bits: the same order and arithmetic, confirmed by replay, at n = {covered}"
        ),
    }
}

/// What one survey saw of a black box's answers from call to call: where
/// they varied and the widest spread, or that they held.
fn seen(s: &Seen) -> String {
    match s {
        Seen::Varied {
            sizes,
            threads,
            widest,
        } => {
            let mut at: Vec<String> = Vec::new();
            if !sizes.is_empty() {
                at.push(runs(sizes));
            }
            at.extend(threads.iter().map(|(n, t)| format!("{n} on {t} thread(s)")));
            format!(
                "varied at n = {}: {}",
                at.join(", "),
                crate::note::variation(widest)
            )
        }
        Seen::Held { runs: Some(runs) } => format!(
            "gave the same bits on every call (up to {runs} calls of each input at its largest \
             size)"
        ),
        Seen::Held { runs: None } => {
            "gave the same bits on every call it made (not looked for on purpose)".into()
        }
    }
}

/// How the thread counts' effect differs between the two surveys.
pub fn threads(t: &ThreadDifference) -> String {
    let counts = |c: &[usize]| {
        c.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(" vs ")
    };
    let says = |d: &[usize]| match d.is_empty() {
        true => "at no size".to_string(),
        false => format!("at n = {}", runs(d)),
    };
    format!(
        "the thread count ({} against {}) changes the tree {} here, {} there",
        counts(&t.counts[0]),
        counts(&t.counts[1]),
        says(&t.dependent[0]),
        says(&t.dependent[1])
    )
}

/// What to do about knob `k` of entry `e`, in one line: where the bits
/// differ, pin the knob set otherwise; where they are the same, pin it to
/// keep them so.
pub fn knob_note(e: &EntryComparison, k: &KnobNote) -> String {
    let threads = k.knob == "threads";
    let shown = |v: &Option<String>, cores: usize| match (v, threads) {
        (Some(v), _) => v.clone(),
        (None, true) => format!("its default on {cores} cores"),
        (None, false) => "unset".into(),
    };
    let (x, y) = (shown(&k.a, k.cores[0]), shown(&k.b, k.cores[1]));
    let what = match threads {
        true => "the thread count",
        false => k.knob.as_str(),
    };
    let n = k.n;
    match (e.verdict == Agreement::Same, k.differs) {
        (true, false) => format!(
            "same here, but {what} changes it (at n = {n}) and is {x} on both: pin {what} to keep \
             it so"
        ),
        (true, true) => format!(
            "same here, though {what} differs ({x} on A, {y} on B) and changes it (at n = {n}): \
             pin {what} to keep it so"
        ),
        (false, _) => format!(
            "{what} differs ({x} on A, {y} on B) and changes {} (at n = {n}): pin it",
            e.spec
        ),
    }
}

/// `fact: here -> there`, each side cut to a readable length.
pub fn change(fact: &str, here: &str, there: &str) -> String {
    format!("{fact}: {} -> {}", abbreviated(here), abbreviated(there))
}

/// The machine facts to show as the likely reason for `e`'s verdict
/// ([`EntryComparison::likely_why`]), each as a [`change`].
pub fn likely_why(e: &EntryComparison) -> Vec<String> {
    e.likely_why()
        .iter()
        .map(|(fact, x, y)| change(fact, x, y))
        .collect()
}

/// A side's name: `A` or `B`.
fn side_name(side: Side) -> &'static str {
    match side {
        Side::A => "A",
        Side::B => "B",
    }
}

/// Whether results change between two GPUs' instructions of one kind, and
/// why: each aspect of their arithmetic that differs as `A → B`, the
/// others as the same in both; where either has no confirmed model, that
/// it cannot be told.
pub fn gpu_change(g: &GpuChange) -> String {
    let (inputs, output) = &g.types;
    let head = format!("{inputs} inputs into {output}");
    let (a, b) = match (&g.a, &g.b) {
        (Some(a), Some(b)) => (a, b),
        (a, b) => {
            let side = match (a, b) {
                (None, None) => "either's",
                (None, _) => "A's",
                _ => "B's",
            };
            return format!(
                "{head}: arithmetic not compared: no model of {side} was confirmed (not \
                 modelled)"
            );
        }
    };
    let mut changed = Vec::new();
    let mut same = Vec::new();
    // A fused step's window and alignment, where either fuses.
    let fused = a.fused_bits.is_some() || b.fused_bits.is_some();
    for aspect in [
        Aspect::Products,
        Aspect::FusedBits,
        Aspect::Rounding,
        Aspect::Output,
        Aspect::Alignment,
    ] {
        if !fused && matches!(aspect, Aspect::FusedBits | Aspect::Alignment) {
            continue;
        }
        let words = aspect_words(aspect, a, b);
        if g.changed.contains(&aspect) {
            changed.push(words);
        } else {
            same.push(words);
        }
    }
    let verdict = match changed.is_empty() {
        true => "results do not change: the same arithmetic".to_string(),
        false => format!("results change: {}", changed.join(", ")),
    };
    match same.is_empty() {
        true => format!("{head}: {verdict}"),
        false => format!("{head}: {verdict}; {}", same.join(", ")),
    }
}

/// One aspect of two instructions' arithmetic in words: `A → B` where they
/// differ, `X in both` where not.
fn aspect_words(aspect: Aspect, a: &Arithmetic, b: &Arithmetic) -> String {
    let both = |x: String, y: String, what: &str| match x == y {
        true => format!("{what} {x} in both"),
        false => format!("{what} {x} → {y}"),
    };
    match aspect {
        Aspect::Products => both(
            a.products.to_string(),
            b.products.to_string(),
            "products a step",
        ),
        Aspect::FusedBits => {
            let bits = |x: &Arithmetic| {
                x.fused_bits
                    .map_or("none (not fused)".into(), |f| f.to_string())
            };
            both(bits(a), bits(b), "bits kept")
        }
        Aspect::Rounding => both(
            a.rounding.name().replace('-', " "),
            b.rounding.name().replace('-', " "),
            "output rounding",
        ),
        Aspect::Output => both(a.output.to_string(), b.output.to_string(), "result in"),
        Aspect::Alignment => {
            let at = |x: &Arithmetic| match &x.aligns_factors {
                Some(f) => format!("at their {f} factors' exponents"),
                None => "at their own leading bits".into(),
            };
            both(at(a), at(b), "products aligned")
        }
    }
}

/// The comparison as pretty JSON (`fprev compare --format json`): the
/// comparison's fields in order, with each entry's `reason`, each knob's
/// `note`, the `threads` line, the `suspects` and what each side saw where
/// it `varies` in words.
pub fn json(c: &Comparison) -> String {
    let json = ComparisonJson {
        machine: &c.machine,
        entries: c.entries.iter().map(EntryJson::of).collect(),
        only_a: &c.only_a,
        only_b: &c.only_b,
    };
    serde_json::to_string_pretty(&json).expect("a comparison serialises")
}

/// [`Comparison`] as its JSON has it.
#[derive(Serialize)]
struct ComparisonJson<'a> {
    machine: &'a [(String, String, String)],
    entries: Vec<EntryJson<'a>>,
    only_a: &'a [String],
    only_b: &'a [String],
}

/// [`EntryComparison`] as its JSON has it: the typed reason, thread
/// difference, suspects, knob notes and call-to-call variation in words.
#[derive(Serialize)]
struct EntryJson<'a> {
    spec: &'a str,
    dtype: &'a str,
    verdict: Agreement,
    sizes: &'a [usize],
    differing: &'a [usize],
    first_differing: Option<usize>,
    reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<&'a (usize, String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subtree: Option<&'a [String; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subtree_at: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arithmetic: Option<&'a (usize, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    threads: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suspects: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    knobs: Vec<KnobJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    varies: Option<[String; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    spec_b: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gpu: Option<&'a GpuChange>,
}

impl<'a> EntryJson<'a> {
    fn of(e: &'a EntryComparison) -> Self {
        EntryJson {
            spec: &e.spec,
            dtype: &e.dtype,
            verdict: e.verdict,
            sizes: &e.sizes,
            differing: &e.differing,
            first_differing: e.first_differing,
            reason: reason(e),
            rule: e.rule.as_ref(),
            subtree: e.subtree.as_ref(),
            subtree_at: e.subtree_at,
            arithmetic: e.arithmetic.as_ref(),
            threads: e.threads.as_ref().map(threads),
            suspects: e
                .suspects
                .iter()
                .map(|(fact, x, y)| change(fact, x, y))
                .collect(),
            knobs: e
                .knobs
                .iter()
                .map(|k| KnobJson {
                    knob: &k.knob,
                    a: k.a.as_deref(),
                    b: k.b.as_deref(),
                    differs: k.differs,
                    n: k.n,
                    note: knob_note(e, k),
                })
                .collect(),
            varies: match &e.reason {
                Reason::Varies(sides) => Some(sides.each_ref().map(seen)),
                _ => None,
            },
            spec_b: e.spec_b.as_deref(),
            gpu: e.gpu.as_ref(),
        }
    }
}

/// [`KnobNote`] as its JSON has it, with what to do in words.
#[derive(Serialize)]
struct KnobJson<'a> {
    knob: &'a str,
    a: Option<&'a str>,
    b: Option<&'a str>,
    differs: bool,
    n: usize,
    note: String,
}

#[cfg(test)]
mod tests {
    use fprev::variation::Variation;

    use super::*;

    /// An entry of `native:sum` f32 over n = 1..10 with `verdict` and
    /// `reason`, and nothing else said.
    fn entry(verdict: Agreement, reason: Reason) -> EntryComparison {
        EntryComparison {
            spec: "native:sum".into(),
            dtype: "f32".into(),
            verdict,
            sizes: (1..=10).collect(),
            differing: Vec::new(),
            first_differing: None,
            reason,
            rule: None,
            subtree: None,
            subtree_at: None,
            arithmetic: None,
            threads: None,
            suspects: Vec::new(),
            knobs: Vec::new(),
            spec_b: None,
            gpu: None,
        }
    }

    /// `e` differing from n = 3 on, of 10 sizes visited.
    fn differing(mut e: EntryComparison) -> EntryComparison {
        e.differing = (3..=10).collect();
        e.first_differing = Some(3);
        e
    }

    #[test]
    fn each_reason_is_one_line() {
        let same = entry(Agreement::Same, Reason::Same);
        assert_eq!(
            reason(&same),
            "same bits: the same order and arithmetic, confirmed by replay, at n = 1..10"
        );
        let unknown = |r| reason(&entry(Agreement::Unknown, r));
        assert_eq!(
            unknown(Reason::Failed("the black box crashed".into())),
            "not compared: a survey failed here (the black box crashed)"
        );
        assert_eq!(
            unknown(Reason::Refuted {
                side: Side::B,
                n: 8
            }),
            "not compared: B's model failed its check against the black box at n = 8"
        );
        assert_eq!(
            unknown(Reason::Unconfirmed(vec![6])),
            "same order at n = 1..10, but at n = 6 a replay did not reproduce the bits, so they \
             were not compared"
        );
        assert_eq!(
            unknown(Reason::NoTree),
            "no size with a tree in both surveys"
        );
    }

    #[test]
    fn a_difference_names_where_the_two_part() {
        let mut e = differing(entry(Agreement::Differ, Reason::Differ { visited: 10 }));
        assert_eq!(reason(&e), "other outcome at n = 3");
        e.arithmetic = Some((3, "node (0+1) computes f32 against f64".into()));
        assert_eq!(
            reason(&e),
            "same order, different arithmetic at 8 of 10 sizes from n = 3: node (0+1) computes \
             f32 against f64"
        );
        e.arithmetic = None;
        e.subtree = Some(["(1+2)".into(), "(0+2)".into()]);
        e.subtree_at = Some(3);
        assert_eq!(
            reason(&e),
            "other order at 8 of 10 sizes from n = 3: the trees part at (1+2) against (0+2)"
        );
        e.rule = Some((1, "strided:4".into(), "strided:2".into()));
        assert_eq!(
            reason(&e),
            "other order at 8 of 10 sizes from n = 3: the formulas part from n = 1, strided:4 \
             against strided:2"
        );
        e.arithmetic = Some((3, "node (0+1) computes f32 against f64".into()));
        e.subtree_at = Some(5);
        assert_eq!(
            reason(&e),
            "different arithmetic at 8 of 10 sizes from n = 3: node (0+1) computes f32 against \
             f64; and other order from n = 5: the formulas part from n = 1, strided:4 against \
             strided:2"
        );
    }

    #[test]
    fn a_varying_black_box_says_what_each_side_saw() {
        let widest = Variation {
            inputs: 4,
            runs: 3,
            varied: 2,
            most_distinct: 2,
            spread_ulps: 1.5,
            spread_relative: 1e-7,
            condition: 3.0,
            skeleton: None,
        };
        let varied = Seen::Varied {
            sizes: vec![5, 6, 9],
            threads: vec![(8, 2)],
            widest: Box::new(widest.clone()),
        };
        let e = entry(
            Agreement::Varies,
            Reason::Varies([varied, Seen::Held { runs: Some(3) }]),
        );
        assert_eq!(
            reason(&e),
            format!(
                "varies from call to call: A varied at n = 5,6,9, 8 on 2 thread(s): {}; B gave \
                 the same bits on every call (up to 3 calls of each input at its largest size)",
                crate::note::variation(&widest)
            )
        );
        assert_eq!(
            seen(&Seen::Held { runs: None }),
            "gave the same bits on every call it made (not looked for on purpose)"
        );
        let json: serde_json::Value = serde_json::from_str(&json(&Comparison {
            machine: Vec::new(),
            entries: vec![e],
            only_a: Vec::new(),
            only_b: Vec::new(),
        }))
        .unwrap();
        let sides = &json["entries"][0]["varies"];
        assert!(
            sides[0]
                .as_str()
                .unwrap()
                .starts_with("varied at n = 5,6,9")
        );
        assert!(sides[1].as_str().unwrap().starts_with("gave the same bits"));
    }

    /// A knob note on `e` of `knob`, set to `a` and `b`.
    fn knob(knob: &str, a: Option<&str>, b: Option<&str>, cores: [usize; 2]) -> KnobNote {
        KnobNote {
            knob: knob.into(),
            a: a.map(Into::into),
            b: b.map(Into::into),
            differs: a != b || cores[0] != cores[1],
            n: 10,
            cores,
        }
    }

    #[test]
    fn a_knob_note_says_what_to_pin() {
        let differ = differing(entry(Agreement::Differ, Reason::Differ { visited: 10 }));
        let same = entry(Agreement::Same, Reason::Same);
        let coretype = |a, b| knob("OPENBLAS_CORETYPE", a, b, [4, 4]);
        assert_eq!(
            knob_note(&differ, &coretype(Some("Haswell"), None)),
            "OPENBLAS_CORETYPE differs (Haswell on A, unset on B) and changes native:sum (at n \
             = 10): pin it"
        );
        assert_eq!(
            knob_note(&same, &coretype(None, None)),
            "same here, but OPENBLAS_CORETYPE changes it (at n = 10) and is unset on both: pin \
             OPENBLAS_CORETYPE to keep it so"
        );
        assert_eq!(
            knob_note(&same, &coretype(Some("Haswell"), Some("Prescott"))),
            "same here, though OPENBLAS_CORETYPE differs (Haswell on A, Prescott on B) and \
             changes it (at n = 10): pin OPENBLAS_CORETYPE to keep it so"
        );
        assert_eq!(
            knob_note(&differ, &knob("threads", None, None, [2, 16])),
            "the thread count differs (its default on 2 cores on A, its default on 16 cores on \
             B) and changes native:sum (at n = 10): pin it"
        );
        let mut e = differ;
        e.knobs = vec![coretype(Some("Haswell"), None)];
        e.suspects = vec![("cpu".into(), "x".into(), "y".into())];
        e.threads = Some(ThreadDifference {
            counts: [vec![1, 2], vec![1, 4]],
            dependent: [vec![], vec![64, 128]],
        });
        let c = Comparison {
            machine: e.suspects.clone(),
            entries: vec![e],
            only_a: Vec::new(),
            only_b: Vec::new(),
        };
        let out = text(&c, "a.json", "b.json");
        assert!(
            out.contains(
                "\n    the thread count (1 vs 2 against 1 vs 4) changes the tree at no size here, \
                 at n = 64,128 there\n    OPENBLAS_CORETYPE differs (Haswell on A"
            ),
            "{out}"
        );
        // A knob set otherwise explains the difference: no facts suspected.
        assert!(!out.contains("likely why"), "{out}");
        let json: serde_json::Value = serde_json::from_str(&json(&c)).unwrap();
        let e = &json["entries"][0];
        assert_eq!(
            e["knobs"][0]["note"],
            knob_note(&c.entries[0], &c.entries[0].knobs[0])
        );
        assert_eq!(e["suspects"][0], "cpu: x -> y");
        assert_eq!(e["reason"], reason(&c.entries[0]));
    }
}
