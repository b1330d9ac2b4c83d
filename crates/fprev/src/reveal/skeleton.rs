//! Finding the skeleton of a black box whose order varies: FPRev's
//! BuildSubtree with every masked query asked a few times, and `repeats`
//! times in a subproblem where answers disagree (docs/ALGORITHMS.md, The fixed
//! skeleton).
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
//!
//! The argument holds for whatever calls answered, however many: asking a
//! query more often only looks harder for a call that contradicts a node.
//! So each query is asked [`Effort::first`] times, every query of a
//! subproblem where some query's answers disagreed `repeats` times, and
//! the partners of a level not kept `repeats` times more; a join that
//! varies on a fraction `p` of calls, inside a subproblem whose first
//! answers all agreed and whose levels were all kept, is missed by each
//! query crossing it with probability `(1 - p)^first`, not `(1 -
//! p)^repeats`. The search stops within its [`Effort::within`]: no
//! subproblem is started and no query asked again once it is spent, and
//! the skeleton counts what was left ([`Skeleton::unexplored`],
//! [`Skeleton::short`]).

use std::time::{Duration, Instant};

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

/// Asks of every masked query before its answers are compared: two, so
/// that one query can show its answers disagree.
pub const FIRST_ASKS: usize = 2;

/// How hard [`skeleton()`] looks, and for how long.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Effort {
    /// Asks of every masked query (1 to `repeats`).
    pub first: usize,
    /// Asks of every query of a subproblem where some query's first
    /// answers disagreed, and more asks of each partner of a level not
    /// kept, per round (1 to [`MAX_TRIALS`]).
    pub repeats: usize,
    /// Time after which no subproblem is started and no query asked
    /// again. A wall clock, not a count of calls: one call of a black box
    /// takes microseconds (a native sum) to milliseconds (a Python
    /// callable, an MPI job), so a count of calls that fits a minute for
    /// one takes hours for another; and the answers of a black box that
    /// varies are not reproducible anyway, so a clock costs no
    /// reproducibility there is.
    pub within: Duration,
}

impl Effort {
    /// Each query asked [`FIRST_ASKS`] times (or `repeats`, where fewer),
    /// `repeats` times in a subproblem whose answers disagreed, for at
    /// most `within`.
    pub fn new(repeats: usize, within: Duration) -> Self {
        Effort {
            first: FIRST_ASKS.min(repeats),
            repeats,
            within,
        }
    }
}

