//! FPRev's BuildSubtree (paper Algorithms 3 to 5; ALGORITHMS.md sections 5
//! and 6), with multiway (fused) nodes, an explicit stack instead of
//! recursion, and every answer checked against the tree built so far.
//!
//! `build_subtree(I)` picks a pivot `i` in `I` and measures `l_{i,j}` for all
//! other `j`: the sizes of the nodes on the path from `i` upwards. Leaves
//! sharing one `l` hang off that path at one node, so each group is built as
//! a subproblem and joined to the growing subtree `cur`: as its sibling under
//! a new binary node, or, when the group turns out to be the rest of a fused
//! node, as further children of that node.
//!
//! Two refinements keep every answer exact with few live units:
//!
//! * **Context leaf.** A subproblem's group `G` gets units only on `G` plus
//!   one leaf of `cur` (the pivot of the parent). An answer that counts that
//!   context leaf as under the LCA says "the LCA is the parent's node": `G`
//!   is not a whole subtree but the remaining children of a fused node.
//! * **Narrow accumulators.** With `L` live units, answers of `2^p` units or
//!   more may be rounded. Those `j` are exactly the leaves of the largest
//!   ancestor `A` of the pivot with at most `L - 2^p` leaves, a whole subtree
//!   of its own, so `A` is built first as a smaller subproblem and becomes
//!   `cur`; the exact answers place everything above it.

use std::collections::BTreeMap;

use petgraph::graph::NodeIndex;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::Pivot;
use super::oracle::Oracle;
use super::progress::Progress;
use crate::error::{Error, Result};
use crate::tree::{SummationTree, TreeBuilder};

/// What a subproblem built.
pub(super) enum Built {
    /// Its leaves form one complete subtree.
    Complete(NodeIndex),
    /// Its leaves are some children of a fused node that also holds the
    /// caller's `cur`: these are those children.
    Partial(Vec<NodeIndex>),
}

impl Built {
    /// The children `cur` gets beside it when this joins it.
    pub(super) fn nodes(self) -> Vec<NodeIndex> {
        match self {
            Built::Complete(root) => vec![root],
            Built::Partial(rest) => rest,
        }
    }
}

/// The pivot rule with its random state.
pub(super) struct Pivots {
    rule: Pivot,
    rng: Option<ChaCha8Rng>,
}

impl Pivots {
    pub(super) fn new(rule: Pivot) -> Self {
        Pivots {
            rule,
            rng: rule.rng(),
        }
    }

    /// The position in `leaves` of the next pivot; `misses` counts the
    /// pivots before it that hung at the top of their subproblem (see
    /// [`Pivot::Ends`]).
    pub(super) fn choose(&mut self, leaves: &[usize], misses: u8) -> usize {
        let end = |max: bool| {
            let mut at = 0;
            for (k, &x) in leaves.iter().enumerate() {
                if (x > leaves[at]) == max && x != leaves[at] {
                    at = k;
                }
            }
            at
        };
        match (self.rule, &mut self.rng, misses) {
            (Pivot::Random { .. }, Some(rng), _) | (Pivot::Ends, Some(rng), 2..) => {
                rng.random_range(0..leaves.len())
            }
            (Pivot::Ends, _, 1) => end(true),
            _ => end(false),
        }
    }
}

/// The error for answers that contradict each other.
pub(super) fn inconsistent(what: &str) -> Error {
    Error::BlackBox(format!(
        "inconsistent answers: {what}. The black box's order may depend on the values or \
         vary between calls, or it accumulates in a narrower format than declared (see --acc)"
    ))
}

/// Checks that a group of `k` leaves at `l` joins a subtree of `cur_size`
/// leaves grown from `pivot`: their LCA must hold exactly both.
pub(super) fn check_group(pivot: usize, cur_size: usize, k: usize, l: usize) -> Result<()> {
    if l == cur_size + k {
        return Ok(());
    }
    Err(inconsistent(&format!(
        "summand {pivot} has {k} summands at l = {l}, but the subtree built so far holds \
         {cur_size} leaves, so l should be {}",
        cur_size + k
    )))
}

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
    cur: NodeIndex,
    cur_size: usize,
    /// Set once the context group is built: the fused node's children.
    partial: Option<Vec<NodeIndex>>,
    waiting: Waiting,
}

