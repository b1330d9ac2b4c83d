//! FPRev's BuildSubtree with its queries packed: every subproblem known
//! so far is independent of the others, so their queries travel together,
//! one per bit field of an input ([`super::fields`]) and one input per row
//! of a batched black box. As soon as a subproblem's answers are in, its
//! groups become subproblems in turn.
//!
//! A subproblem's units sit on its own leaves and on one context leaf, the
//! caller's pivot, so an answer is `l = |LCA(pivot, j) ∩ live|`: the size
//! of the LCA while it lies inside the subproblem, and `live`, one more
//! than the subproblem, when the pair meets at the caller's node. Those
//! partners are the other children of a fused node that also holds the
//! caller's subtree: they are built as one more subproblem and handed back
//! as further children of that node. Every count must stay exact with all
//! of the subproblem live, so `n` must be below the accumulator's exact
//! count; narrower accumulators go through [`super::fprev`].

use std::collections::BTreeMap;

use super::Pivot;
use super::fields::{Answer, Link, Packer};
use super::fprev::{Built, Pivots, check_group, inconsistent};
use super::oracle::Oracle;
use super::progress::Progress;
use crate::error::Result;
use crate::tree::{SummationTree, TreeBuilder};

/// A subproblem: its pivot, its answers so far, and then its groups.
struct Sub {
    pivot: usize,
    size: usize,
    /// The subproblem and group it builds.
    parent: Option<(usize, usize)>,
    /// How many pivots in a row, up to this subproblem, hung at the top of
    /// theirs (see [`Pivot::Ends`]).
    misses: u8,
    answers: Vec<(usize, usize)>,
    /// Ascending by `l`, once every answer is in.
    groups: Vec<Group>,
}

struct Group {
    l: usize,
    size: usize,
    built: Option<Built>,
}

/// Reveals the tree of the oracle's black box; `n` must be below the
/// accumulator's exact count. `pack` false asks one query per input.
pub(super) fn build(
    oracle: &mut Oracle,
    pivot: Pivot,
    progress: &mut Progress,
    pack: bool,
) -> Result<SummationTree> {
    let n = oracle.n();
    let mut engine = Engine {
        builder: TreeBuilder::new(n),
        pivots: Pivots::new(pivot),
        packer: Packer::new(n, oracle.masks(), pack),
        subs: Vec::new(),
        done: Vec::new(),
    };
    let root = match n {
        1 => Some(Built::Complete(engine.builder.leaf(0))),
        _ => {
            engine.open((0..n).collect(), None, 0, oracle, progress);
            engine.run(oracle, progress)?;
            engine.assemble()?
        }
    };
    match root {
        Some(Built::Complete(root)) => Ok(engine.builder.finish(root)?),
        _ => Err(inconsistent("the whole input does not form one tree")),
    }
}

struct Engine {
    builder: TreeBuilder,
    pivots: Pivots,
    packer: Packer,
    subs: Vec<Sub>,
    /// Subproblems whose answers are all in, in that order.
    done: Vec<usize>,
}

impl Engine {
    /// Queues `build_subtree(leaves)`, the group at level `l` of
    /// subproblem `parent`, whose pivot is the context leaf.
    fn open(
        &mut self,
        mut leaves: Vec<usize>,
        parent: Option<(usize, usize)>,
        misses: u8,
        oracle: &Oracle,
        progress: &mut Progress,
    ) {
        let pivot = leaves.swap_remove(self.pivots.choose(&leaves, misses));
        progress.place(pivot, oracle);
        let size = leaves.len() + 1;
        let link = parent.map(|(caller, group)| {
            let (caller_size, level) = (self.subs[caller].size, self.subs[caller].groups[group].l);
            Link {
                caller,
                level,
                beyond: level > caller_size,
            }
        });
        let id = self.packer.add(pivot, leaves, link);
        debug_assert_eq!(id, self.subs.len());
        self.subs.push(Sub {
            pivot,
            size,
            parent,
            misses,
            answers: Vec::with_capacity(size - 1),
            groups: Vec::new(),
        });
    }

    /// Asks every query, a call at a time, opening subproblems as their
    /// callers' answers complete.
    fn run(&mut self, oracle: &mut Oracle, progress: &mut Progress) -> Result<()> {
        let mut outputs = Vec::new();
        while self.packer.plan(oracle.masks(), oracle.rows()) {
            outputs.clear();
            outputs.extend_from_slice(oracle.sum_inputs(
                self.packer.base(),
                self.packer.edits(),
                true,
            )?);
            let answers = self.packer.read(&outputs, oracle)?;
            tracing::trace!(inputs = outputs.len(), answers = answers.len(), "call");
            for Answer { sub, partner, l } in answers {
                let Some(l) = l else { continue };
                oracle.counters.queries += 1;
                let s = &mut self.subs[sub];
                s.answers.push((partner, l));
                if s.answers.len() == s.size - 1 {
                    self.group(sub, oracle, progress)?;
                }
            }
        }
        Ok(())
    }

    /// Groups subproblem `id`'s partners by `l` and opens each group.
    fn group(&mut self, id: usize, oracle: &Oracle, progress: &mut Progress) -> Result<()> {
        let sub = &mut self.subs[id];
        let (size, live, pivot) = (sub.size, self.packer.live(id), sub.pivot);
        let mut by_l: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (j, l) in std::mem::take(&mut sub.answers) {
            by_l.entry(l).or_default().push(j);
        }
        tracing::debug!(size, pivot, groups = by_l.len(), "build_subtree");
        let hung_at_top = by_l.len() == 1 && size > 2;
        let misses = if hung_at_top {
            sub.misses.saturating_add(1)
        } else {
            0
        };
        self.done.push(id);
        for (l, g) in by_l {
            let group = self.subs[id].groups.len();
            let built = if let [leaf] = g[..] {
                progress.place(leaf, oracle);
                Some(Built::Complete(self.builder.leaf(leaf)))
            } else {
                None
            };
            self.subs[id].groups.push(Group {
                l,
                size: g.len(),
                built,
            });
            if g.len() > 1 {
                self.open(g, Some((id, group)), misses, oracle, progress);
            }
        }
        // A group at `live` reaches the caller's node: only with a context.
        debug_assert!(live > size || self.subs[id].groups.iter().all(|g| g.l <= size));
        Ok(())
    }

    /// Builds the tree from the last finished subproblem back to the root.
    fn assemble(&mut self) -> Result<Option<Built>> {
        let mut root = None;
        while let Some(id) = self.done.pop() {
            let sub = &mut self.subs[id];
            let groups = std::mem::take(&mut sub.groups);
            let (pivot, size, parent) = (sub.pivot, sub.size, sub.parent);
            let built = grow(&mut self.builder, pivot, size, groups)?;
            match parent {
                Some((p, g)) => self.subs[p].groups[g].built = Some(built),
                None => root = Some(built),
            }
        }
        Ok(root)
    }
}

/// Grows the pivot's subtree group by group, checking each group's `l`.
fn grow(builder: &mut TreeBuilder, pivot: usize, size: usize, groups: Vec<Group>) -> Result<Built> {
    let mut cur = builder.leaf(pivot);
    let mut cur_size = 1;
    for group in groups {
        let built = group
            .built
            .expect("groups are built before their subproblem");
        let mut children = vec![cur];
        children.extend(built.nodes());
        if group.l > size {
            // The rest of a fused node that also holds the caller's subtree.
            return Ok(Built::Partial(children));
        }
        check_group(pivot, cur_size, group.size, group.l)?;
        cur = builder.sum(&children);
        cur_size += group.size;
    }
    Ok(Built::Complete(cur))
}
