//! The survey file (`survey.json`): the survey, its entries and each
//! size's result as serde types; the layout written, pretty down to each
//! size's result so a file reads and diffs; and the checks that refuse,
//! whole, a file no survey wrote.

use serde::{Deserialize, Serialize};

use super::{Machine, Scope};
use crate::arith::Arithmetic;
use crate::error::{Error, Result, abbreviated};
use crate::formula::Formula;
use crate::tree::SummationTree;
use crate::variation::Variation;

/// The version of `survey.json`'s layout: 2 adds black boxes whose answers
/// vary from call to call (the status and outcome `varies`, a size's and a
/// thread count's `variation`, the plan's `runs`); files of layout 1 are
/// still read. Layout 2 later gained optional keys an older reader skips
/// (an entry's `knobs`, the plan's `knobs`): a file without them is read as
/// one whose knobs were not tried.
pub const SURVEY_VERSION: u32 = 2;

/// How far an entry got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// One formula regenerates every tree revealed.
    Explained,
    /// Trees were revealed, but no formula of the order language gives
    /// them all: they are kept as revealed.
    NotExplained,
    /// No size of three summands or more gave a tree (order-independent or
    /// broken there; the trees of one or two summands are forced).
    NotRevealed,
    /// The black box could not be surveyed (the error says why); a later
    /// run tries it again.
    Failed,
    /// Its answer to one input changed from call to call, at some size or
    /// on some thread count: no one order describes it (the trees seen at
    /// other sizes are kept, as seen).
    Varies,
}

/// What one reveal of an entry found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeResult {
    /// Summands.
    pub n: usize,
    /// `tree` (confirmed by replay, with `arithmetic`), `unconfirmed` (its
    /// replay gave other bits), `order-independent`, `broken`, `varies`
    /// (its answers changed from call to call; `variation` says how), or
    /// `skipped` (a size the dtype cannot count to; `problem` says why).
    pub outcome: String,
    /// The tree's text, where the entry's formula does not give it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    /// What each node computes, confirmed by replay (plain additions in
    /// one format are a uniform model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arithmetic: Option<Arithmetic>,
    /// What broke, for `broken`; why it was left out, for `skipped`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// What repeating the same inputs showed, for `varies`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variation: Option<Variation>,
    /// Calls of the black box, the arithmetic's included.
    pub calls: u64,
}

/// Thread counts compared for one black box.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadCheck {
    /// The counts, the first the one the others are compared with.
    pub counts: Vec<usize>,
    /// The sizes compared.
    pub sizes: Vec<usize>,
    /// The sizes whose tree depends on the count.
    pub dependent: Vec<usize>,
    /// For each of those, where the trees part (first count's side first),
    /// or that a count's answers varied: kept in the file in words, as
    /// [`Survey::to_json`]'s caller words each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub detail: Vec<Detail>,
    /// Why the counts could not be compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The thread counts and sizes whose answers varied from call to call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub varies: Vec<ThreadVaried>,
}

/// One line of a [`ThreadCheck`]'s detail: what the survey found, or, as
/// a file records it, read back: its words. The file keeps each in the
/// words [`Survey::to_json`]'s caller gives (fprev-present's
/// `survey::thread_detail`); serialised otherwise (untagged), a finding
/// is an object of its fields. A file's line is read back as its words
/// only (a string, as before: nothing else is a line).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Detail {
    /// As a file records it, read back: its words.
    Recorded(String),
    /// At `n` summands, on `threads` threads, the answers varied from
    /// call to call.
    Varies {
        /// The size.
        n: usize,
        /// The thread count.
        threads: usize,
        /// What repeating the same inputs showed.
        variation: Box<Variation>,
    },
    /// At `n` summands, the trees of `counts` (the first count and
    /// another) part: the smallest subtree of each that the other lacks,
    /// as text ([`Difference::texts`](crate::tree::Difference::texts);
    /// `None`: nothing the other lacks).
    Parts {
        /// The size.
        n: usize,
        /// The first count and the other.
        counts: [usize; 2],
        /// Each one's subtree the other lacks.
        sides: [Option<String>; 2],
    },
    /// At `n` summands, one count found a tree and another did not.
    Outcomes {
        /// The size.
        n: usize,
    },
}

impl<'de> Deserialize<'de> for Detail {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(d).map(Detail::Recorded)
    }
}

