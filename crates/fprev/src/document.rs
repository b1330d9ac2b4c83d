//! Tree files: the JSON form of docs/REFERENCE.md (Tree formats), which every command reads and
//! `--format json` writes.
//!
//! ```
//! use fprev::document::TreeDocument;
//!
//! let doc = TreeDocument::parse(r#"{"n": 3, "dtype": "f32", "tree": [[0, 1], 2]}"#).unwrap();
//! assert_eq!(doc.tree().to_text(), "((0+1)+2)");
//! assert!(TreeDocument::parse(r#"{"n": 4, "tree": [[0, 1], 2]}"#).is_err());
//! ```

use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::arith::Arithmetic;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::formula::Formula;
use crate::probe::Offset;
use crate::skeleton::{self, Skeleton};
use crate::tree::SummationTree;
use crate::variation::Variation;

/// A tree with what is known about where it came from.
///
/// The tree is held as its nodes, or, where a formula gives it (a
/// prediction, [`TreeDocument::predicted`]), as that formula and `n`: its
/// nodes are then built only when something asks for them
/// ([`TreeDocument::tree`]), and what streams from the formula (a replay,
/// the file) never builds them.
#[derive(Clone, Debug)]
pub struct TreeDocument {
    tree: Tree,
    /// Input format of the black box it was revealed from.
    pub dtype: Option<Format>,
    /// Spec of that black box.
    pub probe: Option<String>,
    /// Where the black box's input array started, past a 64-byte
    /// boundary, where it was handed one at an offset (`"offset"`: `"1B"`
    /// bytes, `"1"` elements): what the document says holds for that
    /// alignment. `None` (files without one still read): where NumPy's
    /// allocation puts it, aligned to its values, as fprev hands it by
    /// default.
    pub offset: Option<Offset>,
    /// What the reveal cost.
    pub stats: Option<Stats>,
    /// How the tree was confirmed against the black box by replay.
    pub confirmation: Option<Confirmation>,
    /// What each node computes, where it is known: a replay of the tree
    /// with it reproduces the black box's bits (`"arithmetic"`, a versioned
    /// model; files without one still read).
    pub arithmetic: Option<Arithmetic>,
    /// Where the tree is a prediction, not a reveal: the formula inferred
    /// from reveals at other sizes that gave it (`"inferred"`).
    pub inferred: Option<Inferred>,
    /// Where the black box's order varies from call to call: what its
    /// results showed, and its skeleton, which is then the document's
    /// tree (`"varies"`, versioned; files without one still read).
    pub varies: Option<Variation>,
}

/// A document's tree: its nodes, or the formula and `n` that give them,
/// built on first use.
#[derive(Clone, Debug)]
enum Tree {
    Built(SummationTree),
    Formula {
        formula: Formula,
        n: usize,
        built: OnceLock<SummationTree>,
    },
}

impl Tree {
    /// The tree `formula` gives at `n` summands, not built yet.
    fn of(formula: Formula, n: usize) -> Self {
        Tree::Formula {
            formula,
            n,
            built: OnceLock::new(),
        }
    }
}

/// The layout version of `"varies"` this build writes and reads.
pub const VARIES_VERSION: u32 = 1;

/// `"varies"`: the variation, and the skeleton's record beside the tree.
#[derive(Serialize, Deserialize)]
struct VariesRecord {
    version: u32,
    #[serde(flatten)]
    variation: Variation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skeleton: Option<skeleton::Record>,
}

/// A tree predicted by a formula rather than revealed at its size.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inferred {
    /// The formula (a `native:` spec without its prefix).
    pub formula: String,
    /// The sizes revealed to infer it.
    pub from: Vec<usize>,
    /// Masked queries that proved the prediction, one per node (the tree is
    /// then revealed, not only predicted); absent where it was confirmed by
    /// replay alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proven: Option<u64>,
    /// The formula is the cache's, found before: `from` are the sizes its
    /// tree was proven at now, not those it was first inferred from.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

/// What a tree file holds beyond what describes the tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// The run's wall times (`stats.seconds`, `stats.probe_seconds`).
    pub timings: bool,
    /// The leaves of a tree a formula gives (`"tree"`), which is otherwise
    /// left to the formula of `"inferred"` and `"n"`.
    pub leaves: bool,
}

