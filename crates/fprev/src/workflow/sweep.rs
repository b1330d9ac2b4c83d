//! Revealing one black box across sizes and thread counts, and finding the
//! change points: the sizes where its order changes shape, and the sizes
//! where it depends on the thread count (`fprev sweep`).
//!
//! ```
//! use fprev::sizes::Sizes;
//! use fprev::workflow::sweep::sweep;
//! use fprev::{Options, probe::ProbeOptions};
//!
//! let sizes: Sizes = "2..12".parse().unwrap();
//! let spec = "native:strided:4".parse().unwrap();
//! let s = sweep(&spec, &ProbeOptions::default(), &sizes, &[None], &Options::default()).unwrap();
//! // Up to 4 summands, 4 lanes of one summand each are pairwise halving.
//! let change = &s.change_points()[0];
//! assert_eq!((change.n, change.to.as_str()), (5, "strided:4"));
//! ```

mod run;

pub use run::{sweep, sweep_with};

use serde::Serialize;

use crate::arith::Arithmetic;
use crate::document::Stats;
use crate::format::Format;
use crate::formula::infer::{Inference, infer};
use crate::order::Order;
use crate::probe::Offset;
use crate::shape::Shape;
use crate::tree::SummationTree;
use crate::variation::Variation;

/// What a reveal at one size and thread count found.
#[derive(Clone, Debug)]
pub enum Finding {
    /// A tree.
    Tree(SummationTree),
    /// The same bits in every order: no tree.
    OrderIndependent,
    /// The black box broke an assumption of the method (the message says
    /// which).
    Broken(String),
    /// A tree was revealed, but its replay gave other bits than the black
    /// box on a random input: the order holds, the arithmetic is not plain
    /// additions, so the sweep names no order for this size.
    Unconfirmed(SummationTree),
    /// The black box's answer to one input changed from call to call:
    /// another order each time, so no tree describes this size (what
    /// repeating the same inputs showed).
    Varies(Variation),
}

/// One reveal of a sweep.
#[derive(Clone, Debug)]
pub struct Point {
    /// Summands.
    pub n: usize,
    /// The thread count, where the sweep set one.
    pub threads: Option<usize>,
    /// What was found.
    pub outcome: Finding,
    /// What it cost (none when the reveal failed).
    pub stats: Option<Stats>,
    /// What each node computes, where plain additions in one format do not
    /// replay the black box's bits and a model confirmed by replay does.
    pub arithmetic: Option<Arithmetic>,
    /// The format in which plain additions replayed the black box's bits,
    /// where they did.
    pub accumulator: Option<Format>,
}

impl Point {
    /// The reference orders this point's tree matches; `None` when any
    /// order does (one or two summands).
    fn class(&self) -> Class {
        match &self.outcome {
            Finding::Tree(t) if t.is_forced() => Class::Any,
            Finding::Tree(t) => match Shape::orders(t) {
                names if names.is_empty() => Class::Unrecognised,
                names => Class::Orders(names),
            },
            Finding::OrderIndependent => Class::OrderIndependent,
            Finding::Broken(_) => Class::Other("broken"),
            Finding::Unconfirmed(_) => Class::Other("not confirmed by replay"),
            Finding::Varies(_) => Class::Varies,
        }
    }

    /// What repeating the same inputs showed, where the answers varied.
    pub fn variation(&self) -> Option<&Variation> {
        match &self.outcome {
            Finding::Varies(v) => Some(v),
            _ => None,
        }
    }

    /// The tree revealed, confirmed by replay or not.
    pub fn tree(&self) -> Option<&SummationTree> {
        match &self.outcome {
            Finding::Tree(t) | Finding::Unconfirmed(t) => Some(t),
            _ => None,
        }
    }
}

/// What an order is known as over a run of sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Class {
    /// One or two summands: every order.
    Any,
    /// The reference orders that fit every size of the run.
    Orders(Vec<Order>),
    /// A tree no reference order fits.
    Unrecognised,
    /// The same bits in every order (as any one or two summands are).
    OrderIndependent,
    /// No tree the black box was seen to follow: `broken` or `not
    /// confirmed by replay`.
    Other(&'static str),
    /// Answers that change from call to call: no order at all, so no
    /// change point is claimed at such a size or across it.
    Varies,
}

