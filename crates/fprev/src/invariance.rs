//! Does the order change with a setting? Reveals of one black box made
//! under each combination of settings (a batch size, the output revealed,
//! a thread count, environment variables a library reads when it loads),
//! grouped by the order and arithmetic each found, with the knobs whose
//! value alone changed it, the regimes along one knob (the batch sizes
//! that share a tree) and where neighbouring regimes part.
//!
//! [`workflow::invariance`](crate::workflow::invariance()) makes the
//! reveals that need no process of their own; a front end runs one such
//! study per value of the environment variables, each in a fresh process,
//! and [`Study::nested`] joins them.
//!
//! ```
//! use fprev::invariance::{Case, Knob, Observed, Study, settings};
//! use fprev::document::TreeDocument;
//! use fprev::Order;
//!
//! let knobs = [Knob::new("threads", &["1", "2"]).unwrap()];
//! let found = |o: Order| Observed::Order(TreeDocument::new(o.tree(8)));
//! let cases = settings(&knobs, 64)
//!     .unwrap()
//!     .into_iter()
//!     .zip([found(Order::Sequential), found(Order::Pairwise)])
//!     .map(|(setting, observed)| Case { setting, observed, proven: false, seconds: 0.0 })
//!     .collect();
//! let study = Study { cases };
//! assert!(!study.invariant());
//! assert_eq!(study.changing_knobs(), vec!["threads"]);
//! assert!(study.pinned_by(&["threads"]));
//! ```

mod file;
mod regimes;
mod verdict;

use std::collections::HashMap;
use std::fmt;

use crate::document::TreeDocument;
use crate::error::{Error, Result};
use crate::formula::infer::infer_one;
use crate::formula::known;
use crate::shape::Shape;

pub use file::{VERSION, Words};
pub use regimes::{Parting, Regimes, Run};
pub use verdict::{POSITION, Verdict};

/// The most combinations of environment variables one study runs, each a
/// process of its own.
pub const MAX_PROCESSES: usize = 64;

/// The most reveals one study makes.
pub const MAX_REVEALS: usize = 4096;

/// The knobs a study turns inside one process; every other knob is an
/// environment variable (or [`PROCESS`]).
pub const IN_PROCESS: [&str; 5] = ["threads", "batch", "row", "column", "offset"];

/// The knob that numbers the fresh processes one setting ran in: its
/// values are repeats, not settings, and tell an order that changes
/// between processes (a hash seed, a thread pool's start-up) from one a
/// knob changes.
pub const PROCESS: &str = "process";

/// The most fresh processes one setting is repeated in.
pub const MAX_REPEATS: usize = crate::bounds::PROCESSES.most as usize;

/// One knob and the values to try: `threads`, `batch`, `row`, `column`,
/// or an environment variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Knob {
    /// `threads`, `batch`, `row`, `column` or the variable's name.
    pub name: String,
    /// Its values; `unset` removes an environment variable.
    pub values: Vec<String>,
}

impl Knob {
    /// A knob of at least one value, each named once.
    pub fn new(name: &str, values: &[&str]) -> Result<Self> {
        let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(Error::Input(format!(
                "'{name}' is not a knob: give threads or an environment variable's name \
                 (letters, digits, _)"
            )));
        }
        // Counted before anything else is asked of them: a knob of more
        // values than a study reveals is refused at once.
        if values.len() > MAX_REVEALS {
            return Err(Error::Input(format!(
                "{name}: {} values, more than the {MAX_REVEALS} reveals a study makes: give fewer",
                values.len()
            )));
        }
        let mut seen = std::collections::HashSet::new();
        if values.iter().any(|v| v.is_empty() || !seen.insert(*v)) {
            return Err(Error::Input(format!(
                "{name}: each value once, none empty (unset removes the variable)"
            )));
        }
        if values.is_empty() {
            return Err(Error::Input(format!("{name}: give at least one value")));
        }
        Ok(Knob {
            name: name.to_string(),
            values: values.iter().map(|v| v.to_string()).collect(),
        })
    }

    /// A knob of environment variable `name`: any name but those of
    /// [`IN_PROCESS`], which a process turns itself.
    ///
    /// ```
    /// use fprev::invariance::Knob;
    ///
    /// assert!(Knob::environment("OPENBLAS_NUM_THREADS", &["1", "unset"]).is_ok());
    /// assert!(Knob::environment("threads", &["1", "2"]).is_err());
    /// ```
    pub fn environment(name: &str, values: &[&str]) -> Result<Self> {
        let knob = Knob::new(name, values)?;
        if knob.in_process() || name == PROCESS {
            return Err(Error::Input(format!(
                "{name}: that name is a knob of its own, not an environment variable: \
                 study it as threads, batch, rows, columns, offset or processes"
            )));
        }
        Ok(knob)
    }

    /// Whether the knob is turned inside one process ([`IN_PROCESS`]).
    pub fn in_process(&self) -> bool {
        IN_PROCESS.contains(&self.name.as_str())
    }
}

