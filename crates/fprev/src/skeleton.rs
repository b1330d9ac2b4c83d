//! The fixed skeleton of a black box whose order varies from call to call:
//! the subtrees that every call shares, and the joins between them whose
//! order changes (docs/ALGORITHMS.md, The fixed skeleton).
//!
//! A skeleton is a [`SummationTree`] whose nodes of more than two children
//! are *varying joins*: their children are fixed subtrees, added together
//! in an order that was not the same on every call. A node of two children
//! is a fixed addition. The engine finds it
//! ([`reveal::skeleton`](crate::reveal::skeleton())); this module names
//! and describes it.
//!
//! ```
//! use fprev::skeleton::{Join, Skeleton};
//!
//! // 4 chunks of 4 summands, each left to right, joined at random.
//! let tree = "((((0+1)+2)+3)+(((4+5)+6)+7)+(((8+9)+10)+11)+(((12+13)+14)+15))".parse().unwrap();
//! let skeleton = Skeleton::new(tree, vec![Join { first: 0, leaves: 16 }], 50);
//! assert_eq!(
//!     skeleton.describe(),
//!     vec!["4 runs of 4 consecutive summands, each left to right, joined in an order that varies"]
//! );
//! ```

use std::fmt;
use std::time::Duration;

use petgraph::graph::NodeIndex;
use serde::{Deserialize, Serialize};

use crate::order::Order;
use crate::shape::Shape;
use crate::tree::SummationTree;

/// The most parts of one join found one by one (each costs a pass of
/// masked queries over the rest); past them the rest of its summands are
/// parts of their own, [`Skeleton::unexplored`].
pub const MOST_PARTS: usize = 64;

/// A varying join, named by its smallest summand and its count of
/// summands (which name one node of a tree).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(from = "[usize; 2]", into = "[usize; 2]")]
pub struct Join {
    /// Its smallest summand.
    pub first: usize,
    /// Summands under it.
    pub leaves: usize,
}

impl From<[usize; 2]> for Join {
    fn from([first, leaves]: [usize; 2]) -> Self {
        Join { first, leaves }
    }
}

impl From<Join> for [usize; 2] {
    fn from(j: Join) -> Self {
        [j.first, j.leaves]
    }
}

/// The subtrees every call of a varying black box shares.
#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    /// The fixed subtrees, joined at the varying joins.
    pub tree: SummationTree,
    /// The joins whose order varies, by smallest summand.
    pub varying: Vec<Join>,
    /// Calls that answered each masked query of a subproblem where some
    /// query's first answers disagreed, and more calls that answered each
    /// partner of a level not kept.
    pub repeats: usize,
    /// Calls that answered every masked query (at most `repeats`).
    pub first: usize,
    /// The most distinct answers seen to one masked query: at least this
    /// many distinct trees were summed along.
    pub most_answers: usize,
    /// Distinct masked queries asked, each `first` times or more.
    pub queries: u64,
    /// Calls of the black box that finding it took.
    pub calls: u64,
    /// Summands shown as parts of their own under a varying join of more
    /// than [`MOST_PARTS`] parts, or once the time a skeleton may take was
    /// spent: subtrees among them, fixed or not, were not looked for.
    pub unexplored: usize,
    /// Those summands, as runs `[first, count]` of consecutive summands,
    /// ascending.
    pub unexplored_runs: Vec<[usize; 2]>,
    /// Queries that were to be asked again (answers in their subproblem
    /// disagreed, or their level was not kept) when the time was spent,
    /// so asked fewer times than they were to be.
    pub short: u64,
    /// The time the search could take, where it was spent before the
    /// skeleton was whole (`None`: it was not).
    pub spent: Option<Duration>,
}