#[derive(Deserialize)]
struct Raw<'a> {
    n: Option<usize>,
    dtype: Option<String>,
    probe: Option<String>,
    offset: Option<String>,
    #[serde(borrow, default)]
    tree: Option<&'a RawValue>,
    stats: Option<Stats>,
    confirmation: Option<Confirmation>,
    arithmetic: Option<Arithmetic>,
    inferred: Option<Inferred>,
    varies: Option<VariesRecord>,
}

impl TreeDocument {
    /// A document holding just `tree`.
    pub fn new(tree: SummationTree) -> Self {
        Self::holding(Tree::Built(tree))
    }

    /// A document of the tree `formula` gives at `n` summands, as
    /// `inferred` says it was predicted, without its nodes: they are built
    /// only when [`TreeDocument::tree`] is asked for.
    ///
    /// ```
    /// use fprev::document::{Inferred, TreeDocument};
    /// use fprev::formula::Formula;
    ///
    /// let f: Formula = "blocked:8".parse().unwrap();
    /// let inferred = Inferred { formula: f.to_string(), from: vec![64, 100], proven: None, cached: false };
    /// let doc = TreeDocument::predicted(f.clone(), 1 << 27, inferred);
    /// assert_eq!(doc.n(), 1 << 27);
    /// assert_eq!(doc.formula(), Some(&f));
    /// assert!(doc.to_json().len() < 200);
    /// ```
    ///
    /// # Panics
    /// If `n` is 0.
    pub fn predicted(formula: Formula, n: usize, inferred: Inferred) -> Self {
        assert!(n > 0, "a tree has a summand at least");
        TreeDocument {
            inferred: Some(inferred),
            ..Self::holding(Tree::of(formula, n))
        }
    }

    fn holding(tree: Tree) -> Self {
        TreeDocument {
            tree,
            dtype: None,
            probe: None,
            offset: None,
            stats: None,
            confirmation: None,
            arithmetic: None,
            inferred: None,
            varies: None,
        }
    }

    /// The tree. One a formula gives is built here on first use, which
    /// takes a few hundred bytes a summand: what can stream from
    /// [`TreeDocument::formula`] instead does.
    pub fn tree(&self) -> &SummationTree {
        match &self.tree {
            Tree::Built(tree) => tree,
            Tree::Formula { formula, n, built } => built.get_or_init(|| formula.tree(*n)),
        }
    }

    /// The number of summands.
    pub fn n(&self) -> usize {
        match &self.tree {
            Tree::Built(tree) => tree.n(),
            Tree::Formula { n, .. } => *n,
        }
    }

    /// The formula that gives the tree, where the document holds the tree
    /// as one ([`TreeDocument::predicted`], or a file that has no leaves).
    pub fn formula(&self) -> Option<&Formula> {
        match &self.tree {
            Tree::Built(_) => None,
            Tree::Formula { formula, .. } => Some(formula),
        }
    }

    /// The tree, built (see [`TreeDocument::tree`]) and taken out.
    pub fn into_tree(self) -> SummationTree {
        match self.tree {
            Tree::Built(tree) => tree,
            Tree::Formula {
                formula, n, built, ..
            } => built.into_inner().unwrap_or_else(|| formula.tree(n)),
        }
    }

    /// Whether this and `other` both hold one formula's tree at one size:
    /// then their trees are the same, and no node need be built to tell.
    pub fn same_formula(&self, other: &TreeDocument) -> bool {
        self.formula().is_some() && self.formula() == other.formula() && self.n() == other.n()
    }

    /// The document of a varying black box's skeleton, the black box
    /// `probe` of `dtype` inputs: its tree, with `variation`; `None` where
    /// the variation holds no skeleton.
    pub fn of_skeleton(variation: Variation, probe: &str, dtype: Format) -> Option<Self> {
        let tree = variation.skeleton.as_ref()?.tree.clone();
        Some(TreeDocument {
            varies: Some(variation),
            probe: Some(probe.to_string()),
            dtype: Some(dtype),
            ..Self::new(tree)
        })
    }