/// A thread count and size at which a black box's answers varied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadVaried {
    /// The thread count.
    pub threads: usize,
    /// The size.
    pub n: usize,
    /// What repeating the same inputs showed.
    pub variation: Variation,
}

/// A knob tried on one black box (`fprev survey --knobs`): each value in
/// a study of its own, the other settings as the machine has them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KnobCheck {
    /// An environment variable its library reads, or `threads` (the
    /// black box's own thread count).
    pub name: String,
    /// The values tried, in order (`unset`: the variable removed).
    pub values: Vec<String>,
    /// The size they were tried at: the entry's largest surveyed.
    pub n: usize,
    /// Whether some value gave another confirmed order or arithmetic than
    /// another, or varied from call to call where another gave one order
    /// (values that failed prove nothing).
    pub changes: bool,
    /// What each value gave, in the order of `values`: the tree's formula
    /// (or `tree` and a hash of its text where no formula gives it),
    /// `unconfirmed` and either, `order-independent`, `varies`, or
    /// `failed: why`; ` [arithmetic B]` marks a tree found with another
    /// value's but other arithmetic.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<String>,
    /// Why the knob could not be tried (its process did not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// An entry's model checked against the black box at one size
/// ([`Scope::check`]): on random trials, then on inputs built to tell it
/// from each of its nearest alternatives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelCheck {
    /// The size.
    pub n: usize,
    /// Calls compared, the inputs built for power included.
    pub trials: usize,
    /// Whether every one gave the black box's bits.
    pub passed: bool,
    /// Where one did not: the trial and the kind of its input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatch: Option<(usize, String)>,
    /// The nearest alternatives an input told from the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub distinguished: Vec<String>,
    /// Those none told apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undistinguished: Vec<String>,
}

/// One black box in one dtype.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The black box (`numpy:sum`, `blas:gemv@blis`).
    pub spec: String,
    /// Its dtype.
    pub dtype: String,
    /// How far the survey got.
    pub status: Status,
    /// The formula (a `native:` spec without the prefix) that regenerates
    /// every tree revealed below the large sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formula: Option<String>,
    /// With no formula: the one that explains the most sizes from the
    /// smallest, and the first size it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closest: Option<(String, usize)>,
    /// Ranges not revealed where the formula switches regime: the switch
    /// lies somewhere in each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncertain: Vec<(usize, usize)>,
    /// Every reveal, by size.
    pub sizes: Vec<SizeResult>,
    /// Thread counts compared, for black boxes that take one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<ThreadCheck>,
    /// The knobs of its library tried (`--knobs`; none: not tried, an
    /// empty list: none apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knobs: Option<Vec<KnobCheck>>,
    /// Its model checked against the black box at its largest size with
    /// one ([`Scope::check`]); none where the plan asked for no check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<ModelCheck>,
    /// Why it failed, for `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Calls of the black box.
    pub calls: u64,
    /// Wall time, in seconds.
    pub seconds: f64,
}

impl Entry {
    /// The formula, parsed.
    pub fn formula(&self) -> Option<Formula> {
        self.formula.as_deref().and_then(|f| f.parse().ok())
    }

    /// Where its answers varied from call to call: `(n, thread count, what
    /// repeating the same inputs showed)`, the sizes surveyed first (their
    /// thread count `None`: the black box's own), then the thread counts
    /// compared.
    pub fn variations(&self) -> Vec<(usize, Option<usize>, &Variation)> {
        let sizes = self
            .sizes
            .iter()
            .filter_map(|s| Some((s.n, None, s.variation.as_ref()?)));
        let threads = self.threads.iter().flat_map(|t| &t.varies);
        sizes
            .chain(threads.map(|v| (v.n, Some(v.threads), &v.variation)))
            .collect()
    }