/// A skeleton's record in a tree file (`"skeleton"` in `"varies"`): the
/// tree itself is the file's `"tree"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// See [`Skeleton::varying`].
    pub varying: Vec<Join>,
    /// See [`Skeleton::repeats`].
    pub repeats: usize,
    /// See [`Skeleton::most_answers`].
    pub most_answers: usize,
    /// See [`Skeleton::queries`].
    pub queries: u64,
    /// See [`Skeleton::calls`].
    pub calls: u64,
    /// See [`Skeleton::unexplored`].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unexplored: usize,
    /// See [`Skeleton::unexplored_runs`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unexplored_runs: Vec<[usize; 2]>,
    /// See [`Skeleton::first`] (absent: `repeats`, every query asked as
    /// often).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<usize>,
    /// See [`Skeleton::short`].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub short: u64,
    /// See [`Skeleton::spent`], in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent_s: Option<f64>,
}

fn is_zero<T: Default + PartialEq>(k: &T) -> bool {
    *k == T::default()
}

impl Skeleton {
    /// `tree` with its `varying` joins, each query answered `repeats`
    /// times; no counts.
    pub fn new(tree: SummationTree, mut varying: Vec<Join>, repeats: usize) -> Self {
        varying.sort_unstable();
        Skeleton {
            tree,
            varying,
            repeats,
            first: repeats,
            most_answers: 1,
            queries: 0,
            calls: 0,
            unexplored: 0,
            unexplored_runs: Vec::new(),
            short: 0,
            spent: None,
        }
    }

    /// The skeleton a tree file records: `tree` and its `record`, whose
    /// joins must be nodes of more than two children of `tree`.
    pub fn from_record(tree: SummationTree, record: Record) -> Result<Self, String> {
        // The tree's multiway nodes, named as joins are, looked up once.
        let mut multiway: Vec<Join> = tree
            .post_order()
            .into_iter()
            .filter(|&v| tree.children(v).len() > 2)
            .map(|v| {
                let node = tree.node(v);
                Join {
                    first: node.min_leaf,
                    leaves: node.size,
                }
            })
            .collect();
        multiway.sort_unstable();
        for j in &record.varying {
            if multiway.binary_search(j).is_err() {
                return Err(format!(
                    "the varying join [{}, {}] (smallest summand, summands) is no node of more \
                     than two children of the tree",
                    j.first, j.leaves
                ));
            }
        }
        let mut s = Skeleton::new(tree, record.varying, record.repeats);
        s.most_answers = record.most_answers;
        s.queries = record.queries;
        s.calls = record.calls;
        s.unexplored = record.unexplored;
        s.unexplored_runs = record.unexplored_runs;
        s.first = record.first.unwrap_or(record.repeats);
        s.short = record.short;
        s.spent = record
            .spent_s
            .map(|t| Duration::try_from_secs_f64(t).map_err(|e| format!("spent_s {t}: {e}")))
            .transpose()?;
        Ok(s)
    }

    /// What a tree file records of it beside the tree.
    pub fn record(&self) -> Record {
        Record {
            varying: self.varying.clone(),
            repeats: self.repeats,
            most_answers: self.most_answers,
            queries: self.queries,
            calls: self.calls,
            unexplored: self.unexplored,
            unexplored_runs: self.unexplored_runs.clone(),
            first: (self.first != self.repeats).then_some(self.first),
            short: self.short,
            spent_s: self.spent.map(|t| t.as_secs_f64()),
        }
    }

    /// Whether `node` is a join whose order varies.
    pub fn is_varying(&self, node: NodeIndex) -> bool {
        let v = self.tree.node(node);
        self.varying
            .binary_search(&Join {
                first: v.min_leaf,
                leaves: v.size,
            })
            .is_ok()
    }

    /// The varying joins' nodes, children before parents.
    pub fn joins(&self) -> Vec<NodeIndex> {
        let mut joins = self.tree.post_order();
        joins.retain(|&v| self.is_varying(v));
        joins
    }

    /// Whether no join varied: the whole tree was the same on every call
    /// asked (yet the bits may vary for another reason).
    pub fn is_whole(&self) -> bool {
        self.varying.is_empty()
    }

