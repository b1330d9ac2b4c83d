//! FPRev's BuildSubtree with its queries packed: every subproblem known
//! so far is independent of the others, so their queries travel together,
//! one per field of an input ([`super::fields`]) and one input per row
//! of a batched black box. As soon as a subproblem's answers are in, its
//! groups become subproblems in turn.
//!
//! A group can open sooner, while its caller still asks: the group at
//! level `L` holds `L - L'` leaves, `L'` the next level below, so once it
//! has that many it is complete. Partners are asked farthest first, so in
//! trees that add neighbours the caller's largest groups complete halfway
//! through its queries, and the chain caller, largest group, its largest
//! group, ... (about `n + n/2 + n/4 + ...` calls for a balanced tree)
//! overlaps instead of running end to end.
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

/// The fewest leaves of a group opened early. Small groups gain little by
/// it, and a caller that shares inputs with its own groups reads its
/// answers from inputs with more masks: the fewer leaves, the likelier a
/// black box whose order changes with the masks (not a summation tree)
/// gives answers that still fit together, into a tree of neither order.
const EARLY_GROUP: usize = 64;

/// A subproblem: its pivot, its answers so far, and then its groups.
struct Sub {
    pivot: usize,
    size: usize,
    /// The subproblem it builds a group of, and that group's level there.
    parent: Option<(usize, usize)>,
    /// How many pivots in a row, up to this subproblem, hung at the top of
    /// theirs (see [`Pivot::Ends`]).
    misses: u8,
    /// Partners by `l`, as the answers come in.
    levels: BTreeMap<usize, Vec<usize>>,
    answered: usize,
    /// Groups opened before every answer was in: level, subproblem.
    early: BTreeMap<usize, usize>,
    /// Partners that answered `size` while unsettled (see
    /// [`Packer::unsettled`]).
    ambiguous: Vec<usize>,
    /// One of them, asked again with the context leaf: its answer is theirs.
    check: Option<usize>,
    /// Ascending by `l`, once every answer is in.
    groups: Vec<Group>,
    finished: bool,
}

impl Sub {
    /// The level below `level` (1: the pivot alone).
    fn lower(&self, level: usize) -> usize {
        self.levels
            .range(..level)
            .next_back()
            .map_or(1, |(&k, _)| k)
    }
}

struct Group {
    l: usize,
    size: usize,
    built: Option<Built>,
}