    /// Why this entry, read from a file of layout `version`, cannot be one
    /// a survey wrote: a formula that does not parse, a size twice or past
    /// what this machine can hold, an unknown outcome (or one its layout
    /// lacks), a tree that is not one of its size, a model that does not
    /// fit its tree, a size that varied without saying how.
    fn check(&self, version: u32) -> std::result::Result<(), String> {
        if version < 2 && self.status == Status::Varies {
            return Err("the status varies in a layout 1 survey".into());
        }
        let formula = match self.formula.as_deref().map(str::parse::<Formula>) {
            Some(Err(e)) => return Err(format!("bad formula: {e}")),
            Some(Ok(f)) => Some(f),
            None => None,
        };
        // Before any tree is built: the largest size is the one the
        // memory check (monotonic in n) would refuse first.
        if let Some(why) = self
            .sizes
            .iter()
            .map(|s| s.n)
            .max()
            .and_then(crate::memory::too_large)
        {
            return Err(why);
        }
        for k in self.knobs.iter().flatten() {
            let counted = k.outcomes.is_empty() || k.outcomes.len() == k.values.len();
            if !counted || k.values.is_empty() || k.n == 0 {
                return Err(format!(
                    "knob {}: give its values, a size and an outcome for each value",
                    abbreviated(&k.name)
                ));
            }
        }
        let mut seen = std::collections::HashSet::new();
        for s in &self.sizes {
            let n = s.n;
            if n == 0 {
                return Err("n = 0 is not a size".into());
            }
            if !seen.insert(n) {
                return Err(format!("n = {n} is listed twice"));
            }
            let has_tree = matches!(s.outcome.as_str(), "tree" | "unconfirmed");
            // Layout 1 knew every outcome but the last.
            let known = &OUTCOMES[..if version < 2 {
                OUTCOMES.len() - 1
            } else {
                OUTCOMES.len()
            }];
            if !has_tree && !known.contains(&s.outcome.as_str()) {
                return Err(format!(
                    "n = {n}: unknown outcome '{}' (expected {})",
                    abbreviated(&s.outcome),
                    known.join(", ")
                ));
            }
            if (s.outcome == "varies") != s.variation.is_some() {
                return Err(format!(
                    "n = {n}: a variation belongs to the outcome varies, and only there"
                ));
            }
            let tree = match (&s.tree, &formula) {
                (Some(text), _) => Some(
                    text.parse::<SummationTree>()
                        .map_err(|e| format!("n = {n}: bad tree: {}", e.0))?,
                ),
                (None, Some(f)) if has_tree => Some(f.tree(n)),
                (None, None) if has_tree => {
                    return Err(format!(
                        "n = {n}: a {} without a tree or a formula",
                        s.outcome
                    ));
                }
                (None, _) => None,
            };
            match (&tree, &s.arithmetic) {
                (Some(t), _) if t.n() != n => {
                    return Err(format!("n = {n}: the tree has {} leaves", t.n()));
                }
                (Some(t), Some(model)) => model
                    .fits(t)
                    .map_err(|why| format!("n = {n}: bad arithmetic: {why}"))?,
                (None, Some(_)) => return Err(format!("n = {n}: arithmetic without a tree")),
                _ => {}
            }
        }
        Ok(())
    }

    /// The arithmetic model confirmed at `n`, where one was.
    pub fn model_at(&self, n: usize) -> Option<&Arithmetic> {
        self.sizes.iter().find(|s| s.n == n)?.arithmetic.as_ref()
    }

    /// The tree revealed at `n`, where one was: kept as text, or given by
    /// the formula (which regenerated it when the survey ran).
    pub fn tree_at(&self, n: usize) -> Option<SummationTree> {
        let s = self.sizes.iter().find(|s| s.n == n)?;
        match &s.tree {
            Some(text) => text.parse().ok(),
            None if s.outcome == "tree" || s.outcome == "unconfirmed" => {
                self.formula().map(|f| f.tree(n))
            }
            None => None,
        }
    }

    /// The formula's regimes: from which size each part holds (`below`
    /// chains split; one regime from 1 otherwise).
    pub fn regimes(&self) -> Vec<(usize, String)> {
        let Some(mut f) = self.formula() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut from = 1;
        while let Formula::Below(m, small, large) = f {
            out.push((from, small.to_string()));
            from = m;
            f = *large;
        }
        out.push((from, f.to_string()));
        out
    }

    /// The sizes whose tree differs from the formula's (past the sizes it
    /// was inferred from).
    pub fn departures(&self) -> Vec<usize> {
        self.sizes
            .iter()
            .filter(|s| s.tree.is_some() && self.formula.is_some())
            .map(|s| s.n)
            .collect()
    }
}

/// The outcomes a size can have ([`SizeResult::outcome`]), those of
/// layout 1 first.
const OUTCOMES: [&str; 6] = [
    "tree",
    "unconfirmed",
    "order-independent",
    "broken",
    "skipped",
    "varies",
];