    /// Reads a tree file: the JSON form, or the text form `((0+1)+2)`.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::file("read", path, e))?;
        Self::parse(&text).map_err(|e| match e {
            Error::Json { context, source } => Error::Json {
                context: format!("{}: {context}", path.display()),
                source,
            },
            e => Error::Input(format!("{}: {e}", path.display())),
        })
    }

    /// Parses the JSON form (or, when the text does not start with `{`, the
    /// text form's first line).
    pub fn parse(text: &str) -> Result<Self> {
        let trimmed = text.trim_start();
        if !trimmed.starts_with('{') {
            let first = trimmed.lines().next().unwrap_or("");
            let tree: SummationTree = first.parse().map_err(|e: crate::tree::TreeError| {
                Error::Input(format!("not a tree file (JSON or text form): {}", e.0))
            })?;
            return Ok(Self::new(tree));
        }
        let mut de = serde_json::Deserializer::from_str(text);
        // The tree key is skipped as raw text (iteratively), so any depth is fine.
        de.disable_recursion_limit();
        let raw = Raw::deserialize(&mut de)
            .and_then(|r| de.end().map(|_| r))
            .map_err(|source| Error::Json {
                context: "not a tree file".into(),
                source,
            })?;
        let tree = match (raw.tree, &raw.inferred, raw.n) {
            (Some(tree), _, _) => Tree::Built(
                SummationTree::from_json_tree(tree.get())
                    .map_err(|e| Error::Input(format!("bad \"tree\": {}", e.0)))?,
            ),
            (None, Some(inferred), Some(n)) => formula_tree(&inferred.formula, n)?,
            (None, ..) => {
                return Err(Error::Input(
                    "not a tree file: no \"tree\", nor an \"inferred\" formula and \"n\" that \
                     give one"
                        .into(),
                ));
            }
        };
        let mut doc = Self::holding(tree);
        if let Some(n) = raw.n.filter(|n| *n != doc.n()) {
            return Err(Error::Input(format!(
                "\"n\" is {n} but the tree has {} leaves",
                doc.n()
            )));
        }
        doc.dtype = raw
            .dtype
            .map(|d| {
                d.parse::<Format>()
                    .map_err(|e| Error::Input(format!("bad \"dtype\": {e}")))
            })
            .transpose()?;
        doc.arithmetic = raw
            .arithmetic
            .map(|model| {
                // A model that names no node fits any tree of `n` summands:
                // a formula's tree is not built to see.
                let fits = match model.is_uniform() {
                    true => model.fits_n(doc.n()),
                    false => doc.buildable().and_then(|tree| model.fits(tree)),
                };
                fits.map(|()| model)
                    .map_err(|why| Error::Input(format!("bad \"arithmetic\": {why}")))
            })
            .transpose()?;
        if let Some(record) = raw.varies {
            let tree = doc.buildable().map_err(Error::Input)?.clone();
            doc.varies = Some(varies(record, &tree)?);
        }
        doc.offset = raw
            .offset
            .map(|o| {
                o.parse::<Offset>()
                    .map_err(|e| Error::Input(format!("bad \"offset\": {e}")))
            })
            .transpose()?;
        doc.probe = raw.probe;
        doc.stats = raw.stats;
        doc.confirmation = raw.confirmation;
        doc.inferred = raw.inferred;
        Ok(doc)
    }

    /// Fails where this document (named `name`) is the skeleton of a
    /// black box whose order varies: its varying joins have no one order
    /// to replay or check.
    pub fn one_order(&self, name: &str) -> Result<()> {
        match self.varies {
            Some(_) => Err(Error::Input(format!(
                "{name} is the skeleton of a black box whose order varies from call to call: \
                 its varying joins have no one order to replay"
            ))
            .advise(crate::error::Remedy::AskVaries)),
            None => Ok(()),
        }
    }

    /// [`TreeDocument::tree`], where this machine has the memory to build
    /// it (else why not): a file's formula may give more summands than
    /// fit.
    pub fn buildable(&self) -> std::result::Result<&SummationTree, String> {
        if let Tree::Formula { n, built, .. } = &self.tree
            && built.get().is_none()
            && let Some(why) = crate::memory::too_large(*n)
        {
            return Err(why);
        }
        Ok(self.tree())
    }

    /// The JSON form: what describes the tree and the black box, and the
    /// run's deterministic counts, never its times, so that a tree file
    /// written again for an unchanged order is the same file. One key a
    /// line in the order of docs/REFERENCE.md (Tree formats), the tree itself
    /// on one line, the other sections pretty-printed.
    ///
    /// ```
    /// use fprev::document::TreeDocument;
    ///
    /// let doc = TreeDocument::new("((0+1)+2)".parse().unwrap());
    /// assert_eq!(doc.to_json(), "{\n  \"n\": 3,\n  \"tree\": [[0,1],2]\n}");
    /// ```
    pub fn to_json(&self) -> String {
        self.to_json_written(Written::default())
    }

    /// [`TreeDocument::to_json`] with the run's wall times too
    /// (`stats.seconds`, `stats.probe_seconds`), for benchmarks.
    pub fn to_json_with_timings(&self) -> String {
        self.to_json_written(Written {
            timings: true,
            leaves: false,
        })
    }

    /// The JSON form with what `written` asks beyond the tree's
    /// description. A tree a formula gives (a prediction, `"inferred"`) is
    /// written as that formula and `"n"` unless `written.leaves`: a few
    /// hundred bytes where its leaves take hundreds of megabytes, read back
    /// as the same tree.
    ///
    /// ```
    /// use fprev::document::{Inferred, TreeDocument, Written};
    ///
    /// let f: fprev::formula::Formula = "blocked:8".parse().unwrap();
    /// let mut doc = TreeDocument::new(f.tree(1000));
    /// doc.inferred = Some(Inferred { formula: f.to_string(), from: vec![64, 100], proven: None, cached: false });
    /// let short = doc.to_json();
    /// assert!(!short.contains("\"tree\""));
    /// assert_eq!(TreeDocument::parse(&short).unwrap().tree(), doc.tree());
    /// let long = doc.to_json_written(Written { leaves: true, ..Default::default() });
    /// assert!(long.contains("\"tree\": ["));
    /// ```
    pub fn to_json_written(&self, written: Written) -> String {
        let timings = written.timings;
        let mut lines = vec![format!("\"n\": {}", self.n())];
        if let Some(d) = self.dtype {
            lines.push(format!("\"dtype\": \"{d}\""));
        }
        if let Some(p) = &self.probe {
            lines.push(format!(
                "\"probe\": {}",
                serde_json::Value::from(p.as_str())
            ));
        }
        if let Some(o) = self.offset {
            lines.push(format!("\"offset\": \"{o}\""));
        }
        if written.leaves || self.inferred.is_none() {
            lines.push(format!("\"tree\": {}", self.tree().to_json_tree()));
        }
        if let Some(v) = &self.varies {
            let record = VariesRecord {
                version: VARIES_VERSION,
                variation: v.clone(),
                skeleton: v.skeleton.as_ref().map(|s| s.record()),
            };
            lines.push(format!("\"varies\": {}", pretty(&record)));
        }
        if let Some(i) = &self.inferred {
            lines.push(format!("\"inferred\": {}", pretty(i)));
        }
        if let Some(a) = &self.arithmetic {
            lines.push(format!("\"arithmetic\": {}", pretty(a)));
        }
        if let Some(s) = &self.stats {
            let mut s = *s;
            if !timings {
                s.seconds = 0.0;
                s.probe_seconds = 0.0;
            }
            lines.push(format!("\"stats\": {}", pretty(&s)));
        }
        if let Some(c) = &self.confirmation {
            lines.push(format!("\"confirmation\": {}", pretty(c)));
        }
        format!("{{\n  {}\n}}", lines.join(",\n  "))
    }
}