/// The skeleton of `probe`'s order, found with `effort`: each masked query
/// asked `effort.first` times, `effort.repeats` in a subproblem whose
/// answers disagreed.
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
/// let effort = reveal::Effort::new(8, std::time::Duration::from_secs(60));
/// let s = reveal::skeleton(&mut Turning(0), &effort, &mut reveal::Silent).unwrap();
/// assert_eq!(s.varying.len(), 1);
/// assert_eq!(
///     s.describe(),
///     vec!["4 runs of 8 consecutive summands, each left to right, joined in an order that varies"]
/// );
/// ```
pub fn skeleton(
    probe: &mut dyn Probe,
    effort: &Effort,
    watcher: &mut dyn Watcher,
) -> Result<Skeleton> {
    let n = probe.n();
    crate::memory::check_reveal(n)?;
    let repeats = effort.repeats;
    if !(1..=MAX_TRIALS).contains(&repeats) {
        return Err(Error::Input(format!(
            "a skeleton asks each masked query 1 to {} times, not {repeats}",
            MAX_TRIALS
        )));
    }
    if !(1..=repeats).contains(&effort.first) {
        return Err(Error::Input(format!(
            "a skeleton first asks each masked query 1 to {repeats} times (its repeats), not {}",
            effort.first
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
        effort: *effort,
        all: (0..n).collect(),
        pivots: Pivots::new(Pivot::Ends),
        builder: TreeBuilder::new(n),
        varying: Vec::new(),
        may_fuse,
        most_answers: 1,
        asked: 0,
        unexplored: Vec::new(),
        short: 0,
        deadline: Instant::now() + effort.within,
        spent: false,
        placement: Placement::new(n, watcher),
    };
    let root = finder.run()?;
    let Finder {
        builder,
        varying,
        most_answers,
        asked,
        unexplored,
        short,
        spent,
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
    s.first = effort.first;
    s.most_answers = most_answers;
    s.queries = asked;
    s.unexplored = unexplored.len();
    s.unexplored_runs = runs(unexplored);
    s.short = short;
    s.spent = spent.then_some(effort.within);
    s.calls = oracle.counters.calls;
    Ok(s)
}

/// `leaves` as runs `[first, count]` of consecutive summands, ascending.
fn runs(mut leaves: Vec<usize>) -> Vec<[usize; 2]> {
    leaves.sort_unstable();
    let mut runs: Vec<[usize; 2]> = Vec::new();
    for leaf in leaves {
        match runs.last_mut() {
            Some([first, count]) if *first + *count == leaf => *count += 1,
            _ => runs.push([leaf, 1]),
        }
    }
    runs
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
    effort: Effort,
    all: Vec<usize>,
    pivots: Pivots,
    builder: TreeBuilder,
    varying: Vec<NodeIndex>,
    may_fuse: bool,
    most_answers: usize,
    /// Distinct masked queries asked (each `effort.first` times or more).
    asked: u64,
    /// Summands shown one by one under a join of too many parts, or once
    /// the time was spent.
    unexplored: Vec<usize>,
    /// Queries whose asking again the spent time cut short.
    short: u64,
    /// When the time is spent.
    deadline: Instant,
    /// The time was spent.
    spent: bool,
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
                    if (l >= frame.top && frame.peels >= MOST_PARTS) || self.spent() =>
                {
                    self.unexplored.extend(&group);
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
    /// `effort.first` times each (`effort.repeats` where some disagreed),
    /// grouped by their largest.
    fn start(&mut self, set: &[usize], top: usize, misses: u8) -> Result<Frame> {
        let pivot = set[self.pivots.choose(set, misses)];
        self.placement.place(pivot, &self.oracle.counters);
        let others: Vec<usize> = set.iter().copied().filter(|&j| j != pivot).collect();
        self.asked += others.len() as u64;
        let mut seen: Vec<Vec<usize>> = vec![Vec::new(); others.len()];
        let Effort { first, repeats, .. } = self.effort;
        for _ in 0..first {
            self.ask(pivot, &others, &others, &mut seen)?;
        }
        // Answers that disagree say this subproblem varies: every query of
        // it is asked as often as any query is meant to be, since a node
        // is claimed from answers that agreed, and in a subproblem that
        // varies, few calls agree by chance (two random trees often put
        // the same pair of few live summands together).
        if seen
            .iter()
            .any(|answers| answers.iter().any(|&l| l != answers[0]))
        {
            self.ask_again(pivot, &others, &others, repeats - first, &mut seen)?;
        }
        // A level holding fewer summands than its answer is where calls
        // disagreed, or where the largest answer was not among the calls
        // asked: its partners are asked `repeats` times more, round after
        // round while that raises some answer (at most `AGAIN` rounds).
        for _ in 0..AGAIN {
            let unkept = unkept(&others, &seen, top);
            if unkept.is_empty()
                || !self.ask_again(pivot, &others, &unkept, repeats, &mut seen)?
                || self.spent
            {
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

    /// Asks `pivot` against each of `partners` (some of `others`) once,
    /// adding the answers to `seen` (one list per partner of `others`).
    fn ask(
        &mut self,
        pivot: usize,
        others: &[usize],
        partners: &[usize],
        seen: &mut [Vec<usize>],
    ) -> Result<()> {
        let said = self.oracle.lca_sizes(&self.all, pivot, partners)?;
        for (j, l) in partners.iter().zip(said) {
            let k = others.binary_search(j).expect("a partner");
            // Every count is exact (checked before the first query).
            seen[k].push(l.expect("an exact count"));
        }
        Ok(())
    }

    /// Asks `pivot` against each of `partners` `times` more, one round at
    /// a time while time is left (partners a spent time cuts short are
    /// counted in `short`); whether some largest answer rose.
    fn ask_again(
        &mut self,
        pivot: usize,
        others: &[usize],
        partners: &[usize],
        times: usize,
        seen: &mut [Vec<usize>],
    ) -> Result<bool> {
        let largest = |seen: &[Vec<usize>]| -> Vec<Option<usize>> {
            partners
                .iter()
                .map(|j| {
                    seen[others.binary_search(j).expect("a partner")]
                        .iter()
                        .max()
                        .copied()
                })
                .collect()
        };
        let before = largest(seen);
        for _ in 0..times {
            if self.spent() {
                self.short += partners.len() as u64;
                break;
            }
            self.ask(pivot, others, partners, seen)?;
        }
        Ok(largest(seen) != before)
    }

    /// Whether the time is spent: once it is, it stays so.
    fn spent(&mut self) -> bool {
        self.spent = self.spent || Instant::now() >= self.deadline;
        self.spent
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Format;
    use crate::order::Order;
    use crate::reveal::Silent;

    /// Time enough for any skeleton here.
    const AMPLE: Duration = Duration::from_secs(3600);

    /// Four chunks of 8, each left to right, their sums joined left to
    /// right, except on the calls `reversed` picks (by count), right to
    /// left.
    struct Joins<F: Fn(u64) -> bool> {
        calls: u64,
        reversed: F,
    }

    impl<F: Fn(u64) -> bool> Probe for Joins<F> {
        fn n(&self) -> usize {
            32
        }
        fn format(&self) -> Format {
            Format::F64
        }
        fn sum(&mut self, x: &[f64], out: &mut [f64]) -> Result<()> {
            self.calls += 1;
            let mut chunks: Vec<f64> = x
                .chunks(8)
                .map(|c| Order::Sequential.sum(c, Format::F64))
                .collect();
            if (self.reversed)(self.calls) {
                chunks.reverse();
            }
            out[0] = chunks.iter().fold(0.0, |s, &c| Format::F64.add(s, c));
            Ok(())
        }
    }

    const FOUR_CHAINS: &str =
        "4 runs of 8 consecutive summands, each left to right, joined in an order that varies";

    #[test]
    fn agreeing_answers_are_asked_only_the_first_times() {
        let mut fixed = Joins {
            calls: 0,
            reversed: |_| false,
        };
        let s = skeleton(&mut fixed, &Effort::new(50, AMPLE), &mut Silent).unwrap();
        assert!(s.is_whole(), "{}", s.tree);
        assert_eq!(s.first, FIRST_ASKS);
        // Every answer agreed and every level was kept: no query was asked
        // again (a few calls set the masks up).
        assert!(s.calls < (FIRST_ASKS as u64 + 1) * s.queries, "{s:?}");
        let every = Effort {
            first: 50,
            ..Effort::new(50, AMPLE)
        };
        let all = skeleton(&mut fixed, &every, &mut Silent).unwrap();
        assert_eq!(all.tree, s.tree);
        assert!(all.calls >= 50 * all.queries, "{all:?}");
    }

    #[test]
    fn a_join_that_varies_on_every_third_call_is_found_asking_twice_first() {
        let mut seldom = Joins {
            calls: 0,
            reversed: |k| k % 3 == 0,
        };
        let s = skeleton(&mut seldom, &Effort::new(20, AMPLE), &mut Silent).unwrap();
        assert_eq!(s.describe(), vec![FOUR_CHAINS]);
        assert_eq!((s.first, s.repeats, s.short, s.spent), (2, 20, 0, None));
        // The queries across chunks disagreed: every query of the whole
        // sum was asked 20 times.
        assert!(s.calls >= 20 * 31, "{s:?}");
    }

    #[test]
    fn a_spent_time_leaves_parts_unexplored_and_says_so() {
        let mut turning = Joins {
            calls: 0,
            reversed: |k| k % 2 == 0,
        };
        let none = Effort::new(20, Duration::ZERO);
        let s = skeleton(&mut turning, &none, &mut Silent).unwrap();
        assert_eq!(s.spent, Some(Duration::ZERO));
        // The pivot's answers were asked twice, nothing more: the levels
        // beyond its chunk are single summands.
        assert_eq!(s.queries, 31);
        assert!(s.short > 0, "{s:?}");
        assert_eq!(s.unexplored, 24, "{}", s.tree);
        // The summands past the pivot's chunk, and no join is claimed to
        // vary from them alone.
        assert_eq!(s.unexplored_runs, vec![[8, 24]]);
        assert!(s.is_unexplored(8) && s.is_unexplored(31) && !s.is_unexplored(7));
        assert_eq!(
            s.describe(),
            vec![
                "a run of 8 consecutive summands, left to right, 24 summands not explored, \
                 joined in an order not explored",
                "24 summands are shown as single parts, unexplored (under joins of more than 64 \
                 parts, or once its 0 s were spent): subtrees among them were not looked for",
            ]
        );
        let again = Skeleton::from_record(s.tree.clone(), s.record()).unwrap();
        assert_eq!(again, s);
    }
}