impl Class {
    /// The class of a run that goes on with `next`, if the run can.
    fn extend(&self, next: &Class) -> Option<Class> {
        match (self, next) {
            // A forced tree fits every order, but not a size that broke,
            // varied, or whose tree was not confirmed.
            (Class::Any, Class::Other(_) | Class::Varies)
            | (Class::Other(_) | Class::Varies, Class::Any) => None,
            (c, Class::Any) | (Class::Any, c) => Some(c.clone()),
            (Class::Orders(a), Class::Orders(b)) => {
                let common: Vec<Order> = a.iter().filter(|o| b.contains(o)).copied().collect();
                (!common.is_empty()).then_some(Class::Orders(common))
            }
            (a, b) => (a == b).then(|| a.clone()),
        }
    }

    fn name(&self) -> String {
        match self {
            Class::Any => "any order (n <= 2)".into(),
            Class::Orders(names) => names[0].to_string(),
            Class::Unrecognised => "unrecognised".into(),
            Class::OrderIndependent => "order-independent".into(),
            Class::Other(name) => name.to_string(),
            Class::Varies => "varies".into(),
        }
    }
}

/// A run of consecutive visited sizes (indices into one thread count's
/// points) that one order name fits.
#[derive(Clone, Debug)]
pub struct Segment {
    /// The index of its first point.
    pub start: usize,
    /// The index of its last point.
    pub end: usize,
    class: Class,
}

impl Segment {
    /// The order's name over the run: a reference order, `unrecognised`,
    /// `order-independent`, `any order (n <= 2)`, `broken`, `not
    /// confirmed by replay` or `varies`.
    pub fn name(&self) -> String {
        self.class.name()
    }
}

/// Splits one thread count's points (as [`Sweep::run`] gives them) into
/// the longest runs one name fits.
pub fn segments(run: &[&Point]) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for (i, p) in run.iter().enumerate() {
        let class = p.class();
        match out
            .last_mut()
            .and_then(|s| s.class.extend(&class).map(|c| (s, c)))
        {
            Some((s, c)) => {
                s.end = i;
                s.class = c;
            }
            None => out.push(Segment {
                start: i,
                end: i,
                class,
            }),
        }
    }
    out
}

/// A size where the order's name changes, for one thread count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChangePoint {
    /// The thread count (`None`: the black box's default).
    pub threads: Option<usize>,
    /// The first size with the new order.
    pub n: usize,
    /// The order below `n`.
    pub from: String,
    /// The order from `n` on.
    pub to: String,
}

/// The reveals of a sweep, sizes in increasing order for each thread count.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The black box: its spec, or the name it was swept under.
    pub spec: String,
    /// Its input format.
    pub format: Format,
    /// Where its input array started past a 64-byte boundary, where it was
    /// handed one at an offset (`None`: where NumPy's allocation puts it).
    pub offset: Option<Offset>,
    /// The thread counts visited (`[None]`: the black box's default only).
    pub threads: Vec<Option<usize>>,
    /// Every reveal, thread count by thread count.
    pub points: Vec<Point>,
}

impl Sweep {
    /// The points of one thread count, by increasing size.
    pub fn run(&self, t: Option<usize>) -> impl Iterator<Item = &Point> {
        self.points.iter().filter(move |p| p.threads == t)
    }

    /// Where the order changes shape, for each thread count: the first size
    /// that no reference order fitting the sizes before it also fits (so
    /// that small sizes, where several orders build the same tree, do not
    /// count as changes). A size whose answers varied follows no order: no
    /// change is claimed at it, nor across it from the size before to the
    /// size after.
    pub fn change_points(&self) -> Vec<ChangePoint> {
        let mut out = Vec::new();
        for &t in &self.threads {
            let run: Vec<&Point> = self.run(t).collect();
            for pair in segments(&run).windows(2) {
                if pair.iter().any(|s| s.class == Class::Varies) {
                    continue;
                }
                out.push(ChangePoint {
                    threads: t,
                    n: run[pair[1].start].n,
                    from: pair[0].class.name(),
                    to: pair[1].class.name(),
                });
            }
        }
        out
    }

