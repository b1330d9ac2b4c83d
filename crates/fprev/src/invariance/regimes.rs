//! Regimes along one knob: the runs of its values (batch sizes, rows)
//! that found one order, for each value of the other knobs, and where
//! neighbouring runs part.

use super::Study;
use crate::document::TreeDocument;

/// A run of consecutive values of the knob that found the same thing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// The knob's values, in the order tried.
    pub values: Vec<String>,
    /// The group ([`Study::groups`]) they share.
    pub group: usize,
    /// A case of the run (its first).
    pub case: usize,
}

impl Run {
    /// The values: `1`, `2..15` (every one between tried), `16,64`.
    ///
    /// ```
    /// use fprev::invariance::Run;
    ///
    /// let run = |v: &[&str]| Run { values: v.iter().map(|s| s.to_string()).collect(), group: 0, case: 0 };
    /// assert_eq!(run(&["2", "3", "4", "9"]).span(), "2..4,9");
    /// assert_eq!(run(&["first", "last"]).span(), "first,last");
    /// ```
    pub fn span(&self) -> String {
        let numbers: Option<Vec<usize>> = self.values.iter().map(|v| v.parse().ok()).collect();
        match numbers {
            Some(n) if n.windows(2).all(|w| w[0] < w[1]) => crate::sizes::runs(&n),
            _ => self.values.join(","),
        }
    }
}

/// The runs along the knob for one value of the other knobs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regimes {
    /// The other knobs' values (the setting without the knob).
    pub rest: super::Setting,
    /// The runs, in the order the values were tried.
    pub runs: Vec<Run>,
}

/// Where two neighbouring regimes part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parting {
    /// In the order: the smallest subtree each tree has that the other
    /// lacks, as text or the summands it joins.
    Order([Option<String>; 2]),
    /// Same order; in what a node computes.
    Arithmetic(String),
    /// One side has no confirmed order to compare.
    Unknown,
}

impl Study {
    /// The regimes along knob `axis` for each value of the other knobs, in
    /// the order first seen; empty when no case has the knob.
    pub fn regimes(&self, axis: &str) -> Vec<Regimes> {
        let group_of = self.group_of();
        let mut out: Vec<Regimes> = Vec::new();
        for (i, case) in self.cases.iter().enumerate() {
            let Some(value) = case.setting.value(axis) else {
                continue;
            };
            let rest = case.setting.without(axis);
            let at = match out.iter().position(|r| r.rest == rest) {
                Some(at) => at,
                None => {
                    out.push(Regimes {
                        rest,
                        runs: Vec::new(),
                    });
                    out.len() - 1
                }
            };
            let runs = &mut out[at].runs;
            match runs.last_mut() {
                Some(run) if run.group == group_of[i] => run.values.push(value.to_string()),
                _ => runs.push(Run {
                    values: vec![value.to_string()],
                    group: group_of[i],
                    case: i,
                }),
            }
        }
        out
    }

    /// Where the findings of cases `a` and `b` part.
    pub fn parting(&self, a: usize, b: usize) -> Parting {
        let (Some(x), Some(y)) = (
            self.cases[a].observed.confirmed(),
            self.cases[b].observed.confirmed(),
        ) else {
            return Parting::Unknown;
        };
        parting(x, y)
    }
}

fn parting(x: &TreeDocument, y: &TreeDocument) -> Parting {
    if let Some(d) = x.tree().diff(y.tree()) {
        let said = |tree: &crate::SummationTree, node: Option<petgraph::graph::NodeIndex>| {
            node.map(|node| subtree_words(tree, node))
        };
        return Parting::Order([said(x.tree(), d.left), said(y.tree(), d.right)]);
    }
    match (&x.arithmetic, &y.arithmetic) {
        (Some(p), Some(q)) => match p.parting(q, x.tree()) {
            Some(how) => Parting::Arithmetic(how.to_string()),
            None => Parting::Unknown,
        },
        _ => Parting::Unknown,
    }
}

/// A subtree as text where that is short, else the summands it joins.
fn subtree_words(tree: &crate::SummationTree, node: petgraph::graph::NodeIndex) -> String {
    let text = tree.subtree_text(node);
    if text.len() <= 120 {
        return text;
    }
    let leaves = tree.leaves_under(node);
    let (first, last) = (
        leaves.iter().min().copied().unwrap_or(0),
        leaves.iter().max().copied().unwrap_or(0),
    );
    match last + 1 - first == leaves.len() {
        true => format!("a sum of the {} summands x{first}…x{last}", leaves.len()),
        false => format!(
            "a sum of {} summands from x{first} to x{last}",
            leaves.len()
        ),
    }
}
