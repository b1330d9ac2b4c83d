//! A survey, and a comparison of two, as one self-contained HTML page:
//! inline styles and drawings (SVG by Graphviz's `dot`), no scripts, no
//! files beside it, so it can be mailed or kept as a CI artefact.
//!
//! The pages are askama templates (`templates/page.html`, `survey.html`,
//! `compare.html`), checked at compile time and escaping every value; the
//! code here only gathers what each cell says.

use std::collections::BTreeMap;

use askama::Template;
use fprev::arith::Arithmetic;
use fprev::sizes::runs;
use fprev::tree::SummationTree;
use fprev::workflow::survey::compare::{Agreement, Comparison, EntryComparison};
use fprev::workflow::survey::{Entry, KnobCheck, Status, Survey};

use crate::render::{Caption, DRAW_WHOLE, Drawing};

/// The largest size a survey page draws for an entry (collapsed past
/// [`DRAW_WHOLE`]).
pub const DRAWN_UP_TO: usize = 1024;

/// Past this many models, an entry's arithmetic cell names the one at the
/// largest size and lists the rest a click away.
const FEW_MODELS: usize = 3;

/// The page of `survey`: the machine, then one row per black box and
/// dtype with its formula in words ([`crate::formula::sentence`]), where
/// it changes, the arithmetic, the thread counts, and a drawing (where
/// `draw` and Graphviz allow).
pub fn survey_page(survey: &Survey, draw: bool) -> String {
    let page = SurveyPage {
        title: format!("fprev survey: {}", survey.machine.cpu),
        survey,
        facts: survey.machine.facts(),
        draw,
        rows: survey
            .entries
            .iter()
            .enumerate()
            // The first drawing open, the others a click away.
            .map(|(k, e)| Row::of(e, draw, k == 0))
            .collect(),
    };
    page.render().expect("a survey page renders") + "\n"
}

/// The page of a comparison of surveys `a` and `b` (named `names`): the
/// machine facts that differ, then each black box with its verdict and
/// why, and for one that differs, both trees at the first size where they
/// part.
pub fn compare_page(
    c: &Comparison,
    a: &Survey,
    b: &Survey,
    names: [&str; 2],
    draw: bool,
) -> String {
    let page = ComparePage {
        title: "fprev compare".into(),
        c,
        sides: [(names[0], a), (names[1], b)].map(|(name, s)| (name, s.machine.cpu.as_str())),
        counts: [
            Agreement::Same,
            Agreement::Differ,
            Agreement::Unknown,
            Agreement::Varies,
        ]
        .map(|v| c.count(v)),
        rows: c
            .entries
            .iter()
            .map(|e| Compared::of(e, [a, b], draw))
            .collect(),
        only: [("A", &c.only_a), ("B", &c.only_b)]
            .into_iter()
            .filter(|(_, list)| !list.is_empty())
            .map(|(side, list)| (side, list.join(", ")))
            .collect(),
    };
    page.render().expect("a comparison page renders") + "\n"
}

/// How the pages escape text: `&`, `<`, `>` and `"` as named entities
/// (`askama.toml` makes it the escaper of `.html` templates).
#[derive(Clone, Copy, Debug)]
struct Escape;

impl askama::filters::Escaper for Escape {
    fn write_escaped_str<W: std::fmt::Write>(&self, mut dest: W, text: &str) -> std::fmt::Result {
        let mut rest = text;
        while let Some(at) = rest.find(['&', '<', '>', '"']) {
            dest.write_str(&rest[..at])?;
            dest.write_str(match rest.as_bytes()[at] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                _ => "&quot;",
            })?;
            rest = &rest[at + 1..];
        }
        dest.write_str(rest)
    }
}

#[derive(Template)]
#[template(path = "survey.html")]
struct SurveyPage<'a> {
    title: String,
    survey: &'a Survey,
    facts: Vec<(String, String)>,
    draw: bool,
    rows: Vec<Row<'a>>,
}