/// The tree of `formula` at `n`, for a file that holds the formula
/// instead of its leaves: not built until asked for, so `n` need only fit
/// a replay.
fn formula_tree(formula: &str, n: usize) -> Result<Tree> {
    let formula: Formula = formula
        .parse()
        .map_err(|e| Error::Input(format!("bad \"inferred\" formula: {e}")))?;
    if n == 0 {
        return Err(Error::Input(
            "\"n\" is 0: a tree has a summand at least".into(),
        ));
    }
    crate::memory::check_replay(n)?;
    Ok(Tree::of(formula, n))
}

/// The variation a file records, its skeleton's tree being the file's.
fn varies(record: VariesRecord, tree: &SummationTree) -> Result<Variation> {
    if record.version != VARIES_VERSION {
        return Err(Error::Input(format!(
            "\"varies\" has layout version {}, but this fprev reads version {VARIES_VERSION}: \
             upgrade fprev to read it",
            record.version
        )));
    }
    let mut v = record.variation;
    v.skeleton = record
        .skeleton
        .map(|r| Skeleton::from_record(tree.clone(), r).map(Box::new))
        .transpose()
        .map_err(|why| Error::Input(format!("bad \"varies\": {why}")))?;
    Ok(v)
}

/// A section of the document, pretty-printed and indented one level.
fn pretty<T: Serialize>(section: &T) -> String {
    serde_json::to_string_pretty(section)
        .expect("a document section serializes")
        .replace('\n', "\n  ")
}

