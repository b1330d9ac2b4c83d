//! The stack scheduler: FPRev's BuildSubtree ([`super::subtree`]) one
//! subproblem at a time, depth first, one query per input, with an explicit
//! stack instead of recursion (docs/ALGORITHMS.md, FPRev). It serves black
//! boxes whose accumulator cannot count all `n` units exactly.
//!
//! **Narrow accumulators.** With `L` live units, answers of `2^p` units or
//! more may be rounded. Those `j` are exactly the leaves of the largest
//! ancestor `A` of the pivot with at most `L - 2^p` leaves, a whole subtree
//! of its own, so `A` is built first as a smaller subproblem and becomes
//! `cur`; the exact answers place everything above it (docs/ALGORITHMS.md,
//! FPRev, Narrow accumulators).

use petgraph::graph::NodeIndex;

use super::Pivot;
use super::oracle::Oracle;
use super::subtree::{Built, Cur, Levels, Pivots, inconsistent};
use super::watcher::Placement;
use crate::error::fault::{Fault, Inconsistency};
use crate::error::{Error, Result};
use crate::tree::{SummationTree, TreeBuilder};

/// What the frame on top of the stack is waiting for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waiting {
    /// Nothing yet: the frame decides its next step.
    Nothing,
    /// The inexact part, a complete subtree of this many leaves.
    Inexact(usize),
    /// An exact group of `size` leaves whose LCA with the pivot has `l`.
    Group { size: usize, l: usize },
    /// The group that shares the parent's node.
    Context,
}

/// One `build_subtree` call in progress.
struct Frame {
    pivot: usize,
    /// Leaves in this subproblem.
    size: usize,
    /// Leaves whose answers were too large to be exact, pivot included.
    inexact: Vec<usize>,
    /// Exact groups by `l`, ascending.
    groups: std::vec::IntoIter<(usize, Vec<usize>)>,
    /// Leaves whose LCA with the pivot is the parent's node.
    context_group: Option<Vec<usize>>,
    cur: Cur,
    /// Set once the context group is built: the fused node's children.
    partial: Option<Built>,
    waiting: Waiting,
}

/// Reveals the tree of the oracle's black box.
pub(super) fn build(
    oracle: &mut Oracle,
    pivot: Pivot,
    placement: &mut Placement,
) -> Result<SummationTree> {
    let n = oracle.n();
    // Ends needs to know where the last pivot hung, which this engine's
    // subproblems (built around a context leaf) do not tell: random.
    let pivot = match pivot {
        Pivot::Ends => Pivot::Random { seed: 0 },
        p => p,
    };
    let mut engine = Engine {
        oracle,
        builder: TreeBuilder::new(n),
        pivots: Pivots::new(pivot),
        placement,
    };
    let root = engine.run()?;
    Ok(engine.builder.finish(root)?)
}

struct Engine<'a, 'p, 'o> {
    oracle: &'a mut Oracle<'p>,
    builder: TreeBuilder,
    pivots: Pivots,
    placement: &'a mut Placement<'o>,
}

/// Either a finished subproblem or a frame to push.
enum Step {
    Done(Built),
    Push(Frame),
}

impl Engine<'_, '_, '_> {
    fn run(&mut self) -> Result<NodeIndex> {
        let all: Vec<usize> = (0..self.oracle.n()).collect();
        let mut stack: Vec<Frame> = Vec::new();
        let mut result = None;
        match self.open(all, None)? {
            Step::Done(b) => result = Some(b),
            Step::Push(f) => stack.push(f),
        }
        loop {
            let Some(frame) = stack.last_mut() else {
                return match result {
                    Some(Built::Complete(root)) => Ok(root),
                    _ => Err(inconsistent(Inconsistency::NotOneTree)),
                };
            };
            if let Some(built) = result.take() {
                self.absorb(frame, built)?;
            }
            match Self::next_child(frame) {
                Some((leaves, context, waiting)) => {
                    frame.waiting = waiting;
                    match self.open(leaves, context)? {
                        Step::Done(b) => result = Some(b),
                        Step::Push(f) => stack.push(f),
                    }
                }
                None => {
                    let done = stack.pop().expect("the frame just inspected");
                    result = Some(Self::finish(done)?);
                }
            }
        }
    }

    /// Starts `build_subtree(leaves)`; `context` is a leaf outside `leaves`
    /// that belongs to the caller's `cur`.
    fn open(&mut self, leaves: Vec<usize>, context: Option<usize>) -> Result<Step> {
        if leaves.len() == 1 {
            self.placement.place(leaves[0], &self.oracle.counters);
            return Ok(Step::Done(Built::Complete(self.builder.leaf(leaves[0]))));
        }
        let at = self.pivots.choose(&leaves, 0);
        let pivot = leaves[at];
        self.placement.place(pivot, &self.oracle.counters);
        let mut live = leaves;
        live.swap_remove(at);
        let others = live.clone();
        live.push(pivot);
        live.extend(context);
        let answers = self.oracle.lca_sizes(&live, pivot, &others)?;
        let size = others.len() + 1;
        tracing::debug!(size, pivot, context, "build_subtree");

        let (mut levels, inexact) = Levels::of(&others, &answers);
        if inexact.is_empty() && levels.only(2) && size > 2 {
            return Err(Error::BlackBox(Fault::PairsFirst {
                pairs: size - 1,
                pivot,
            }));
        }
        let context_group = context.and_then(|_| levels.remove(live.len()));
        Ok(Step::Push(Frame {
            pivot,
            size,
            inexact: if inexact.is_empty() {
                Vec::new()
            } else {
                std::iter::once(pivot).chain(inexact).collect()
            },
            groups: levels.into_groups().collect::<Vec<_>>().into_iter(),
            context_group,
            cur: Cur::new(&self.builder, pivot),
            partial: None,
            waiting: Waiting::Nothing,
        }))
    }

    /// The next subproblem of `frame`, if any.
    fn next_child(frame: &mut Frame) -> Option<(Vec<usize>, Option<usize>, Waiting)> {
        if frame.partial.is_some() {
            return None;
        }
        if !frame.inexact.is_empty() {
            let a = std::mem::take(&mut frame.inexact);
            let k = a.len();
            return Some((a, None, Waiting::Inexact(k)));
        }
        if let Some((l, g)) = frame.groups.next() {
            let size = g.len();
            return Some((g, Some(frame.pivot), Waiting::Group { size, l }));
        }
        frame
            .context_group
            .take()
            .map(|g| (g, Some(frame.pivot), Waiting::Context))
    }

    /// Joins what a subproblem of `frame` built to its `cur`, checking that
    /// the group's `l` agrees with the subtree built so far.
    fn absorb(&mut self, frame: &mut Frame, built: Built) -> Result<()> {
        let waiting = std::mem::replace(&mut frame.waiting, Waiting::Nothing);
        match (waiting, built) {
            (Waiting::Inexact(k), Built::Complete(root)) if self.builder.size(root) == k => {
                frame.cur.restart(root, k);
            }
            (Waiting::Inexact(k), _) => {
                return Err(inconsistent(Inconsistency::Inexact { summands: k }));
            }
            (Waiting::Group { size: k, l }, built) => {
                frame.cur.join(&mut self.builder, k, l, built)?;
            }
            (Waiting::Context, built) => frame.partial = Some(frame.cur.fuse(built)),
            (Waiting::Nothing, _) => unreachable!("a result arrived that no frame asked for"),
        }
        Ok(())
    }

    fn finish(frame: Frame) -> Result<Built> {
        match frame.partial {
            Some(partial) => Ok(partial),
            None => frame.cur.finish(frame.size),
        }
    }
}