/// Reveals the tree of the oracle's black box.
pub(super) fn build(
    oracle: &mut Oracle,
    pivot: Pivot,
    progress: &mut Progress,
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
        progress,
    };
    let root = engine.run()?;
    Ok(engine.builder.finish(root)?)
}

struct Engine<'a, 'p> {
    oracle: &'a mut Oracle<'p>,
    builder: TreeBuilder,
    pivots: Pivots,
    progress: &'a mut Progress,
}

/// Either a finished subproblem or a frame to push.
enum Step {
    Done(Built),
    Push(Frame),
}

impl Engine<'_, '_> {
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
                    _ => Err(inconsistent("the whole input does not form one tree")),
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
                    result = Some(self.finish(done)?);
                }
            }
        }
    }

    /// Starts `build_subtree(leaves)`; `context` is a leaf outside `leaves`
    /// that belongs to the caller's `cur`.
    fn open(&mut self, leaves: Vec<usize>, context: Option<usize>) -> Result<Step> {
        if leaves.len() == 1 {
            self.progress.place(leaves[0], self.oracle);
            return Ok(Step::Done(Built::Complete(self.builder.leaf(leaves[0]))));
        }
        let at = self.pivots.choose(&leaves, 0);
        let pivot = leaves[at];
        self.progress.place(pivot, self.oracle);
        let mut live = leaves;
        live.swap_remove(at);
        let others = live.clone();
        live.push(pivot);
        live.extend(context);
        let answers = self.oracle.lca_sizes(&live, pivot, &others)?;
        let size = others.len() + 1;
        tracing::debug!(size, pivot, context, "build_subtree");

        let mut inexact = vec![pivot];
        let mut by_l: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (&j, a) in others.iter().zip(&answers) {
            match a {
                Some(l) => by_l.entry(*l).or_default().push(j),
                None => inexact.push(j),
            }
        }
        if inexact.len() == 1 && by_l.len() == 1 && by_l.contains_key(&2) && size > 2 {
            return Err(Error::BlackBox(format!(
                "every pair of masked summands cancelled as if added first (l = 2 for all {} \
                 pairs with summand {pivot}), which no summation tree does",
                size - 1
            )));
        }
        let context_group = context.and_then(|_| by_l.remove(&live.len()));
        Ok(Step::Push(Frame {
            pivot,
            size,
            inexact: if inexact.len() > 1 {
                inexact
            } else {
                Vec::new()
            },
            groups: by_l.into_iter().collect::<Vec<_>>().into_iter(),
            context_group,
            cur: self.builder.leaf(pivot),
            cur_size: 1,
            partial: None,
            waiting: Waiting::Nothing,
        }))
    }

    /// The next subproblem of `frame`, if any, checking that the group's
    /// `l` agrees with the subtree built so far.
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

    fn absorb(&mut self, frame: &mut Frame, built: Built) -> Result<()> {
        let waiting = std::mem::replace(&mut frame.waiting, Waiting::Nothing);
        match (waiting, built) {
            (Waiting::Inexact(k), Built::Complete(root)) if self.builder.size(root) == k => {
                frame.cur = root;
                frame.cur_size = k;
            }
            (Waiting::Inexact(k), _) => {
                return Err(inconsistent(&format!(
                    "the {k} summands whose answers were inexact do not form one subtree"
                )));
            }
            (Waiting::Group { size: k, l }, built) => {
                check_group(frame.pivot, frame.cur_size, k, l)?;
                let mut children = vec![frame.cur];
                children.extend(built.nodes());
                frame.cur = self.builder.sum(&children);
                frame.cur_size += k;
            }
            (Waiting::Context, built) => {
                let mut children = vec![frame.cur];
                children.extend(built.nodes());
                frame.partial = Some(children);
            }
            (Waiting::Nothing, _) => unreachable!("a result arrived that no frame asked for"),
        }
        Ok(())
    }

    fn finish(&mut self, frame: Frame) -> Result<Built> {
        if let Some(children) = frame.partial {
            return Ok(Built::Partial(children));
        }
        if frame.cur_size != frame.size {
            return Err(inconsistent(&format!(
                "the answers for summand {} place {} of its subproblem's {} summands",
                frame.pivot, frame.cur_size, frame.size
            )));
        }
        Ok(Built::Complete(frame.cur))
    }
}