/// A survey: the machine, the plan, and an entry per black box and dtype
/// done so far.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Survey {
    /// [`SURVEY_VERSION`].
    pub fprev_survey: u32,
    /// The machine it ran on.
    pub machine: Machine,
    /// What was asked.
    #[serde(rename = "plan")]
    pub scope: Scope,
    /// Libraries asked for but not found, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<(String, String)>,
    /// The entries, in the plan's order.
    pub entries: Vec<Entry>,
    /// Wall time of all entries, in seconds.
    pub seconds: f64,
}

impl Survey {
    /// An empty survey of `scope` on this machine.
    pub fn new(scope: Scope) -> Self {
        Survey {
            fprev_survey: SURVEY_VERSION,
            machine: Machine::here(),
            scope,
            missing: Vec::new(),
            entries: Vec::new(),
            seconds: 0.0,
        }
    }

    /// Reads a `survey.json`.
    pub fn parse(text: &str) -> Result<Self> {
        let survey: Survey = serde_json::from_str(text)
            .map_err(|e| Error::Input(format!("not a survey file: {e}")))?;
        if survey.fprev_survey > SURVEY_VERSION {
            return Err(Error::Input(format!(
                "a survey of layout {} (this fprev reads up to {SURVEY_VERSION}): update fprev",
                survey.fprev_survey
            )));
        }
        if survey.fprev_survey == 0 {
            return Err(Error::Input(format!(
                "a survey of layout 0: layouts are 1 to {SURVEY_VERSION}"
            )));
        }
        // A corrupt entry is refused here, not skipped where it is
        // compared: a size left out must not read as the same bits.
        let mut seen = std::collections::HashSet::new();
        for e in &survey.entries {
            let name = format!("{} {}", abbreviated(&e.spec), abbreviated(&e.dtype));
            if !seen.insert((&e.spec, &e.dtype)) {
                return Err(Error::Input(format!("{name} is surveyed twice")));
            }
            e.check(survey.fprev_survey)
                .map_err(|why| Error::Input(format!("{name}: {why}")))?;
        }
        Ok(survey)
    }

    /// Reads the survey file at `path`.
    pub fn read(path: &std::path::Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Input(format!("cannot read {}: {e}", path.display())))?;
        Self::parse(&text).map_err(|e| Error::Input(format!("{}: {e}", path.display())))
    }

    /// The survey as JSON, pretty down to each size's result, which keeps
    /// one line (a survey of everything stays a file one can read and
    /// diff). Each entry with a formula keeps it in words too, its
    /// `sentence`, as `sentence` words it (fprev-present's
    /// `formula::sentence`); reading a file passes over it. Each line of
    /// a thread check's detail is kept as `detail` words it
    /// (fprev-present's `survey::thread_detail`).
    pub fn to_json(
        &self,
        sentence: &dyn Fn(&Formula) -> String,
        detail: &dyn Fn(&Detail) -> String,
    ) -> String {
        let mut value = serde_json::to_value(self).expect("a survey serialises");
        let entries = value["entries"].as_array_mut().into_iter().flatten();
        for (entry, e) in entries.zip(&self.entries) {
            if let Some(f) = e.formula() {
                entry["sentence"] = sentence(&f).into();
            }
            if let Some(t) = &e.threads {
                // `get_mut`, not indexing, which would add a null detail
                // where there is none.
                let lines = entry["threads"]
                    .get_mut("detail")
                    .and_then(serde_json::Value::as_array_mut)
                    .into_iter()
                    .flatten();
                for (line, d) in lines.zip(&t.detail) {
                    *line = detail(d).into();
                }
            }
        }
        layered(&value, 4, 0)
    }

    /// The entry of `spec` in `dtype`, if surveyed.
    pub fn entry(&self, spec: &str, dtype: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.spec == spec && e.dtype == dtype)
    }
}