/// Whether queries of `n` summands are worth packing. Below 32 they are
/// not: packing would save a few calls, and the fewer the leaves, the
/// likelier answers from inputs with more masks fit together into a tree
/// where the black box's order changes with the masks (measured on random
/// trees: about 1% of reveals from 8 to 16 summands, none from 24 up).
pub(super) fn worth_packing(n: usize) -> bool {
    n >= 32
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
    let may_fuse = oracle.probe().may_fuse();
    let mut engine = Engine {
        builder: TreeBuilder::new(n),
        pivots: Pivots::new(pivot),
        packer: Packer::new(n, oracle.masks(), may_fuse, pack),
        subs: Vec::new(),
        complete: Vec::new(),
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
    /// Subproblems whose answers were completed by the last call.
    complete: Vec<usize>,
}

impl Engine {
    /// Queues `build_subtree(leaves)`, the group at level `l` of subproblem
    /// `parent = (caller, l)`. A group opened while its caller still asks
    /// is unsettled: its context leaf, the caller's pivot, is masked.
    fn open(
        &mut self,
        mut leaves: Vec<usize>,
        parent: Option<(usize, usize)>,
        misses: u8,
        oracle: &Oracle,
        progress: &mut Progress,
    ) -> usize {
        let pivot = leaves.swap_remove(self.pivots.choose(&leaves, misses));
        progress.place(pivot, oracle);
        let size = leaves.len() + 1;
        // Farthest partners first: in trees that add neighbours early they
        // sit high, so the caller's top groups complete early.
        leaves.sort_unstable_by_key(|&j| j.abs_diff(pivot));
        let unsettled = parent.is_some_and(|(caller, _)| !self.subs[caller].finished);
        let link = parent.map(|(caller, level)| {
            let c = &self.subs[caller];
            Link {
                caller,
                level,
                beyond: level > c.size,
                early: unsettled.then(|| c.lower(level)),
            }
        });
        let id = self.packer.add(pivot, leaves, link);
        debug_assert_eq!(id, self.subs.len());
        self.subs.push(Sub {
            pivot,
            size,
            parent,
            misses,
            levels: BTreeMap::new(),
            answered: 0,
            early: BTreeMap::new(),
            ambiguous: Vec::new(),
            check: None,
            groups: Vec::new(),
            finished: false,
        });
        id
    }

    /// Asks every query, a call at a time, opening subproblems as soon as
    /// their leaves are known.
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
                self.answer(sub, partner, l, oracle, progress)?;
            }
            // Grouping settles early groups, which changes how their
            // answers read: only once every answer of the call is in.
            while let Some(id) = self.complete.pop() {
                self.group(id, oracle, progress)?;
            }
        }
        Ok(())
    }

    /// Records `l` for the pair (pivot of `id`, `partner`).
    fn answer(
        &mut self,
        id: usize,
        partner: usize,
        l: usize,
        oracle: &Oracle,
        progress: &mut Progress,
    ) -> Result<()> {
        let unsettled = self.packer.unsettled(id);
        let s = &mut self.subs[id];
        if s.check == Some(partner) {
            s.check = None;
            if l != s.size && l != s.size + 1 {
                return Err(inconsistent(&format!(
                    "summand {} answered l = {l} with {partner}, but {} without the context leaf",
                    s.pivot, s.size
                )));
            }
            let ambiguous = std::mem::take(&mut s.ambiguous);
            s.levels.entry(l).or_default().extend(ambiguous);
        } else {
            s.answered += 1;
            if unsettled && l == s.size {
                s.ambiguous.push(partner);
            } else {
                s.levels.entry(l).or_default().push(partner);
                // After the last answer, groups open as usual.
                if s.answered + 1 < s.size {
                    self.certify(id, l, oracle, progress);
                }
            }
        }
        self.mark_if_complete(id);
        Ok(())
    }

    fn mark_if_complete(&mut self, id: usize) {
        let s = &self.subs[id];
        let settled = !self.packer.unsettled(id);
        if s.answered + 1 == s.size && settled && s.check.is_none() && !s.finished {
            self.complete.push(id);
        }
    }

    /// Opens the groups around level `l` of subproblem `id` that are known
    /// complete: a group at level `L` holds `L - L'` leaves, `L'` the next
    /// level below, so once it has that many no other leaf can join it.
    fn certify(&mut self, id: usize, l: usize, oracle: &Oracle, progress: &mut Progress) {
        let s = &self.subs[id];
        let above = s.levels.range(l + 1..).next().map(|(&up, _)| up);
        for level in std::iter::once(l).chain(above) {
            let s = &self.subs[id];
            let members = &s.levels[&level];
            let lower = s.lower(level);
            let certain = level <= s.size && members.len() == level - lower;
            if !certain || members.len() < EARLY_GROUP || s.early.contains_key(&level) {
                continue;
            }
            let members = members.clone();
            let child = self.open(members, Some((id, level)), 0, oracle, progress);
            self.subs[id].early.insert(level, child);
        }
    }

    /// Groups subproblem `id`'s partners by `l` and opens each group not
    /// opened early; those get their context leaf now.
    fn group(&mut self, id: usize, oracle: &Oracle, progress: &mut Progress) -> Result<()> {
        let sub = &mut self.subs[id];
        sub.finished = true;
        let (size, live, pivot) = (sub.size, self.packer.live(id), sub.pivot);
        let by_l = std::mem::take(&mut sub.levels);
        tracing::debug!(size, pivot, groups = by_l.len(), "build_subtree");
        let hung_at_top = by_l.len() == 1 && size > 2;
        let misses = if hung_at_top {
            sub.misses.saturating_add(1)
        } else {
            0
        };
        for (l, g) in by_l {
            let early = self.subs[id].early.get(&l).copied();
            let built = if let Some(child) = early {
                if self.subs[child].size != g.len() {
                    return Err(inconsistent(&format!(
                        "summand {pivot} has {} summands at l = {l}, after {} proved the group \
                         complete",
                        g.len(),
                        self.subs[child].size
                    )));
                }
                self.settle(child, pivot);
                None
            } else if let [leaf] = g[..] {
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
            if g.len() > 1 && early.is_none() {
                self.open(g, Some((id, l)), misses, oracle, progress);
            }
        }
        // A group at `live` reaches the caller's node: only with a context.
        debug_assert!(live > size || self.subs[id].groups.iter().all(|g| g.l <= size));
        Ok(())
    }

    /// Gives early group `id` its context leaf, the caller's pivot, now
    /// free; one of its ambiguous partners is asked again with it.
    fn settle(&mut self, id: usize, context: usize) {
        self.packer.settle(id, context);
        let s = &mut self.subs[id];
        if let Some(&j) = s.ambiguous.first() {
            s.check = Some(j);
            self.packer.ask(id, j);
        }
        self.mark_if_complete(id);
    }

    /// Builds the tree from the last subproblem opened back to the root:
    /// every group opens after the subproblem it belongs to.
    fn assemble(&mut self) -> Result<Option<Built>> {
        let mut root = None;
        for id in (0..self.subs.len()).rev() {
            let sub = &mut self.subs[id];
            if !sub.finished {
                return Err(inconsistent(&format!(
                    "summand {} never had all its answers",
                    sub.pivot
                )));
            }
            let groups = std::mem::take(&mut sub.groups);
            let (pivot, size, parent) = (sub.pivot, sub.size, sub.parent);
            let built = grow(&mut self.builder, pivot, size, groups)?;
            match parent {
                Some((p, l)) => {
                    let groups = &mut self.subs[p].groups;
                    let at = groups.partition_point(|g| g.l < l);
                    groups[at].built = Some(built);
                }
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