/// What a reveal cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// `l_{i,j}` values measured.
    pub queries: u64,
    /// Masked inputs summed (one holds several queries when packed).
    #[serde(default)]
    pub inputs: u64,
    /// Evaluations of the black box: one per input, or one per call of a
    /// black box that sums many rows at once (a GEMM), and those that check
    /// it first (that its rows sum alike; its accumulator, before packing).
    pub calls: u64,
    /// Wall time of the whole reveal, in seconds; 0 where a tree file
    /// leaves it out (see [`TreeDocument::to_json`]).
    #[serde(default, skip_serializing_if = "is_zero_time")]
    pub seconds: f64,
    /// Of which inside the black box.
    #[serde(default, skip_serializing_if = "is_zero_time")]
    pub probe_seconds: f64,
    /// Calls spent afterwards finding what each node computes (the
    /// arithmetic model), 0 when none were needed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub arithmetic_calls: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

fn is_zero_time(x: &f64) -> bool {
    *x == 0.0
}

/// `7 queries in 7 calls`, or, where calls and inputs differ (packed
/// queries after the accumulator check, a GEMM's rows in one call),
/// `72 queries in 56 inputs, 57 calls`.
impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} queries in ", self.queries)?;
        if self.inputs != self.calls && self.inputs > 0 {
            write!(f, "{} inputs, ", self.inputs)?;
        }
        write!(f, "{} calls", self.calls)
    }
}

/// How a revealed tree was confirmed against its black box: the record a
/// tree file keeps (`"confirmation"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Confirmation {
    /// Random inputs tried.
    pub trials: usize,
    /// Of which the tree's replay matched bit for bit.
    pub passed: usize,
    /// The accumulator format the replay added in, when every trial matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accumulator: Option<String>,
    /// Where the first input that did not match was saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatch_file: Option<String>,
    /// The model's nearest alternatives an input told apart (the black box
    /// gave the model's bits where the alternative's replay differed),
    /// each as a model's words (docs/ALGORITHMS.md, Confirmation by replay).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub distinguished_from: Vec<String>,
    /// The nearest alternatives no input searched told apart: the
    /// confirmation does not rule them out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_distinguished_from: Vec<String>,
}

impl Confirmation {
    /// True when every trial matched.
    pub fn confirmed(&self) -> bool {
        self.trials > 0 && self.passed == self.trials
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_a_document_holds_for_is_written_and_read_back() {
        let mut doc = TreeDocument::new("((0+1)+2)".parse().unwrap());
        assert!(!doc.to_json().contains("offset"), "none by default");
        doc.probe = Some("numpy:sum".into());
        for offset in [Offset::Bytes(1), Offset::Elements(3)] {
            doc.offset = Some(offset);
            let json = doc.to_json();
            assert_eq!(
                TreeDocument::parse(&json).unwrap().offset,
                Some(offset),
                "{json}"
            );
        }
        assert!(doc.to_json().contains("\"offset\": \"3\""));
        // A file written before offsets were recorded holds for the default.
        let old = "{\"n\": 2, \"probe\": \"numpy:sum\", \"tree\": [0,1]}";
        assert_eq!(TreeDocument::parse(old).unwrap().offset, None);
        let bad = "{\"n\": 2, \"offset\": \"5000B\", \"tree\": [0,1]}";
        let e = TreeDocument::parse(bad).unwrap_err().to_string();
        assert!(
            e.starts_with("bad \"offset\": '5000B' is not an offset"),
            "{e}"
        );
    }
}
