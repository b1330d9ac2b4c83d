//! Surveying a machine (`fprev survey`): every black box it has (NumPy, JAX,
//! PyTorch, each BLAS found at run time, ndarray), each op (sum, dot, GEMV,
//! GEMM) and dtype, explained over a spread of sizes: the order's formula
//! and where it changes, what each node computes, and whether the thread
//! count changes the tree. Two surveys are compared by [`compare`], and
//! drawn as a page by [`html`].
//!
//! A survey is built entry by entry ([`Survey::run`]), so a caller can save
//! it after each one and a later run goes on where an earlier one stopped.
//!
//! ```
//! use fprev::survey::{Plan, Survey};
//! use fprev::Format;
//!
//! let plan = Plan {
//!     black_boxes: vec!["native:strided:4".into()],
//!     dtypes: vec![Format::F32],
//!     sizes: "1..24".parse().unwrap(),
//!     ..Plan::default()
//! };
//! let mut survey = Survey::new(plan);
//! survey.run(&mut fprev::open, &mut |_| {}, &mut |_| Ok(())).unwrap();
//! let entry = &survey.entries[0];
//! assert_eq!(entry.formula.as_deref(), Some("strided:4"));
//! // Every tree comes back from the formula, bit for bit confirmed by replay.
//! assert!(entry.sizes.iter().all(|s| s.arithmetic.is_some()));
//! ```

pub mod compare;
pub mod html;
pub mod machine;

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::arith::{Arithmetic, NodeArithmetic};
use crate::check::CONFIRM_TRIALS;
pub use crate::error::abbreviated;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::formula::Formula;
use crate::formula::infer::{EXPLAIN_SIZES, explain};
use crate::probe::ProbeOptions;
use crate::reveal::{Options, Silent};
use crate::sweep::{Opener, Outcome, Point, Sizes, Sweep, sweep_with};
use crate::tree::SummationTree;

pub use machine::Machine;

/// The version of `survey.json`'s layout.
pub const SURVEY_VERSION: u32 = 1;

/// Sizes revealed past [`EXPLAIN_SIZES`] for sums, dots and GEMVs, where
/// libraries switch to blocked or threaded kernels; each is checked
/// against the formula found below it.
pub const LARGE_SIZES: &str = "16384";

/// Sizes at which thread counts are compared: one below and one above
/// the size where OpenBLAS starts threading its dot (10,000).
pub const THREAD_SIZES: &str = "1024,16384";

/// What to survey.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The black boxes, op included (`numpy:sum`, `blas:dot@blis`).
    pub black_boxes: Vec<String>,
    /// The dtypes each is surveyed in.
    #[serde(with = "formats")]
    pub dtypes: Vec<Format>,
    /// The sizes the formula is inferred from.
    #[serde(with = "sizes")]
    pub sizes: Sizes,
    /// Sizes past those revealed for sums, dots and GEMVs, each checked
    /// against the formula.
    #[serde(with = "sizes")]
    pub large: Sizes,
    /// `M` and `N` of GEMV (`M` rows) and GEMM; the reduced `K` is the size.
    pub shape: [usize; 2],
    /// Thread counts compared, for black boxes that take one (`blas:`);
    /// fewer than two: none compared.
    pub threads: Vec<usize>,
    /// The sizes at which they are compared.
    #[serde(with = "sizes")]
    pub thread_sizes: Sizes,
}

impl Default for Plan {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Plan {
            black_boxes: Vec::new(),
            dtypes: vec![Format::F32, Format::F64, Format::F16, Format::Bf16],
            sizes: EXPLAIN_SIZES.parse().expect("EXPLAIN_SIZES parses"),
            large: Sizes(Vec::new()),
            shape: [64, 64],
            threads: if cores > 1 {
                vec![1, cores]
            } else {
                Vec::new()
            },
            thread_sizes: THREAD_SIZES.parse().expect("THREAD_SIZES parses"),
        }
    }
}