/// `value` pretty-printed down to `depth` levels, deeper values and lists
/// of plain values on one line each.
fn layered(value: &serde_json::Value, depth: usize, indent: usize) -> String {
    use serde_json::Value;
    let pad = "  ".repeat(indent + 1);
    let (open, close, items): (char, char, Vec<String>) = match value {
        Value::Object(m) if depth > 0 && !m.is_empty() => (
            '{',
            '}',
            m.iter()
                .map(|(k, v)| {
                    format!(
                        "{}: {}",
                        Value::from(k.as_str()),
                        layered(v, depth - 1, indent + 1)
                    )
                })
                .collect(),
        ),
        Value::Array(a) if depth > 0 && a.iter().any(|v| v.is_object() || v.is_array()) => (
            '[',
            ']',
            a.iter()
                .map(|v| layered(v, depth - 1, indent + 1))
                .collect(),
        ),
        other => return other.to_string(),
    };
    format!(
        "{open}\n{pad}{}\n{}{close}",
        items.join(&format!(",\n{pad}")),
        "  ".repeat(indent)
    )
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::format::Format;
    use crate::order::Order;
    use crate::probe::{Probe, ProbeOptions};
    use crate::spec::Spec;

    /// A formula's words in these tests (the front end's are
    /// fprev-present's).
    fn words(f: &Formula) -> String {
        format!("the formula {f}")
    }

    /// A thread check's line in these tests.
    fn detail(d: &Detail) -> String {
        match d {
            Detail::Recorded(words) => words.clone(),
            other => format!("{other:?}"),
        }
    }

    /// Sums left to right, or right to left every other call: answers
    /// that change from call to call, as a pool that regroups its sum.
    struct Flips {
        n: usize,
        calls: usize,
    }

    impl Probe for Flips {
        fn n(&self) -> usize {
            self.n
        }
        fn format(&self) -> Format {
            Format::F32
        }
        fn sum(&mut self, x: &[f64], out: &mut [f64]) -> crate::Result<()> {
            self.calls += 1;
            let order = [Order::Sequential, Order::Reverse][self.calls % 2];
            out[0] = order.sum(x, Format::F32);
            Ok(())
        }
    }

    /// A survey of `native:sum` in f32 at 1..8 that sums as `spec`, or
    /// (`None`) by turns left to right and right to left.
    pub(in crate::workflow::survey) fn surveyed_as(spec: Option<&'static str>) -> Survey {
        let mut s = Survey::new(Scope {
            black_boxes: vec!["native:sum".into()],
            dtypes: vec![Format::F32],
            sizes: "1..8".parse().unwrap(),
            threads: Vec::new(),
            ..Scope::default()
        });
        let mut open = move |_: &Spec, o: &ProbeOptions| -> crate::Result<Box<dyn Probe>> {
            match spec {
                Some(spec) => crate::open(spec, o),
                None => Ok(Box::new(Flips {
                    n: o.n.expect("a survey opens each size"),
                    calls: 0,
                })),
            }
        };
        s.run(&mut open, &mut |_| {}, &mut |_| Ok(())).unwrap();
        s
    }

    #[test]
    fn a_black_box_that_varies_is_recorded_so_and_read_back() {
        let s = surveyed_as(None);
        let e = &s.entries[0];
        assert_eq!(e.status, Status::Varies, "{e:?}");
        // One or two summands add alike in either direction.
        assert!(e.sizes[..2].iter().all(|s| s.outcome == "tree"), "{e:?}");
        assert!(!e.variations().is_empty());
        for size in e.sizes.iter().filter(|s| s.outcome == "varies") {
            assert!(size.variation.as_ref().is_some_and(Variation::varies));
            assert!(size.tree.is_none() && size.arithmetic.is_none());
        }
        let back = Survey::parse(&s.to_json(&words, &detail)).unwrap();
        assert_eq!(back, s);
        // A deterministic black box is never marked so.
        let fixed = surveyed_as(Some("native:pairwise"));
        assert_eq!(fixed.entries[0].status, Status::Explained);
        assert!(fixed.entries[0].variations().is_empty());
    }

    #[test]
    fn a_thread_check_keeps_its_detail_in_words_and_writes_none_it_lacks() {
        let mut s = surveyed_as(Some("native:pairwise"));
        let check = |detail| ThreadCheck {
            counts: vec![1, 2],
            sizes: vec![64],
            dependent: Vec::new(),
            detail,
            error: None,
            varies: Vec::new(),
        };
        s.entries[0].threads = Some(check(Vec::new()));
        let text = s.to_json(&words, &detail);
        assert!(!text.contains("detail"), "{text}");
        assert_eq!(Survey::parse(&text).unwrap(), s);
        s.entries[0].threads = Some(check(vec![Detail::Outcomes { n: 64 }]));
        let text = s.to_json(&words, &detail);
        assert!(
            text.contains("\"detail\"") && text.contains("\"Outcomes { n: 64 }\""),
            "{text}"
        );
    }

    #[test]
    fn a_layout_1_survey_is_read_and_cannot_say_varies() {
        let s = surveyed_as(Some("native:pairwise"));
        let mut value = serde_json::to_value(&s).unwrap();
        value["fprev_survey"] = 1.into();
        value["plan"].as_object_mut().unwrap().remove("runs");
        let old = Survey::parse(&value.to_string()).unwrap();
        // It looked for variation only where a reveal failed.
        assert_eq!(old.scope.runs, 0);
        assert_eq!(old.entries, s.entries);
        let varying = serde_json::to_value(surveyed_as(None)).unwrap();
        let mut old_varying = varying.clone();
        old_varying["fprev_survey"] = 1.into();
        let e = Survey::parse(&old_varying.to_string()).unwrap_err();
        assert!(e.to_string().contains("layout 1"), "{e}");
        // A size that varied without saying how is no survey's.
        let mut bare = varying;
        let sizes = bare["entries"][0]["sizes"].as_array_mut().unwrap();
        let at = sizes.iter().position(|s| s["outcome"] == "varies").unwrap();
        sizes[at].as_object_mut().unwrap().remove("variation");
        let e = Survey::parse(&bare.to_string()).unwrap_err();
        assert!(e.to_string().contains("variation"), "{e}");
    }

    #[test]
    fn knobs_are_optional_keys_of_layout_2_and_read_back() {
        let mut s = Survey::new(Scope {
            black_boxes: vec!["native:pairwise".into()],
            dtypes: vec![Format::F32],
            sizes: "1..6".parse().unwrap(),
            threads: Vec::new(),
            ..Scope::default()
        });
        s.run(&mut crate::Spec::open, &mut |_| {}, &mut |_| Ok(()))
            .unwrap();
        // A file written before knobs were: no `knobs` key anywhere.
        let mut old: serde_json::Value = serde_json::from_str(&s.to_json(&words, &detail)).unwrap();
        old["plan"].as_object_mut().unwrap().remove("knobs");
        assert!(!old.to_string().contains("knobs"));
        let back = Survey::parse(&old.to_string()).unwrap();
        assert!(!back.scope.knobs && back.entries[0].knobs.is_none());
        assert_eq!(back.fprev_survey, 2);
        // One with a knob record reads it back.
        s.scope.knobs = true;
        s.entries[0].knobs = Some(vec![KnobCheck {
            name: "OPENBLAS_CORETYPE".into(),
            values: vec!["Haswell".into(), "Prescott".into()],
            n: 6,
            changes: true,
            outcomes: vec!["pairwise".into(), "sequential".into()],
            error: None,
        }]);
        let back = Survey::parse(&s.to_json(&words, &detail)).unwrap();
        assert_eq!(back, s);
        // An outcome short of the values tried is no survey's.
        s.entries[0].knobs.as_mut().unwrap()[0].outcomes.pop();
        let e = Survey::parse(&s.to_json(&words, &detail))
            .unwrap_err()
            .to_string();
        assert!(e.contains("knob OPENBLAS_CORETYPE"), "{e}");
    }

    #[test]
    fn a_survey_file_round_trips_and_a_newer_one_is_refused() {
        let mut s = Survey::new(Scope {
            black_boxes: vec!["native:pairwise".into()],
            dtypes: vec![Format::F32],
            sizes: "1..6".parse().unwrap(),
            threads: Vec::new(),
            ..Scope::default()
        });
        s.run(&mut crate::Spec::open, &mut |_| {}, &mut |_| Ok(()))
            .unwrap();
        let text = s.to_json(&words, &detail);
        assert!(
            text.contains("\"sentence\": \"the formula pairwise\""),
            "{text}"
        );
        let back = Survey::parse(&text).unwrap();
        assert_eq!(back, s);
        let newer = s.to_json(&words, &detail).replacen(
            &format!("\"fprev_survey\": {SURVEY_VERSION}"),
            "\"fprev_survey\": 9",
            1,
        );
        let e = Survey::parse(&newer).unwrap_err().to_string();
        assert!(e.contains("update fprev"), "{e}");
        assert!(Survey::parse("{\"n\": 3}").is_err());
    }
}