/// What one entry's row says, cell by cell.
struct Row<'a> {
    e: &'a Entry,
    /// `explained`, `not-explained`, `not revealed`, `failed` or `varies`.
    status: &'static str,
    /// Where its answers varied from call to call, each with what
    /// repeating the same inputs showed.
    varies: Vec<String>,
    /// The status as a class name.
    class: String,
    /// Its formula in words, where it has one.
    sentence: Option<String>,
    /// The sizes with a tree, as runs.
    trees: String,
    /// The sizes where the formula does not hold, as runs (empty: none).
    departures: String,
    /// Where the rule changes: `(from n, formula)` after the first.
    changes: Vec<(usize, String)>,
    /// Each model and the sizes it was confirmed at, as runs.
    models: Vec<(String, String)>,
    /// With more than [`FEW_MODELS`]: the largest size with a model, and
    /// that model.
    largest: Option<(usize, String)>,
    threads: Threads,
    /// Each knob tried: whether it changes the order, and what it found.
    knobs: Vec<(bool, String)>,
    /// Its model's check against the black box: whether it held, and
    /// in words.
    check: Option<(bool, String)>,
    drawing: Option<Drawn>,
}

/// An entry's thread cell.
enum Threads {
    NotVaried,
    NotCompared(String),
    Same { counts: String, sizes: String },
    Depends { sizes: String, detail: Vec<String> },
}

/// An entry's drawing: the tree at its largest size up to
/// [`DRAWN_UP_TO`], open or a click away.
struct Drawn {
    open: bool,
    n: usize,
    collapsed: bool,
    svg: Result<String, String>,
}

impl<'a> Row<'a> {
    fn of(e: &'a Entry, draw: bool, open: bool) -> Self {
        let mut by_model: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for s in &e.sizes {
            let what = match (&s.arithmetic, s.outcome.as_str()) {
                (Some(m), _) => m.to_string(),
                (None, "unconfirmed") => "not plain additions: no model found".into(),
                (None, other) => other.to_string(),
            };
            by_model.entry(what).or_default().push(s.n);
        }
        let largest = e
            .sizes
            .iter()
            .filter(|s| s.arithmetic.is_some())
            .max_by_key(|s| s.n)
            .filter(|_| by_model.len() > FEW_MODELS)
            .map(|s| {
                (
                    s.n,
                    s.arithmetic
                        .as_ref()
                        .map(ToString::to_string)
                        .unwrap_or_default(),
                )
            });
        let trees: Vec<usize> = e
            .sizes
            .iter()
            .filter(|s| s.outcome == "tree")
            .map(|s| s.n)
            .collect();
        let threads = match &e.threads {
            None => Threads::NotVaried,
            Some(t) if t.error.is_some() => {
                Threads::NotCompared(t.error.clone().unwrap_or_default())
            }
            Some(t) if t.dependent.is_empty() => Threads::Same {
                counts: t
                    .counts
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                sizes: runs(&t.sizes),
            },
            Some(t) => Threads::Depends {
                sizes: runs(&t.dependent),
                detail: t.detail.iter().map(crate::survey::thread_detail).collect(),
            },
        };
        let status = match e.status {
            Status::Explained => "explained",
            Status::NotExplained => "not-explained",
            Status::NotRevealed => "not revealed",
            Status::Failed => "failed",
            Status::Varies => "varies",
        };
        let varies = e
            .variations()
            .into_iter()
            .map(|(n, t, v)| match t {
                Some(t) => format!("n = {n} on {t} thread(s): {}", crate::note::variation(v)),
                None => format!("n = {n}: {}", crate::note::variation(v)),
            })
            .collect();
        Row {
            e,
            status,
            varies,
            class: status.replace(' ', "-"),
            sentence: e.formula().map(|f| crate::formula::sentence(&f)),
            trees: runs(&trees),
            departures: runs(&e.departures()),
            changes: e.regimes().into_iter().skip(1).collect(),
            models: by_model.into_iter().map(|(m, n)| (m, runs(&n))).collect(),
            largest,
            threads,
            knobs: e.knobs.iter().flatten().map(knob_line).collect(),
            check: e
                .check
                .as_ref()
                .map(|c| (c.passed, crate::check::entry_check(c))),
            drawing: draw.then(|| Drawn::of(e, open)).flatten(),
        }
    }
}

/// A knob tried, in words: whether it changes the order, and each
/// value's outcome where it does.
fn knob_line(k: &KnobCheck) -> (bool, String) {
    let what = match (&k.error, k.changes) {
        (Some(why), _) => format!("not tried: {why}"),
        (None, true) => {
            let each: Vec<String> = k
                .values
                .iter()
                .zip(&k.outcomes)
                .map(|(v, o)| format!("{v}: {o}"))
                .collect();
            format!("changes the order at n = {}: {}", k.n, each.join("; "))
        }
        (None, false) => format!("{}: the same order at n = {}", k.values.join(", "), k.n),
    };
    (k.changes, format!("{} {what}", k.name))
}

