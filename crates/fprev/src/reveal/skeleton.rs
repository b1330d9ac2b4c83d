//! Finding the skeleton of a black box whose order varies: FPRev's
//! BuildSubtree with every masked query asked `repeats` times
//! (docs/ALGORITHMS.md, The fixed skeleton).
//!
//! Each call sums along some tree `T_r`, and the masked input for `i, j`
//! answers `l_r(i, j)`, the summands under their lowest common ancestor in
//! `T_r`. Taking the largest answer of all calls, `L(i, j) = max_r l_r(i,
//! j)`, the pivot's partners group by `L` as in any reveal, ascending. The
//! set `C` of the pivot and every partner up to level `t` is a subtree of
//! *every* `T_r` when it holds exactly `t` summands: in each call the
//! smallest subtree holding the pivot and any partner of `C` has at most
//! `t` summands, so the largest subtree around the pivot of at most `t`
//! summands holds all of `C`, and being at most `t` it is `C`. Such a level
//! is kept as a node; a level holding fewer summands than its `L` (the
//! calls disagreed below it) is not, and its parts join the next kept
//! level together: a node of more than two children, a *varying join*.
//!
//! Every node of the skeleton is a subtree of every call's tree (as far as
//! each call's answer shows); every node of two children is an addition
//! whose operands are the same in every call. A join shown varying was not
//! pinned down by the answers: it may hold fixed additions that the calls'
//! disagreement hides.

use petgraph::graph::NodeIndex;

use super::Pivot;
use super::oracle::Oracle;
use super::subtree::Pivots;
use super::watcher::{Placement, Watcher};
use crate::check::MAX_TRIALS;
use crate::error::{Error, Result};
use crate::probe::Probe;
use crate::skeleton::{Join, MOST_PARTS, Skeleton};
use crate::tree::TreeBuilder;

/// The skeleton of `probe`'s order, each masked query asked `repeats`
/// times: about `repeats` times the calls of a reveal of the skeleton.
///
/// ```
/// use fprev::{Format, Order, Probe, reveal};
///
/// /// Four chunks of 8, each left to right, the chunk sums joined in an
/// /// order that turns every call.
/// struct Turning(usize);
/// impl Probe for Turning {
///     fn n(&self) -> usize { 32 }
///     fn format(&self) -> Format { Format::F64 }
///     fn sum(&mut self, x: &[f64], out: &mut [f64]) -> fprev::Result<()> {
///         self.0 += 1;
///         let chunks: Vec<f64> = x.chunks(8).map(|c| Order::Sequential.sum(c, Format::F64)).collect();
///         out[0] = (0..4).map(|k| chunks[(k + self.0) % 4]).sum();
///         Ok(())
///     }
/// }
///
/// let s = reveal::skeleton(&mut Turning(0), 8, &mut reveal::Silent).unwrap();
/// assert_eq!(s.varying.len(), 1);
/// assert_eq!(
///     s.describe(),
///     vec!["4 runs of 8 consecutive summands, each left to right, joined in an order that varies"]
/// );
/// ```
pub fn skeleton(
    probe: &mut dyn Probe,
    repeats: usize,
    watcher: &mut dyn Watcher,
) -> Result<Skeleton> {
    let n = probe.n();
    crate::memory::check_reveal(n)?;
    if !(1..=MAX_TRIALS).contains(&repeats) {
        return Err(Error::Input(format!(
            "a skeleton asks each masked query 1 to {} times, not {repeats}",
            MAX_TRIALS
        )));
    }
    let may_fuse = probe.may_fuse();
    let mut oracle = Oracle::new(probe)?;
    if !super::counts_exactly(n, oracle.masks()) {
        return Err(Error::Input(format!(
            "a skeleton of {n} summands needs counts of up to {n} units to be exact, more than \
             the accumulator counts ({}); try a smaller -n",
            oracle.masks().exact_below
        )));
    }
    watcher.started(n);
    let mut finder = Finder {
        oracle: &mut oracle,
        repeats,
        all: (0..n).collect(),
        pivots: Pivots::new(Pivot::Ends),
        builder: TreeBuilder::new(n),
        varying: Vec::new(),
        may_fuse,
        most_answers: 1,
        asked: 0,
        unexplored: 0,
        budget: budget(n, repeats),
        placement: Placement::new(n, watcher),
    };
    let root = finder.run()?;
    let Finder {
        builder,
        varying,
        most_answers,
        asked,
        unexplored,
        ..
    } = finder;
    watcher.finished();
    let tree = builder.finish(root)?;
    let joins = varying
        .into_iter()
        .map(|v| {
            let node = tree.node(v);
            Join {
                first: node.min_leaf,
                leaves: node.size,
            }
        })
        .collect();
    let mut s = Skeleton::new(tree, joins, repeats);
    s.most_answers = most_answers;
    s.queries = asked;
    s.unexplored = unexplored;
    s.calls = oracle.counters.calls;
    Ok(s)
}