/// One combination: a value for each knob, in the knobs' order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Setting(pub Vec<(String, String)>);

impl Setting {
    /// The value of knob `name`.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The setting without knob `name`.
    pub fn without(&self, name: &str) -> Setting {
        Setting(self.0.iter().filter(|(k, _)| k != name).cloned().collect())
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words: Vec<String> = self.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
        f.write_str(&words.join(" "))
    }
}

/// Every combination of the knobs' values, the last knob changing
/// fastest; at most `most`.
pub fn settings(knobs: &[Knob], most: usize) -> Result<Vec<Setting>> {
    let count = knobs
        .iter()
        .try_fold(1usize, |n, k| n.checked_mul(k.values.len()));
    match count {
        Some(n) if n <= most => {}
        _ => {
            return Err(Error::Input(format!(
                "the knobs' values combine to more than {most} settings: give fewer"
            )));
        }
    }
    let mut out = vec![Setting(Vec::new())];
    for k in knobs {
        if out[0].value(&k.name).is_some() {
            return Err(Error::Input(format!("{}: named twice", k.name)));
        }
        out = out
            .into_iter()
            .flat_map(|s| {
                k.values.iter().map(move |v| {
                    let mut s = s.clone();
                    s.0.push((k.name.clone(), v.clone()));
                    s
                })
            })
            .collect();
    }
    Ok(out)
}

/// The processes a study of `environment` runs: each combination of its
/// values (at most [`MAX_PROCESSES`] in all) `repeats` times, as the
/// setting its study nests under ([`PROCESS`] numbering the repeats where
/// there are several) and the environment to run it in.
///
/// ```
/// use fprev::invariance::{Knob, processes};
///
/// let dummy = [Knob::environment("DUMMY", &["1", "2"]).unwrap()];
/// let plan = processes(&dummy, 2).unwrap();
/// assert_eq!(plan.len(), 4);
/// assert_eq!(plan[1].0.to_string(), "DUMMY=1 process=2");
/// assert_eq!(plan[1].1.to_string(), "DUMMY=1");
/// assert_eq!(processes(&[], 3).unwrap().len(), 3);
/// assert!(processes(&dummy, 40).is_err());
/// ```
pub fn processes(environment: &[Knob], repeats: usize) -> Result<Vec<(Setting, Setting)>> {
    if !(1..=MAX_REPEATS).contains(&repeats) {
        return Err(Error::Input(format!(
            "{repeats} processes a setting: give 1 to {MAX_REPEATS}"
        )));
    }
    let most = MAX_PROCESSES / repeats;
    let count = environment
        .iter()
        .try_fold(1usize, |n, k| n.checked_mul(k.values.len()));
    if count.is_none_or(|n| n > most) {
        return Err(Error::Input(format!(
            "the environment's values combine to more than {most} settings, each run in \
             {repeats} processes (at most {MAX_PROCESSES} in all): give fewer"
        )));
    }
    let combinations = settings(environment, most)?;
    let mut plan = Vec::new();
    for environ in combinations {
        for p in 1..=repeats {
            let mut setting = environ.clone();
            if repeats > 1 {
                setting.0.push((PROCESS.to_string(), p.to_string()));
            }
            plan.push((setting, environ.clone()));
        }
    }
    Ok(plan)
}

/// What a reveal under one setting found.
#[derive(Clone, Debug)]
pub enum Observed {
    /// A tree, confirmed by replay.
    Order(TreeDocument),
    /// A tree its replay did not confirm: no claim rests on it.
    Unconfirmed(TreeDocument),
    /// The black box's bits do not depend on the order (an exact or
    /// pre-rounded sum): why.
    OrderIndependent(crate::reveal::OrderIndependent),
    /// The black box varied from call to call: no one order.
    Varies(Varying),
    /// The reveal failed: why.
    Failed(String),
}

impl Observed {
    /// The confirmed document, if any.
    pub fn confirmed(&self) -> Option<&TreeDocument> {
        match self {
            Observed::Order(doc) => Some(doc),
            _ => None,
        }
    }