    /// One sentence a varying join: what it joins, its fixed parts grouped
    /// where alike ("16 runs of 8 consecutive summands, each left to right,
    /// joined in an order that varies").
    pub fn describe(&self) -> Vec<String> {
        let joins = self.joins();
        let mut said: Vec<String> = joins
            .iter()
            .map(|&j| {
                let parts = self.parts(j);
                let whole = j == self.tree.root();
                let place = match whole {
                    true => String::new(),
                    false => {
                        let v = self.tree.node(j);
                        format!(
                            " (in the subtree of {} summands from {})",
                            v.size, v.min_leaf
                        )
                    }
                };
                match self.explored_parts(j) {
                    0 | 1 => format!("{parts}, joined in an order not explored{place}"),
                    _ => format!("{parts}, joined in an order that varies{place}"),
                }
            })
            .collect();
        if self.unexplored > 0 {
            let past = match self.spent {
                Some(t) => format!(", or once its {} s were spent", t.as_secs_f64()),
                None => String::new(),
            };
            said.push(format!(
                "{} summands are shown as single parts, unexplored (under joins of more than \
                 {MOST_PARTS} parts{past}): subtrees among them were not looked for",
                self.unexplored
            ));
        }
        said
    }

    /// Whether summand `leaf` was left unexplored.
    pub fn is_unexplored(&self, leaf: usize) -> bool {
        let runs = &self.unexplored_runs;
        let after = runs.partition_point(|&[first, _]| first <= leaf);
        after > 0 && leaf < runs[after - 1][0] + runs[after - 1][1]
    }

    /// The children of join `j` that are not summands left unexplored.
    fn explored_parts(&self, j: NodeIndex) -> usize {
        let unexplored = |&c: &NodeIndex| {
            self.tree
                .node(c)
                .leaf
                .is_some_and(|leaf| self.is_unexplored(leaf))
        };
        self.tree
            .children(j)
            .iter()
            .filter(|c| !unexplored(c))
            .count()
    }

    /// The children of join `j`, alike ones grouped.
    fn parts(&self, j: NodeIndex) -> String {
        let mut groups: Vec<(String, String, usize)> = Vec::new();
        for &c in self.tree.children(j) {
            let (one, many) = self.part(c);
            match groups.last_mut() {
                Some((o, _, k)) if *o == one => *k += 1,
                _ => groups.push((one, many, 1)),
            }
        }
        let said: Vec<String> = groups
            .into_iter()
            .map(|(one, many, k)| match k {
                1 => one,
                _ => format!("{k} {many}"),
            })
            .collect();
        said.join(", ")
    }

    /// Whether a varying join lies under `c`.
    fn has_join_below(&self, c: NodeIndex) -> bool {
        let mut stack = self.tree.children(c).to_vec();
        while let Some(u) = stack.pop() {
            if self.is_varying(u) {
                return true;
            }
            stack.extend(self.tree.children(u));
        }
        false
    }

    /// A fixed part, said once and said of several.
    fn part(&self, c: NodeIndex) -> (String, String) {
        let v = self.tree.node(c);
        match v.leaf {
            Some(leaf) if self.is_unexplored(leaf) => {
                return (
                    "a summand not explored".into(),
                    "summands not explored".into(),
                );
            }
            Some(_) => return ("a single summand".into(), "single summands".into()),
            None => {}
        }
        let leaves = self.tree.leaves_under(c);
        let consecutive = leaves[leaves.len() - 1] - leaves[0] + 1 == leaves.len();
        let inner = self.has_join_below(c);
        let run = match consecutive {
            true => "consecutive summands",
            false => "summands",
        };
        let how = match inner {
            true => "with varying joins inside".to_string(),
            false => match Shape::of(&self.tree.subtree(c)).order {
                Some(Order::Sequential) => "left to right".into(),
                Some(Order::Reverse) => "right to left".into(),
                Some(o) => format!("in the order native:{o}"),
                None => "in one fixed order".into(),
            },
        };
        let what = if consecutive { "run" } else { "set" };
        let size = v.size;
        let one = format!("a {what} of {size} {run}, {how}");
        let many = format!("{what}s of {size} {run}, each {how}");
        (one, many)
    }
}

impl fmt::Display for Skeleton {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_whole() {
            return write!(
                f,
                "no join varied: every masked query got the same answer on each of its calls \
                 (at least {})",
                self.first
            );
        }
        write!(f, "{}", self.describe().join("; "))
    }
}