/// One subproblem: the summands that met the caller's pivot at `top`,
/// grown from a pivot of their own, level by level.
struct Frame {
    /// The caller's level: answers at or above it join the caller's node.
    top: usize,
    /// The levels still to build, ascending, with their summands.
    levels: std::vec::IntoIter<(usize, Vec<usize>)>,
    /// The level being built as a subproblem, and its count of summands.
    waiting: (usize, usize),
    /// The kept subtree grown from the pivot, and the parts of levels not
    /// kept since, which join the next kept level together.
    cur: Vec<NodeIndex>,
    /// Summands in `cur`.
    size: usize,
    /// Parts that join the caller's node.
    above: Vec<NodeIndex>,
    /// Some answer of this pivot's changed between calls.
    changed: bool,
    /// Pivots before this one that hung at the top of their subproblem.
    misses: u8,
    /// Parts of the caller's join found before this subproblem's, one
    /// subproblem inside the other.
    peels: usize,
}

struct Finder<'a, 'p, 'o> {
    oracle: &'a mut Oracle<'p>,
    repeats: usize,
    all: Vec<usize>,
    pivots: Pivots,
    builder: TreeBuilder,
    varying: Vec<NodeIndex>,
    may_fuse: bool,
    most_answers: usize,
    /// Distinct masked queries asked (each `repeats` times or more).
    asked: u64,
    /// Summands shown one by one under a join of too many parts.
    unexplored: usize,
    /// Calls after which no subproblem is started.
    budget: u64,
    placement: Placement<'o>,
}