    /// The sizes whose trees differ between thread counts (modulo child
    /// order), or whose outcomes do, or whose answers varied on some thread
    /// count (no one tree there to be the same).
    pub fn thread_dependent(&self) -> Vec<usize> {
        let Some(&first) = self.threads.first() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for p in self.run(first) {
            let same = |q: &Point| match (p.tree(), q.tree()) {
                (Some(a), Some(b)) => a == b,
                _ => p.class() == q.class() && p.class() != Class::Varies,
            };
            let others = self
                .points
                .iter()
                .filter(|q| q.n == p.n && q.threads != first);
            // No tree to be the same where the first count varied, even
            // with no other count.
            if p.variation().is_some() || !others.into_iter().all(same) {
                out.push(p.n);
            }
        }
        out
    }

    /// The formula of the order language that regenerates every tree of
    /// the first thread count's run ([`crate::formula::infer`]), its
    /// switches between regimes being the order's real rule changes.
    /// `None` when the sweep starts above [`INFER_FROM_AT_MOST`] summands
    /// (a search from large trees only is slow; `fprev explain` chooses its
    /// own sizes) or reveals no tree.
    pub fn formula(&self) -> Option<Inference> {
        let t = *self.threads.first()?;
        let trees: Vec<SummationTree> = self.run(t).filter_map(|p| p.tree().cloned()).collect();
        let smallest = trees.iter().map(SummationTree::n).min()?;
        (smallest <= INFER_FROM_AT_MOST).then(|| infer(&trees))
    }

    /// Whether some revealed tree's replay gave other bits than the black box.
    pub fn any_unconfirmed(&self) -> bool {
        self.points
            .iter()
            .any(|p| matches!(p.outcome, Finding::Unconfirmed(_)))
    }

    /// Whether some reveal found the black box's answers varying from call
    /// to call.
    pub fn any_varies(&self) -> bool {
        self.points.iter().any(|p| p.variation().is_some())
    }

    /// Whether some reveal found the black box broken.
    pub fn any_broken(&self) -> bool {
        self.points
            .iter()
            .any(|p| matches!(p.outcome, Finding::Broken(_)))
    }

    /// The sweep as JSON: every point (size, threads, the name of the order
    /// over its run of sizes, depth, widest node, queries, calls, seconds,
    /// the problem of a broken one and what repeating the same inputs
    /// showed of a varying one), the change points and the
    /// thread-dependent sizes.
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct PointJson<'a> {
            n: usize,
            threads: Option<usize>,
            order: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            depth: Option<usize>,
            #[serde(skip_serializing_if = "Option::is_none")]
            widest: Option<usize>,
            #[serde(skip_serializing_if = "Option::is_none")]
            stats: Option<Stats>,
            #[serde(skip_serializing_if = "Option::is_none")]
            problem: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            arithmetic: Option<&'a Arithmetic>,
            #[serde(skip_serializing_if = "Option::is_none")]
            variation: Option<&'a Variation>,
        }
        #[derive(Serialize)]
        struct SweepJson<'a> {
            probe: &'a str,
            dtype: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            offset: Option<String>,
            threads: &'a [Option<usize>],
            points: Vec<PointJson<'a>>,
            change_points: Vec<ChangePoint>,
            #[serde(skip_serializing_if = "Option::is_none")]
            formula: Option<String>,
            thread_dependent: Vec<usize>,
        }
        let mut points = Vec::with_capacity(self.points.len());
        for &t in &self.threads {
            let run: Vec<&Point> = self.run(t).collect();
            for seg in segments(&run) {
                points.extend(run[seg.start..=seg.end].iter().map(|p| PointJson {
                    n: p.n,
                    threads: p.threads,
                    order: seg.class.name(),
                    depth: p.tree().map(SummationTree::depth),
                    widest: p.tree().map(SummationTree::widest),
                    stats: p.stats,
                    problem: match &p.outcome {
                        Finding::Broken(why) => Some(why),
                        _ => None,
                    },
                    arithmetic: p.arithmetic.as_ref(),
                    variation: p.variation(),
                }));
            }
        }
        serde_json::to_string_pretty(&SweepJson {
            probe: &self.spec,
            dtype: self.format.to_string(),
            offset: self.offset.map(|o| o.to_string()),
            threads: &self.threads,
            points,
            change_points: self.change_points(),
            formula: self
                .formula()
                .and_then(|i| i.formula)
                .map(|f| f.to_string()),
            thread_dependent: self.thread_dependent(),
        })
        .expect("a sweep serialises")
    }
}