    /// Whether the finding holds: a confirmed order, or no order at all
    /// (an order-independent black box).
    pub fn holds(&self) -> bool {
        matches!(self, Observed::Order(_) | Observed::OrderIndependent(_))
    }

    /// What was found, as the study file names it: `order`,
    /// `unconfirmed`, `order-independent`, `varies` or `failed`.
    pub fn kind(&self) -> &'static str {
        match self {
            Observed::Order(_) => "order",
            Observed::Unconfirmed(_) => "unconfirmed",
            Observed::OrderIndependent(_) => "order-independent",
            Observed::Varies(_) => "varies",
            Observed::Failed(_) => "failed",
        }
    }

    /// The tree document found, confirmed or not.
    pub fn document(&self) -> Option<&TreeDocument> {
        match self {
            Observed::Order(doc) | Observed::Unconfirmed(doc) => Some(doc),
            _ => None,
        }
    }

    /// Whether this is an order a replay on random inputs confirmed: not
    /// one found where no replay was asked.
    pub fn replayed(&self) -> bool {
        self.confirmed()
            .and_then(|d| d.confirmation.as_ref())
            .is_some_and(|c| c.confirmed())
    }

    /// Whether this is a confirmed order with a model of its arithmetic.
    pub fn modelled(&self) -> bool {
        self.confirmed().is_some_and(|d| d.arithmetic.is_some())
    }
}

/// Why a setting's black box has no one order: what repeating the same
/// inputs showed, or, as a study file records it, read back: its words.
#[derive(Clone, Debug)]
pub enum Varying {
    /// What repeating the same inputs showed.
    Measured(Box<crate::variation::Variation>),
    /// As a study file records it, read back: its words.
    Recorded(String),
}

/// What an order that varied varied between: calls in one process, or
/// the fresh processes one setting ran in (each of which found one order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Between {
    /// Calls of the black box on one input, in one process.
    Calls,
    /// Processes, each steady.
    Processes,
}

/// One reveal of a study: the setting, what it found, and whether the tree
/// was a neighbour's, proven with masked checks rather than revealed.
#[derive(Clone, Debug)]
pub struct Case {
    /// The knobs' values.
    pub setting: Setting,
    /// What the reveal found.
    pub observed: Observed,
    /// The tree was proven, not revealed in full.
    pub proven: bool,
    /// Wall time of the case's reveal, in seconds.
    pub seconds: f64,
}

/// The reveals of one study, one a setting.
#[derive(Clone, Debug, Default)]
pub struct Study {
    /// The cases, in the order revealed.
    pub cases: Vec<Case>,
}