/// The ops a survey knows, in the order it lists them.
pub const OPS: [&str; 4] = ["sum", "dot", "gemv", "gemm"];

/// The Python libraries a survey visits through the embedded bridge.
const PYTHON_LIBRARIES: [&str; 3] = ["numpy", "jax", "torch"];

/// A library a survey can visit: its label (`numpy`, `blas@blis`), the
/// specs of its ops, and what it says of itself.
#[derive(Clone, Debug)]
pub struct Library {
    /// `numpy`, `jax`, `torch`, `ndarray`, `blas` (the BLAS `blas:` loads),
    /// `blas@NAME` (another one found).
    pub label: String,
    /// Its black boxes, one per op it offers.
    pub black_boxes: Vec<String>,
    /// What it said of itself (version, build).
    pub facts: BTreeMap<String, String>,
}

/// The libraries on this machine that `only` selects (every one when
/// empty; see [`selects`]), each with its black boxes of `ops`; the ones
/// not found are returned apart, with why. Naming a library in `only` that
/// is not here is an error that says what is.
pub fn libraries(ops: &[&str], only: &[String]) -> Result<Libraries> {
    let wanted = |label: &str| only.is_empty() || only.iter().any(|o| selects(o, label));
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for family in crate::spec::FAMILIES {
        if !PYTHON_LIBRARIES.contains(&family.prefix) || !wanted(family.prefix) {
            continue;
        }
        match family.available() {
            Ok(()) => found.push(Library {
                label: family.prefix.to_string(),
                black_boxes: specs(family.prefix, &OPS, "", ops),
                facts: facts_of(family.prefix),
            }),
            Err(why) => missing.push((family.prefix.to_string(), why)),
        }
    }
    blas_libraries(ops, &mut found, &mut missing);
    found.push(Library {
        label: "ndarray".into(),
        black_boxes: specs("ndarray", &OPS, "", ops),
        facts: facts_of("ndarray"),
    });
    let here: Vec<String> = found.iter().map(|l| l.label.clone()).collect();
    found.retain(|l| wanted(&l.label));
    missing.retain(|(label, _)| wanted(label));
    for o in only {
        if found.iter().any(|l| selects(o, &l.label)) {
            continue;
        }
        return Err(match missing.iter().find(|(label, _)| label == o) {
            Some((_, why)) => Error::Input(format!("--only {o}: not usable here: {why}")),
            None => Error::Input(format!(
                "--only {o}: no such library here (name numpy, jax, torch, ndarray, or a BLAS \
                 found: {})",
                here.iter()
                    .filter(|l| l.starts_with("blas"))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        });
    }
    Ok(Libraries { found, missing })
}

/// What [`libraries`] found.
#[derive(Clone, Debug)]
pub struct Libraries {
    /// The libraries found.
    pub found: Vec<Library>,
    /// Those not usable here: `(label, what to install)`.
    pub missing: Vec<(String, String)>,
}

/// Whether the selection `only` (`numpy`, `blas@blis`) names the library
/// labelled `label`; `blas` names every BLAS.
pub fn selects(only: &str, label: &str) -> bool {
    only == label || (only == "blas" && label.starts_with("blas@"))
}

/// `PREFIX:OP SUFFIX` for each op of `offers` that `ops` asks for.
fn specs(prefix: &str, offers: &[&str], suffix: &str, ops: &[&str]) -> Vec<String> {
    offers
        .iter()
        .filter(|op| ops.contains(op))
        .map(|op| format!("{prefix}:{op}{suffix}"))
        .collect()
}

/// The library a black box belongs to, as surveys label it: `numpy` of
/// `numpy:sum`, `blas@blis` of `blas:dot@blis`, `blas` of `blas:dot`.
pub fn label_of(spec: &str) -> String {
    let (family, rest) = spec.split_once(':').unwrap_or((spec, ""));
    match rest.split_once('@') {
        Some((_, lib)) if family == "blas" => format!("blas@{lib}"),
        _ => family.to_string(),
    }
}

/// What the library labelled `label` says of itself (version, build,
/// file); empty for a library that says nothing.
pub fn facts_of(label: &str) -> BTreeMap<String, String> {
    use crate::probe::blas::library::Cblas;
    let blas = |c: Cblas| blas_facts(&c);
    match label.split_once('@') {
        _ if label == "blas" => Cblas::open(None).map(blas).unwrap_or_default(),
        Some(("blas", lib)) => Cblas::open(Some(lib)).map(blas).unwrap_or_default(),
        _ if label == "ndarray" => BTreeMap::from([(
            "built into".to_string(),
            format!("fprev {}", env!("CARGO_PKG_VERSION")),
        )]),
        #[cfg(feature = "python")]
        _ if PYTHON_LIBRARIES.contains(&label) => crate::probe::python::facts(label)
            .unwrap_or_else(|e| BTreeMap::from([("facts".to_string(), format!("unknown: {e}"))])),
        _ => BTreeMap::new(),
    }
}

/// What a loaded BLAS says of itself: its file, and its version where it
/// has one.
fn blas_facts(c: &crate::probe::blas::library::Cblas) -> BTreeMap<String, String> {
    let mut f = BTreeMap::from([("path".to_string(), c.path.display().to_string())]);
    if let Some(v) = &c.version {
        f.insert("version".to_string(), v.clone());
    }
    f
}

/// The BLAS `blas:OP` loads (labelled `blas`), then every other known one
/// found, as `blas@NAME`.
fn blas_libraries(ops: &[&str], found: &mut Vec<Library>, missing: &mut Vec<(String, String)>) {
    use crate::probe::blas::library::{Cblas, KNOWN};
    let offers = ["dot", "gemv", "gemm"];
    let default = match Cblas::open(None) {
        Ok(c) => {
            found.push(Library {
                label: "blas".into(),
                black_boxes: specs("blas", &offers, "", ops),
                facts: blas_facts(&c),
            });
            Some(c.path)
        }
        Err(e) => {
            missing.push(("blas".into(), e.to_string()));
            None
        }
    };
    for known in KNOWN {
        match Cblas::open(Some(known.name)) {
            Ok(c) if Some(&c.path) != default.as_ref() => found.push(Library {
                label: format!("blas@{}", known.name),
                black_boxes: specs("blas", &offers, &format!("@{}", known.name), ops),
                facts: blas_facts(&c),
            }),
            Ok(_) => {}
            Err(e) => missing.push((format!("blas@{}", known.name), e.to_string())),
        }
    }
}

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
}

/// What one reveal of an entry found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeResult {
    /// Summands.
    pub n: usize,
    /// `tree` (confirmed by replay, with `arithmetic`), `unconfirmed` (its
    /// replay gave other bits), `order-independent`, `broken`, or `skipped`
    /// (a size the dtype cannot count to; `problem` says why).
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
    /// For each of those, where the trees part (first count's side first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub detail: Vec<String>,
    /// Why the counts could not be compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
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
    /// The formula in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sentence: Option<String>,
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

    /// Why this entry, read from a file, cannot be one a survey wrote: a
    /// formula that does not parse, a size twice or past what this
    /// machine can hold, an unknown outcome, a tree that is not one of its
    /// size, a model that does not fit its tree.
    fn check(&self) -> std::result::Result<(), String> {
        let formula = match self.formula.as_deref().map(str::parse::<Formula>) {
            Some(Err(e)) => return Err(format!("bad formula: {e}")),
            Some(Ok(f)) => Some(f),
            None => None,
        };
        let mut seen = std::collections::HashSet::new();
        for s in &self.sizes {
            let n = s.n;
            if n == 0 {
                return Err("n = 0 is not a size".into());
            }
            if !seen.insert(n) {
                return Err(format!("n = {n} is listed twice"));
            }
            if let Some(why) = crate::memory::too_large(n) {
                return Err(why);
            }
            let has_tree = matches!(s.outcome.as_str(), "tree" | "unconfirmed");
            if !has_tree && !OUTCOMES.contains(&s.outcome.as_str()) {
                return Err(format!(
                    "n = {n}: unknown outcome '{}' (expected {})",
                    abbreviated(&s.outcome),
                    OUTCOMES.join(", ")
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

/// A survey: the machine, the plan, and an entry per black box and dtype
/// done so far.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Survey {
    /// [`SURVEY_VERSION`].
    pub fprev_survey: u32,
    /// The machine it ran on.
    pub machine: Machine,
    /// What was asked.
    pub plan: Plan,
    /// Libraries asked for but not found, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<(String, String)>,
    /// The entries, in the plan's order.
    pub entries: Vec<Entry>,
    /// Wall time of all entries, in seconds.
    pub seconds: f64,
}

impl Survey {
    /// An empty survey of `plan` on this machine.
    pub fn new(plan: Plan) -> Self {
        Survey {
            fprev_survey: SURVEY_VERSION,
            machine: Machine::here(),
            plan,
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
            e.check()
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
    /// diff).
    pub fn to_json(&self) -> String {
        let value = serde_json::to_value(self).expect("a survey serialises");
        layered(&value, 4, 0)
    }

    /// The `(black box, dtype)` pairs of the plan, in order: each black box
    /// in the plan's dtypes it supports ([`supports`]).
    pub fn work(&self) -> Vec<(String, Format)> {
        let mut out = Vec::new();
        for spec in &self.plan.black_boxes {
            for &dtype in self.plan.dtypes.iter().filter(|&&d| supports(spec, d)) {
                out.push((spec.clone(), dtype));
            }
        }
        out
    }

    /// Opens each black box of `specs` in each dtype of the plan it is
    /// surveyed in, at the plan's smallest size, and returns the first
    /// [`Error::Input`] (a malformed spec, a missing file): every entry of
    /// it would fail with that error, and no rerun could mend it, so it is
    /// a usage error found before surveying. Other errors are left to the
    /// survey, which records them.
    pub fn preflight(&self, specs: &[String], open: &mut Opener) -> Result<()> {
        let Some(&n) = self.plan.sizes.0.iter().min() else {
            return Ok(());
        };
        for (spec, dtype) in self.work().iter().filter(|(s, _)| specs.contains(s)) {
            let opts = options_for(spec, *dtype, &self.plan);
            // As the sweep opens it: K of a GEMV or GEMM is the size.
            let opts = ProbeOptions {
                n: Some(n),
                shape: opts.shape.map(|[m, cols, _]| [m, cols, n]),
                ..opts
            };
            match open(spec, &opts) {
                Err(e @ Error::Input(_)) => return Err(e),
                _ => continue,
            }
        }
        Ok(())
    }

    /// The entry of `spec` in `dtype`, if surveyed.
    pub fn entry(&self, spec: &str, dtype: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.spec == spec && e.dtype == dtype)
    }

    /// Keeps the entries of `earlier` that this survey's plan would make
    /// again (same sizes, shape and thread counts, not failed), so a run
    /// goes on where `earlier` stopped. Returns how many were kept.
    pub fn resume_from(&mut self, earlier: Survey) -> usize {
        let same_plan = Plan {
            black_boxes: Vec::new(),
            dtypes: Vec::new(),
            ..earlier.plan.clone()
        } == Plan {
            black_boxes: Vec::new(),
            dtypes: Vec::new(),
            ..self.plan.clone()
        };
        if !same_plan {
            return 0;
        }
        let wanted = self.work();
        let kept: Vec<Entry> = earlier
            .entries
            .into_iter()
            .filter(|e| e.status != Status::Failed)
            .filter(|e| {
                wanted
                    .iter()
                    .any(|(s, d)| *s == e.spec && d.name() == e.dtype)
            })
            .collect();
        let count = kept.len();
        self.seconds += kept.iter().map(|e| e.seconds).sum::<f64>();
        self.entries = kept;
        count
    }

    /// Surveys every `(black box, dtype)` of the plan not yet done, opening
    /// black boxes with `open`: first each one's formula, arithmetic and
    /// large sizes, then the thread counts (a BLAS's thread count is the
    /// library's own setting, so it is changed only once every other
    /// reveal is done). `progress` hears each step; `save` gets the survey
    /// after each, and its error stops the run.
    pub fn run(
        &mut self,
        open: &mut Opener,
        progress: &mut dyn FnMut(Step<'_>),
        save: &mut dyn FnMut(&Survey) -> Result<()>,
    ) -> Result<()> {
        let work = self.work();
        let total = work.len();
        for (k, (spec, dtype)) in work.iter().enumerate() {
            if self.entry(spec, dtype.name()).is_some() {
                continue;
            }
            progress(Step::Starting {
                done: k,
                total,
                spec,
                dtype: *dtype,
            });
            let entry = survey_one(spec, *dtype, &self.plan, open);
            progress(Step::Finished {
                done: k + 1,
                total,
                entry: &entry,
            });
            self.seconds += entry.seconds;
            self.entries.push(entry);
            // In the plan's order, entries kept from an earlier run included.
            self.entries.sort_by_key(|e| {
                work.iter()
                    .position(|(s, d)| *s == e.spec && d.name() == e.dtype)
            });
            save(self)?;
        }
        if self.plan.threads.len() < 2 {
            return Ok(());
        }
        for k in 0..self.entries.len() {
            let e = &self.entries[k];
            if e.threads.is_some() || e.status == Status::Failed || !takes_threads(&e.spec) {
                continue;
            }
            let (spec, dtype) = (e.spec.clone(), e.dtype.clone());
            let format: Format = dtype.parse().map_err(Error::Input)?;
            progress(Step::Threads {
                spec: &spec,
                dtype: format,
                counts: &self.plan.threads,
            });
            let started = Instant::now();
            // A failure here leaves the entry's order as found.
            self.entries[k].threads = Some(
                compare_threads(&spec, format, &self.plan, open).unwrap_or_else(|e| ThreadCheck {
                    counts: self.plan.threads.clone(),
                    sizes: Vec::new(),
                    dependent: Vec::new(),
                    detail: Vec::new(),
                    error: Some(e.to_string()),
                }),
            );
            let spent = started.elapsed().as_secs_f64();
            self.entries[k].seconds += spent;
            self.seconds += spent;
            progress(Step::Threaded {
                entry: &self.entries[k],
                seconds: spent,
            });
            save(self)?;
        }
        Ok(())
    }
}

/// A step of [`Survey::run`], for progress.
#[derive(Debug)]
pub enum Step<'a> {
    /// The black box `spec` in `dtype` starts, after `done` of `total`.
    Starting {
        /// Entries before it.
        done: usize,
        /// Entries in the plan.
        total: usize,
        /// The black box.
        spec: &'a str,
        /// Its dtype.
        dtype: Format,
    },
    /// It is done.
    Finished {
        /// Entries done.
        done: usize,
        /// Entries in the plan.
        total: usize,
        /// What it found.
        entry: &'a Entry,
    },
    /// Its thread counts are compared.
    Threads {
        /// The black box.
        spec: &'a str,
        /// Its dtype.
        dtype: Format,
        /// The counts.
        counts: &'a [usize],
    },
    /// They were, in `seconds`: the entry holds what was found.
    Threaded {
        /// The entry, its `threads` filled in.
        entry: &'a Entry,
        /// Time spent on the thread counts.
        seconds: f64,
    },
}

/// The op of a spec: `gemv` of `blas:gemv@blis`.
pub fn op_of(spec: &str) -> &str {
    let rest = spec.split_once(':').map_or(spec, |(_, r)| r);
    rest.split([':', '@']).next().unwrap_or(rest)
}

/// Whether a survey asks `spec` in `dtype`: a CBLAS and ndarray know f32
/// and f64 only; NumPy, JAX and PyTorch also f16 and bf16 (the 8-bit
/// formats are no dtype of their sums); a black box of one's own, any.
pub fn supports(spec: &str, dtype: Format) -> bool {
    let wide = [Format::F64, Format::F32];
    match spec.split(':').next().unwrap_or(spec) {
        "blas" | "ndarray" => wide.contains(&dtype),
        family if PYTHON_LIBRARIES.contains(&family) => {
            wide.contains(&dtype) || [Format::F16, Format::Bf16].contains(&dtype)
        }
        _ => true,
    }
}

/// Whether the black box takes a thread count (`--threads`): a BLAS whose
/// count fprev can set, or fprev's own reducers.
fn takes_threads(spec: &str) -> bool {
    use crate::probe::blas::library::Cblas;
    let label = label_of(spec);
    match label.split_once('@') {
        _ if label == "blas" => Cblas::open(None).is_ok_and(|c| c.controls_threads()),
        Some(("blas", lib)) => Cblas::open(Some(lib)).is_ok_and(|c| c.controls_threads()),
        _ => label == "reduce",
    }
}

/// The probe options of `spec` in `dtype`: a GEMV or GEMM gets the plan's
/// `M` and `N` (the sweep sets `K`).
fn options_for(spec: &str, dtype: Format, plan: &Plan) -> ProbeOptions {
    let [m, cols] = plan.shape;
    ProbeOptions {
        format: dtype,
        shape: match op_of(spec) {
            "gemv" => Some([m, 1, 1]),
            "gemm" => Some([m, cols, 1]),
            _ => None,
        },
        ..ProbeOptions::default()
    }
}

/// Reveals `spec` in `dtype` at `sizes`, at each thread count of
/// `threads`.
fn reveal_at(
    spec: &str,
    dtype: Format,
    plan: &Plan,
    sizes: &[usize],
    threads: &[Option<usize>],
    open: &mut Opener,
) -> Result<Sweep> {
    sweep_with(
        spec,
        &options_for(spec, dtype, plan),
        &Sizes(sizes.to_vec()),
        threads,
        &Options::default(),
        CONFIRM_TRIALS,
        open,
        &mut Silent,
    )
}

/// One entry: the formula from the plan's sizes (narrowing its switches),
/// then the large sizes, each checked against it. An error becomes a
/// failed entry.
fn survey_one(spec: &str, dtype: Format, plan: &Plan, open: &mut Opener) -> Entry {
    let started = Instant::now();
    let mut entry = Entry {
        spec: spec.to_string(),
        dtype: dtype.name().to_string(),
        status: Status::Failed,
        formula: None,
        sentence: None,
        closest: None,
        uncertain: Vec::new(),
        sizes: Vec::new(),
        threads: None,
        error: None,
        calls: 0,
        seconds: 0.0,
    };
    if let Err(e) = explain_entry(&mut entry, dtype, plan, open) {
        entry.status = Status::Failed;
        entry.error = Some(e.to_string());
    }
    entry.calls = entry.sizes.iter().map(|s| s.calls).sum();
    entry.seconds = started.elapsed().as_secs_f64();
    entry
}

fn explain_entry(entry: &mut Entry, dtype: Format, plan: &Plan, open: &mut Opener) -> Result<()> {
    let spec = entry.spec.clone();
    let mut points: Vec<Point> = Vec::new();
    let (found, trees) = explain(&plan.sizes.0, |sizes| {
        let more = reveal_at(&spec, dtype, plan, sizes, &[None], open)?.points;
        let trees = more.iter().filter_map(|p| p.tree().cloned()).collect();
        points.extend(more);
        Ok(trees)
    })?;
    let formula = found.formula.clone();
    // Past the sizes explained: sums, dots and GEMVs (a GEMM's K there
    // costs minutes).
    let large: Vec<usize> = plan
        .large
        .0
        .iter()
        .copied()
        .filter(|n| !points.iter().any(|p| p.n == *n))
        .collect();
    // A large size the dtype cannot count to (f16 past 2,048) is left out,
    // saying why; the sizes explained stand.
    let mut skipped = Vec::new();
    if op_of(&spec) != "gemm" {
        for n in large {
            match reveal_at(&spec, dtype, plan, &[n], &[None], open) {
                Ok(more) => points.extend(more.points),
                Err(e) if e.kind() == crate::error::Kind::Input => skipped.push(SizeResult {
                    n,
                    outcome: "skipped".into(),
                    tree: None,
                    arithmetic: None,
                    problem: Some(e.to_string()),
                    calls: 0,
                }),
                Err(e) => return Err(e),
            }
        }
    }
    points.sort_by_key(|p| p.n);
    // Trees of one or two summands are forced: they reveal no order.
    let revealed = trees.iter().any(|t| !t.is_forced());
    entry.status = match (&formula, !revealed) {
        (_, true) => Status::NotRevealed,
        (Some(_), false) => Status::Explained,
        (None, false) => Status::NotExplained,
    };
    if let Some(f) = &formula {
        entry.formula = Some(f.to_string());
        entry.sentence = Some(f.sentence());
    }
    entry.closest = found.closest.map(|(f, at)| (f.to_string(), at));
    entry.uncertain = found.gaps;
    entry.sizes = points
        .iter()
        .map(|p| size_result(p, formula.as_ref()))
        .chain(skipped)
        .collect();
    entry.sizes.sort_by_key(|s| s.n);
    Ok(())
}

/// The outcomes a size can have ([`SizeResult::outcome`]).
const OUTCOMES: [&str; 5] = [
    "tree",
    "unconfirmed",
    "order-independent",
    "broken",
    "skipped",
];

/// A point as the survey keeps it: its tree only where `formula` does not
/// give it.
fn size_result(p: &Point, formula: Option<&Formula>) -> SizeResult {
    let (outcome, problem) = match &p.outcome {
        Outcome::Tree(_) => ("tree", None),
        Outcome::Unconfirmed(_) => ("unconfirmed", None),
        Outcome::OrderIndependent => ("order-independent", None),
        Outcome::Broken(why) => ("broken", Some(why.clone())),
    };
    let tree = p
        .tree()
        .filter(|t| formula.is_none_or(|f| f.tree(t.n()) != **t))
        .map(SummationTree::to_text);
    let arithmetic = match (&p.outcome, &p.arithmetic, p.accumulator) {
        (Outcome::Tree(_), Some(model), _) => Some(model.clone()),
        (Outcome::Tree(_), None, Some(acc)) => Some(Arithmetic::uniform(NodeArithmetic::ieee(acc))),
        _ => None,
    };
    SizeResult {
        n: p.n,
        outcome: outcome.to_string(),
        tree,
        arithmetic,
        problem,
        calls: p.stats.as_ref().map_or(0, |s| s.calls + s.arithmetic_calls),
    }
}

/// Reveals `spec` at the plan's thread sizes on each of its thread counts
/// and names the sizes whose tree depends on the count.
fn compare_threads(
    spec: &str,
    dtype: Format,
    plan: &Plan,
    open: &mut Opener,
) -> Result<ThreadCheck> {
    let sizes: Vec<usize> = plan
        .thread_sizes
        .0
        .iter()
        .copied()
        .filter(|&n| op_of(spec) != "gemm" || n <= 2048)
        .collect();
    let counts: Vec<Option<usize>> = plan.threads.iter().map(|&t| Some(t)).collect();
    let revealed = reveal_at(spec, dtype, plan, &sizes, &counts, open)?;
    let dependent = revealed.thread_dependent();
    // Where the first count's tree and each other count's part.
    let first = counts[0];
    let at =
        |n: usize, t: Option<usize>| revealed.points.iter().find(|p| p.n == n && p.threads == t);
    let mut detail = Vec::new();
    for &n in &dependent {
        for &t in &counts[1..] {
            let (Some(p), Some(q)) = (at(n, first), at(n, t)) else {
                continue;
            };
            match (p.tree(), q.tree()) {
                (Some(a), Some(b)) => {
                    if let Some(d) = a.diff(b) {
                        let [x, y] = d.texts(a, b).map(side);
                        detail.push(format!(
                            "n = {n}: {} thread(s) have {x}, {} have {y}",
                            first.unwrap_or(1),
                            t.unwrap_or(1),
                        ));
                    }
                }
                _ => detail.push(format!("n = {n}: the outcomes differ")),
            }
        }
    }
    Ok(ThreadCheck {
        counts: plan.threads.clone(),
        sizes,
        dependent,
        detail,
        error: None,
    })
}

/// One side of [`Difference::texts`](crate::tree::Difference::texts),
/// cut to a readable length.
pub fn side(text: Option<String>) -> String {
    text.map_or("nothing the other lacks".to_string(), |t| abbreviated(&t))
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

/// `Vec<Format>` as names.
mod formats {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::format::Format;

    pub fn serialize<S: Serializer>(f: &[Format], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(f.iter().map(|f| f.name()))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Format>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|n| n.parse().map_err(serde::de::Error::custom))
            .collect()
    }
}

/// [`Sizes`] as a list.
mod sizes {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::sweep::Sizes;

    pub fn serialize<S: Serializer>(v: &Sizes, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.0.iter())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Sizes, D::Error> {
        Ok(Sizes(Vec::<usize>::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_black_box_is_surveyed_in_the_dtypes_its_library_has() {
        let s = Survey::new(Plan {
            black_boxes: vec![
                "blas:dot@blis".into(),
                "numpy:sum".into(),
                "dylib:x.so:f".into(),
            ],
            dtypes: vec![Format::F32, Format::Bf16, Format::E4m3],
            ..Plan::default()
        });
        let work: Vec<String> = s.work().iter().map(|(b, d)| format!("{b} {d}")).collect();
        assert_eq!(
            work,
            [
                "blas:dot@blis f32",
                "numpy:sum f32",
                "numpy:sum bf16",
                "dylib:x.so:f f32",
                "dylib:x.so:f bf16",
                "dylib:x.so:f e4m3"
            ]
        );
    }

    #[test]
    fn labels_and_ops_of_specs() {
        assert_eq!(label_of("blas:gemv@blis"), "blas@blis");
        assert_eq!(label_of("blas:gemv"), "blas");
        assert_eq!(label_of("numpy:sum"), "numpy");
        assert_eq!(op_of("blas:gemv@blis"), "gemv");
        assert_eq!(op_of("torch:gemm:cuda"), "gemm");
    }

    #[test]
    fn a_survey_file_round_trips_and_a_newer_one_is_refused() {
        let mut s = Survey::new(Plan {
            black_boxes: vec!["native:pairwise".into()],
            dtypes: vec![Format::F32],
            sizes: "1..6".parse().unwrap(),
            threads: Vec::new(),
            ..Plan::default()
        });
        s.run(&mut crate::open, &mut |_| {}, &mut |_| Ok(()))
            .unwrap();
        let back = Survey::parse(&s.to_json()).unwrap();
        assert_eq!(back, s);
        let newer = s
            .to_json()
            .replacen("\"fprev_survey\": 1", "\"fprev_survey\": 9", 1);
        let e = Survey::parse(&newer).unwrap_err().to_string();
        assert!(e.contains("update fprev"), "{e}");
        assert!(Survey::parse("{\"n\": 3}").is_err());
    }
}