/// Sweeps whose smallest size is at most this many summands are explained
/// by a formula.
pub const INFER_FROM_AT_MOST: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;

    fn point(n: usize, threads: usize, outcome: Finding) -> Point {
        Point {
            n,
            threads: Some(threads),
            outcome,
            stats: None,
            arithmetic: None,
            accumulator: None,
        }
    }

    #[test]
    fn a_tree_that_changes_with_the_thread_count_is_found() {
        // Two threads split 6 summands into halves; one thread goes left
        // to right; both are sequential below 4.
        let mut points = Vec::new();
        for t in [1, 2] {
            for n in 3..=6 {
                let order = if t == 2 && n >= 4 {
                    Order::Pairwise
                } else {
                    Order::Sequential
                };
                points.push(point(n, t, Finding::Tree(order.tree(n))));
            }
        }
        points.push(point(7, 1, Finding::OrderIndependent));
        points.push(point(7, 2, Finding::Broken("NaN".into())));
        let s = Sweep {
            offset: None,
            spec: "test".into(),
            format: Format::F64,
            threads: vec![Some(1), Some(2)],
            points,
        };
        assert_eq!(s.thread_dependent(), [4, 5, 6, 7]);
        let changes: Vec<(Option<usize>, usize, &str)> = s
            .change_points()
            .iter()
            .map(|c| {
                (
                    c.threads,
                    c.n,
                    if c.to == "pairwise" { "p" } else { "other" },
                )
            })
            .collect();
        // On two threads, 3 and 4 summands still fit one order (the binary
        // tree reduction), so the change shows at 5.
        assert_eq!(
            changes,
            [
                (Some(1), 7, "other"),
                (Some(2), 5, "p"),
                (Some(2), 7, "other")
            ]
        );
        assert!(s.any_broken());
    }

    #[test]
    fn no_change_point_is_claimed_at_or_across_a_size_that_varies() {
        // Left to right up to 4, pairwise from 6; at 5 the answers vary,
        // so where the order changes between 4 and 6 is not known.
        let varied = Variation {
            inputs: 8,
            runs: 4,
            varied: 3,
            most_distinct: 2,
            spread_ulps: 2.0,
            spread_relative: 1e-7,
            condition: 10.0,
            skeleton: None,
        };
        let mut points = Vec::new();
        for t in [1, 2] {
            points.push(point(3, t, Finding::Tree(Order::Sequential.tree(3))));
            points.push(point(4, t, Finding::Tree(Order::Sequential.tree(4))));
            points.push(point(5, t, Finding::Varies(varied.clone())));
            points.push(point(6, t, Finding::Tree(Order::Pairwise.tree(6))));
        }
        let s = Sweep {
            offset: None,
            spec: "test".into(),
            format: Format::F32,
            threads: vec![Some(1), Some(2)],
            points,
        };
        assert!(s.any_varies() && !s.any_broken());
        assert_eq!(s.change_points(), []);
        // Both thread counts varied at 5: not the same tree there.
        assert_eq!(s.thread_dependent(), [5]);
        let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        let at5 = &json["points"][2];
        assert_eq!(
            (at5["n"].as_u64(), at5["order"].as_str()),
            (Some(5), Some("varies"))
        );
        assert_eq!(
            at5["variation"]["varied"].as_u64(),
            Some(varied.varied as u64)
        );
        assert!(json["points"][1].get("variation").is_none());
    }
}