impl Drawn {
    /// `e`'s tree at the largest size up to [`DRAWN_UP_TO`] revealed,
    /// collapsed past [`DRAW_WHOLE`] summands.
    fn of(e: &Entry, open: bool) -> Option<Self> {
        let n = e
            .sizes
            .iter()
            .filter(|s| s.outcome == "tree" && s.n <= DRAWN_UP_TO)
            .map(|s| s.n)
            .max()?;
        let tree = e.tree_at(n)?;
        let caption = Caption {
            black_box: Some(format!("{} {}", e.spec, e.dtype)),
            ..Caption::default()
        };
        Some(Drawn {
            open,
            n,
            collapsed: n > DRAW_WHOLE,
            svg: svg(&tree, e.model_at(n), caption),
        })
    }
}

/// `tree` as inline SVG, or why there is none.
fn svg(
    tree: &SummationTree,
    model: Option<&Arithmetic>,
    caption: Caption,
) -> Result<String, String> {
    let bytes = Drawing::new(tree)
        .arithmetic(model)
        .caption(caption)
        .svg()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&bytes);
    // The XML prologue and doctype have no place inside HTML.
    Ok(text
        .find("<svg")
        .map_or_else(String::new, |at| text[at..].to_string()))
}

#[derive(Template)]
#[template(path = "compare.html")]
struct ComparePage<'a> {
    title: String,
    c: &'a Comparison,
    /// Each survey's name and CPU.
    sides: [(&'a str, &'a str); 2],
    /// How many black boxes are the same, differ, are unknown, and vary.
    counts: [usize; 4],
    rows: Vec<Compared<'a>>,
    /// The side, and what only it surveyed.
    only: Vec<(&'static str, String)>,
}

/// One black box's row of a comparison.
struct Compared<'a> {
    e: &'a EntryComparison,
    /// `same`, `differ`, `unknown` or `varies`.
    class: &'static str,
    /// Why, in one line.
    reason: String,
    /// The facts behind the verdict, below its reason.
    extras: Vec<String>,
    /// For a difference, each side's tree at the first differing size.
    drawings: [Option<(usize, Result<String, String>)>; 2],
    /// Of two GPUs' instructions: whether results change, and why.
    gpu: Option<String>,
}

impl<'a> Compared<'a> {
    fn of(e: &'a EntryComparison, surveys: [&Survey; 2], draw: bool) -> Self {
        // The knobs behind a difference (or to pin where the bits held),
        // else the facts.
        let knobs = e.knobs.iter().map(|k| crate::compare::knob_note(e, k));
        let drawings = match (e.first_differing, draw && e.verdict == Agreement::Differ) {
            (Some(n), true) => [
                (surveys[0], &e.spec),
                (surveys[1], e.spec_b.as_ref().unwrap_or(&e.spec)),
            ]
            .map(|(s, spec)| {
                let entry = s.entry(spec, &e.dtype)?;
                let tree = entry.tree_at(n)?;
                Some((n, svg(&tree, entry.model_at(n), Caption::default())))
            }),
            _ => [None, None],
        };
        Compared {
            e,
            class: match e.verdict {
                Agreement::Same => "same",
                Agreement::Differ => "differ",
                Agreement::Unknown => "unknown",
                Agreement::Varies => "varies",
            },
            reason: crate::compare::reason(e),
            extras: e
                .threads
                .iter()
                .map(crate::compare::threads)
                .chain(knobs)
                .chain(crate::compare::likely_why(e))
                .collect(),
            drawings,
            gpu: e.gpu.as_ref().map(crate::compare::gpu_change),
        }
    }
}

#[cfg(test)]
mod tests {
    use askama::filters::Escaper;

    use super::Escape;

    #[test]
    fn text_is_escaped_by_name_as_it_always_was() {
        let mut out = String::new();
        Escape
            .write_escaped_str(&mut out, r#"a <b> & "c" 'd'"#)
            .unwrap();
        assert_eq!(out, "a &lt;b&gt; &amp; &quot;c&quot; 'd'");
    }
}