impl Study {
    /// The cases whose confirmed orders agree (modulo child order, and in
    /// arithmetic where both files carry one), by first appearance; the
    /// order-independent cases are one group, the cases that failed alike
    /// one group, and any other case with no confirmed order is a group of
    /// its own.
    pub fn groups(&self) -> Vec<Vec<usize>> {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, c) in self.cases.iter().enumerate() {
            let joins = groups
                .iter()
                .position(|g| agree(&self.cases[g[0]].observed, &c.observed));
            match joins {
                Some(g) => groups[g].push(i),
                None => groups.push(vec![i]),
            }
        }
        groups
    }

    /// The group of each case, as [`Study::groups`] numbers them.
    pub fn group_of(&self) -> Vec<usize> {
        let mut of = vec![0; self.cases.len()];
        for (g, members) in self.groups().iter().enumerate() {
            for &i in members {
                of[i] = g;
            }
        }
        of
    }

    /// Whether every case found a confirmed order, the same one (or every
    /// case found the black box order-independent).
    pub fn invariant(&self) -> bool {
        self.groups().len() == 1 && self.cases.first().is_some_and(|c| c.observed.holds())
    }

    /// The knobs of the study, in order.
    pub fn knobs(&self) -> Vec<&str> {
        self.cases.first().map_or(Vec::new(), |c| {
            c.setting.0.iter().map(|(k, _)| k.as_str()).collect()
        })
    }

    /// The knobs whose value alone changed what was found: two settings
    /// that differ in that knob only, each steady ([`Study::steady`]), in
    /// different groups. A setting whose repeats disagree, or
    /// whose case failed (it found nothing), blames no knob.
    pub fn changing_knobs(&self) -> Vec<&str> {
        let steady = self.steady();
        self.knobs()
            .into_iter()
            .filter(|k| *k != PROCESS)
            .filter(|k| {
                // The settings alike but for `k`, by their other values.
                let mut seen: HashMap<Setting, usize> = HashMap::new();
                steady
                    .iter()
                    .any(|(s, g)| *seen.entry(s.without(k)).or_insert(*g) != *g)
            })
            .collect()
    }

    /// Each setting (its [`PROCESS`] aside) whose every case, in every
    /// process it ran in, found one finding that holds, with that
    /// finding's group: a setting a knob's effect can be read from.
    pub fn steady(&self) -> Vec<(Setting, usize)> {
        let group_of = self.group_of();
        let mut at: HashMap<Setting, usize> = HashMap::new();
        let mut found: Vec<(Setting, Option<usize>)> = Vec::new();
        for (c, &g) in self.cases.iter().zip(&group_of) {
            let setting = c.setting.without(PROCESS);
            let holds = c.observed.holds().then_some(g);
            match at.get(&setting) {
                Some(&k) if found[k].1 != holds => found[k].1 = None,
                Some(_) => {}
                None => {
                    at.insert(setting.clone(), found.len());
                    found.push((setting, holds));
                }
            }
        }
        found
            .into_iter()
            .filter_map(|(s, g)| Some((s, g?)))
            .collect()
    }

    /// The settings (their [`PROCESS`] aside) whose order varied: between
    /// calls (a case found it varies), or between the processes it ran in
    /// (their findings differ, a failure aside), with which.
    pub fn varying(&self) -> Vec<(Setting, Between)> {
        let group_of = self.group_of();
        let mut first: HashMap<Setting, usize> = HashMap::new();
        let mut at: HashMap<Setting, usize> = HashMap::new();
        let mut out: Vec<(Setting, Between)> = Vec::new();
        for (c, &g) in self.cases.iter().zip(&group_of) {
            let setting = c.setting.without(PROCESS);
            let between = match &c.observed {
                Observed::Varies(_) => Some(Between::Calls),
                Observed::Failed(_) => None,
                _ => {
                    (*first.entry(setting.clone()).or_insert(g) != g).then_some(Between::Processes)
                }
            };
            let Some(between) = between else { continue };
            match at.get(&setting) {
                // Calls that vary say more than processes that differ.
                Some(&k) => out[k].1 = out[k].1.min(between),
                None => {
                    at.insert(setting.clone(), out.len());
                    out.push((setting, between));
                }
            }
        }
        out
    }

    /// Whether fixing `knobs` fixes the order: every two cases that agree
    /// on them found the same finding that holds, whatever the other knobs
    /// were.
    pub fn pinned_by(&self, knobs: &[&str]) -> bool {
        let group_of = self.group_of();
        let mut seen: HashMap<Vec<Option<&str>>, usize> = HashMap::new();
        self.cases.iter().zip(&group_of).all(|(c, &g)| {
            let pins = knobs.iter().map(|k| c.setting.value(k)).collect();
            c.observed.holds() && *seen.entry(pins).or_insert(g) == g
        })
    }

    /// Black-box calls of every reveal (its confirmation's replays
    /// aside), and their wall time in seconds.
    pub fn cost(&self) -> (u64, f64) {
        let calls = self
            .cases
            .iter()
            .filter_map(|c| c.observed.document()?.stats.as_ref())
            .map(|st| st.calls + st.arithmetic_calls)
            .sum();
        (calls, self.cases.iter().map(|c| c.seconds).sum())
    }
}

/// Whether two findings are the same confirmed order and arithmetic, both
/// order-independence, or the same failure.
fn agree(a: &Observed, b: &Observed) -> bool {
    match (a, b) {
        (Observed::OrderIndependent(_), Observed::OrderIndependent(_)) => true,
        (Observed::Failed(x), Observed::Failed(y)) => x == y,
        (Observed::Order(x), Observed::Order(y)) => {
            x.tree() == y.tree()
                && match (&x.arithmetic, &y.arithmetic) {
                    (Some(p), Some(q)) => p.parting(q, x.tree()).is_none(),
                    _ => true,
                }
        }
        _ => false,
    }
}

/// A formula of the order language whose tree at the tree's size is the
/// tree: a reference order's, a formula found for a library, or one
/// inferred from this tree alone ([`infer_one`]; it says nothing of other
/// sizes).
///
/// ```
/// use fprev::invariance::formula_of;
/// use fprev::Order;
///
/// assert_eq!(formula_of(&Order::Sequential.tree(100)).unwrap(), "sequential");
/// ```
pub fn formula_of(tree: &crate::SummationTree) -> Option<String> {
    if let Some(order) = Shape::of(tree).order {
        return Some(order.to_string());
    }
    if let Some(k) = known::matching(tree) {
        return Some(k.formula.to_string());
    }
    infer_one(tree).map(|f| f.to_string())
}