impl Finder<'_, '_, '_> {
    /// Builds every subproblem with an explicit stack (a chain nests as
    /// deep as it is long) and returns the root.
    fn run(&mut self) -> Result<NodeIndex> {
        let n = self.all.len();
        if n == 1 {
            return Ok(self.builder.leaf(0));
        }
        let all = self.all.clone();
        let mut stack = vec![self.start(&all, n, 0)?];
        loop {
            let frame = stack.last_mut().expect("the stack holds the root's frame");
            match frame.levels.next() {
                Some((l, group)) if group.len() == 1 => {
                    self.placement.place(group[0], &self.oracle.counters);
                    let leaf = self.builder.leaf(group[0]);
                    self.give(frame, l, 1, vec![leaf]);
                }
                // A join of more parts than are worth finding one by one
                // (each costs a pass over the rest): the rest is shown
                // summand by summand, said to be unexplored.
                Some((l, group))
                    if (l >= frame.top && frame.peels >= MOST_PARTS)
                        || self.oracle.counters.calls >= self.budget =>
                {
                    self.unexplored += group.len();
                    for &j in &group {
                        self.placement.place(j, &self.oracle.counters);
                    }
                    let leaves = group.iter().map(|&j| self.builder.leaf(j)).collect();
                    self.give(frame, l, group.len(), leaves);
                }
                Some((l, group)) => {
                    frame.waiting = (l, group.len());
                    let peels = match l >= frame.top {
                        true => frame.peels + 1,
                        false => 0,
                    };
                    let misses = match frame.levels.len() == 0 && frame.size == 1 {
                        true => frame.misses.saturating_add(1),
                        false => 0,
                    };
                    let mut next = self.start(&group, l.min(frame.top), misses)?;
                    next.peels = peels;
                    stack.push(next);
                }
                None => {
                    let done = stack.pop().expect("a frame to finish");
                    let mut parts = done.cur;
                    parts.extend(done.above);
                    match stack.last_mut() {
                        Some(caller) => {
                            let (l, k) = caller.waiting;
                            self.give(caller, l, k, parts);
                        }
                        None if parts.len() == 1 => return Ok(parts[0]),
                        None => {
                            let root = self.builder.sum(&parts);
                            if parts.len() > 2 && (!self.may_fuse || done.changed) {
                                self.varying.push(root);
                            }
                            return Ok(root);
                        }
                    }
                }
            }
        }
    }

    /// The frame of the subproblem `set` (at least two summands), which
    /// met its caller's pivot at `top`: its pivot's answers, asked
    /// `repeats` times each, grouped by their largest.
    fn start(&mut self, set: &[usize], top: usize, misses: u8) -> Result<Frame> {
        let pivot = set[self.pivots.choose(set, misses)];
        self.placement.place(pivot, &self.oracle.counters);
        let others: Vec<usize> = set.iter().copied().filter(|&j| j != pivot).collect();
        self.asked += others.len() as u64;
        let mut seen: Vec<Vec<usize>> = vec![Vec::new(); others.len()];
        self.ask(pivot, &others, &mut seen)?;
        // A level holding fewer summands than its answer is where calls
        // disagreed, or where the largest answer was not among the calls
        // asked: its partners are asked as often again, round after round
        // while that raises some answer (at most `AGAIN` rounds).
        for _ in 0..AGAIN {
            let unkept = unkept(&others, &seen, top);
            if unkept.is_empty() {
                break;
            }
            let mut again: Vec<Vec<usize>> = vec![Vec::new(); unkept.len()];
            self.ask(pivot, &unkept, &mut again)?;
            let mut raised = false;
            for (j, more) in unkept.iter().zip(again) {
                let k = others.binary_search(j).expect("a partner");
                let before = seen[k].iter().max().copied();
                seen[k].extend(more);
                raised |= seen[k].iter().max().copied() > before;
            }
            if !raised {
                break;
            }
        }
        let mut changed = false;
        for answers in &mut seen {
            answers.sort_unstable();
            answers.dedup();
            self.most_answers = self.most_answers.max(answers.len());
            changed |= answers.len() > 1;
        }
        let cur = vec![self.builder.leaf(pivot)];
        Ok(Frame {
            top,
            levels: group(&others, &seen, top).into_iter(),
            waiting: (0, 0),
            cur,
            size: 1,
            above: Vec::new(),
            changed,
            misses,
            peels: 0,
        })
    }

    /// Asks `pivot` against each of `others` `repeats` times, adding the
    /// answers to `seen`.
    fn ask(&mut self, pivot: usize, others: &[usize], seen: &mut [Vec<usize>]) -> Result<()> {
        for _ in 0..self.repeats {
            let said = self.oracle.lca_sizes(&self.all, pivot, others)?;
            for (answers, l) in seen.iter_mut().zip(said) {
                // Every count is exact (checked before the first query).
                answers.push(l.expect("an exact count"));
            }
        }
        Ok(())
    }

    /// Hands `frame` the parts built of the `k` summands at level `l`: a
    /// kept level becomes a node over the parts gathered since the last.
    fn give(&mut self, frame: &mut Frame, l: usize, k: usize, parts: Vec<NodeIndex>) {
        if l >= frame.top {
            frame.above.extend(parts);
            return;
        }
        frame.cur.extend(parts);
        frame.size += k;
        if frame.size == l {
            let node = self.builder.sum(&frame.cur);
            if frame.cur.len() > 2 && (!self.may_fuse || frame.changed) {
                self.varying.push(node);
            }
            frame.cur = vec![node];
        }
    }
}

/// Calls after which [`skeleton()`] starts no subproblem: `4 n repeats`,
/// and at least 1,600,000 (about four times what a skeleton of a few
/// chains at `n = 100,000` takes with 4 calls a query).
pub fn budget(n: usize, repeats: usize) -> u64 {
    (4 * n as u64 * repeats as u64).max(1_600_000)
}

/// Rounds of asking again the partners of levels not kept.
const AGAIN: usize = 4;

/// The partners at levels below `top` that hold fewer summands than their
/// answer, with the pivot and every level below.
fn unkept(others: &[usize], seen: &[Vec<usize>], top: usize) -> Vec<usize> {
    let mut size = 1;
    let mut unkept = Vec::new();
    for (l, members) in group(others, seen, top) {
        size += members.len();
        if l < top && size != l {
            unkept.extend(members);
        }
    }
    unkept.sort_unstable();
    unkept
}

/// The partners grouped by their largest answer (at most `top`),
/// ascending.
fn group(others: &[usize], seen: &[Vec<usize>], top: usize) -> Vec<(usize, Vec<usize>)> {
    let mut levels = std::collections::BTreeMap::<usize, Vec<usize>>::new();
    for (&j, answers) in others.iter().zip(seen) {
        let largest = answers.iter().copied().max().expect("at least one call");
        levels.entry(largest.min(top)).or_default().push(j);
    }
    levels.into_iter().collect()
}
