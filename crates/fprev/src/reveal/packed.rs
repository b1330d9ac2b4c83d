//! The packed scheduler: FPRev's BuildSubtree ([`super::subtree`]) with its
//! queries packed. Every subproblem known so far is independent of the
//! others, so their queries travel together, one per field of an input
//! ([`fields`]) and one input per row of a batched black box. As soon as a
//! subproblem's answers are in, its groups become subproblems in turn
//! (docs/ALGORITHMS.md, FPRev, Packed queries).
//!
//! A group can open sooner, while its caller still asks: the group at
//! level `L` holds `L - L'` leaves, `L'` the next level below, so once it
//! has that many it is complete. Partners are asked farthest first, so in
//! trees that add neighbours the caller's largest groups complete halfway
//! through its queries, and the chain caller, largest group, its largest
//! group, ... (about `n + n/2 + n/4 + ...` calls for a balanced tree)
//! overlaps instead of running end to end. Groups whose shape can be
//! guessed ([`guess`]) do not open early: those alike a subtree being
//! built wait for it, and a group with as many leaves as its caller's
//! subtree below it (a pairwise half) waits for that, its likely template.
//! A balanced tree then costs about `2n` queries instead of `3n`.
//!
//! A subproblem's units sit on its own leaves and on one context leaf, the
//! caller's pivot, so an answer is `l = |LCA(pivot, j) ∩ live|`: the size
//! of the LCA while it lies inside the subproblem, and `live`, one more
//! than the subproblem, when the pair meets at the caller's node. Those
//! partners are the other children of a fused node that also holds the
//! caller's subtree: they are built as one more subproblem and handed back
//! as further children of that node. Every count must stay exact with all
//! of the subproblem live, so `n` must be below the accumulator's exact
//! count; narrower accumulators go through [`super::stack`].

mod fields;
mod guess;

use std::collections::{BTreeMap, BTreeSet};

use super::Pivot;
use super::oracle::Oracle;
use super::subtree::{Built, Levels, Pivots, grow, inconsistent};
use super::watcher::Placement;
use crate::error::Result;
use crate::error::fault::Inconsistency;
use crate::tree::{SummationTree, TreeBuilder};
use fields::{Answer, Link, Packer};
use guess::{Guess, Guesses};

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
    levels: Levels,
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
    /// Answers it waits for: one per partner, or one per guessed group.
    asks: usize,
    guess: Option<Guess>,
    /// Levels whose groups wait for `group` to be guessed, not opened early.
    deferred: BTreeSet<usize>,
    /// Groups opened and not yet complete (built, with all of theirs).
    open_groups: usize,
    /// Smallest and largest leaf, once complete and binary throughout:
    /// then it may be a template.
    span: Option<(usize, usize)>,
    /// Under a wrong guess: its answers are dropped.
    void: bool,
}

impl Sub {
    fn new(
        pivot: usize,
        size: usize,
        parent: Option<(usize, usize)>,
        misses: u8,
        asks: usize,
        guess: Option<Guess>,
    ) -> Self {
        Sub {
            pivot,
            size,
            parent,
            misses,
            levels: Levels::default(),
            answered: 0,
            early: BTreeMap::new(),
            ambiguous: Vec::new(),
            check: None,
            groups: Vec::new(),
            finished: false,
            asks,
            guess,
            deferred: BTreeSet::new(),
            open_groups: 0,
            span: None,
            void: false,
        }
    }
}

struct Group {
    l: usize,
    size: usize,
    part: Part,
    built: Option<Built>,
}

/// What a group is in its caller's subtree.
#[derive(Clone, Copy)]
enum Part {
    Leaf(usize),
    Sub(usize),
    /// Waits for a scout ([`Engine::release`] makes it a `Sub`).
    Held,
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
/// accumulator's exact count. `pack` false asks one query per input;
/// `guess` guesses groups' shapes from subtrees built before them, and
/// the whole tree's from `prediction`, a binary tree of `n` leaves (see
/// [`Engine::seed`]).
pub(super) fn build(
    oracle: &mut Oracle,
    pivot: Pivot,
    placement: &mut Placement,
    pack: bool,
    guess: bool,
    prediction: Option<&SummationTree>,
) -> Result<SummationTree> {
    let n = oracle.n();
    let may_fuse = oracle.probe().may_fuse();
    let packer = Packer::new(n, oracle.masks(), may_fuse, pack);
    let mut engine = Engine {
        oracle,
        placement,
        builder: TreeBuilder::new(n),
        pivots: Pivots::new(pivot),
        packer,
        subs: Vec::new(),
        complete: Vec::new(),
        guesses: Guesses::new(guess),
    };
    let root = match n {
        1 => Some(Built::Complete(engine.builder.leaf(0))),
        _ => {
            let guess = prediction.map(|tree| engine.seed(tree));
            engine.open((0..n).collect(), None, 0, guess);
            engine.run()?;
            engine.assemble()?
        }
    };
    match root {
        Some(Built::Complete(root)) => Ok(engine.builder.finish(root)?),
        _ => Err(inconsistent(Inconsistency::NotOneTree)),
    }
}

struct Engine<'a, 'p, 'o> {
    oracle: &'a mut Oracle<'p>,
    placement: &'a mut Placement<'o>,
    builder: TreeBuilder,
    pivots: Pivots,
    packer: Packer,
    subs: Vec<Sub>,
    /// Subproblems whose answers were completed by the last call.
    complete: Vec<usize>,
    guesses: Guesses,
}

impl Engine<'_, '_, '_> {
    /// Queues `build_subtree(leaves)`, the group at level `l` of subproblem
    /// `parent = (caller, l)`. A group opened while its caller still asks
    /// is unsettled: its context leaf, the caller's pivot, is masked.
    fn open(
        &mut self,
        mut leaves: Vec<usize>,
        parent: Option<(usize, usize)>,
        misses: u8,
        guess: Option<Guess>,
    ) -> usize {
        let at = match guess {
            Some(g) => {
                let pivot = g.leaf(self.subs[g.template].pivot);
                leaves
                    .iter()
                    .position(|&j| j == pivot)
                    .expect("the guessed pivot is a leaf")
            }
            None => self.pivots.choose(&leaves, misses),
        };
        let pivot = leaves.swap_remove(at);
        self.placement.place(pivot, &self.oracle.counters);
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
                early: unsettled.then(|| c.levels.lower(level)),
            }
        });
        let (id, asks) = match guess {
            Some(g) => {
                let asks = self.guess_asks(g);
                let n = asks.len();
                (self.packer.add_asking(pivot, leaves, asks, link), n)
            }
            None => (self.packer.add(pivot, leaves, link), size - 1),
        };
        debug_assert_eq!(id, self.subs.len());
        if let Some((caller, _)) = parent {
            self.subs[caller].open_groups += 1;
        }
        self.subs
            .push(Sub::new(pivot, size, parent, misses, asks, guess));
        id
    }

    /// Asks every query, a call at a time, opening subproblems as soon as
    /// their leaves are known.
    fn run(&mut self) -> Result<()> {
        let mut outputs = Vec::new();
        while self.packer.plan(self.oracle.masks(), self.oracle.rows()) {
            outputs.clear();
            outputs.extend_from_slice(self.oracle.sum_inputs(
                self.packer.base(),
                self.packer.edits(),
                true,
            )?);
            let answers = self.packer.read(&outputs, self.oracle)?;
            tracing::trace!(inputs = outputs.len(), answers = answers.len(), "call");
            for Answer { sub, partner, l } in answers {
                let Some(l) = l else { continue };
                self.oracle.counters.queries += 1;
                self.answer(sub, partner, l)?;
            }
            // Grouping settles early groups, which changes how their
            // answers read: only once every answer of the call is in.
            while let Some(id) = self.complete.pop() {
                self.group(id)?;
            }
        }
        Ok(())
    }

    /// Records `l` for the pair (pivot of `id`, `partner`).
    fn answer(&mut self, id: usize, partner: usize, l: usize) -> Result<()> {
        if self.subs[id].void {
            return Ok(());
        }
        if let Some(g) = self.subs[id].guess {
            self.answer_guessed(id, g, partner, l);
            return Ok(());
        }
        let unsettled = self.packer.unsettled(id);
        let s = &mut self.subs[id];
        if s.check == Some(partner) {
            s.check = None;
            if l != s.size && l != s.size + 1 {
                return Err(inconsistent(Inconsistency::Context {
                    summand: s.pivot,
                    l,
                    partner,
                    size: s.size,
                }));
            }
            let ambiguous = std::mem::take(&mut s.ambiguous);
            s.levels.extend(l, ambiguous);
        } else {
            s.answered += 1;
            if unsettled && l == s.size {
                s.ambiguous.push(partner);
            } else {
                s.levels.add(partner, l);
                // After the last answer, groups open as usual.
                if s.answered < s.asks {
                    self.certify(id, l);
                }
                self.release_if_chain(id);
            }
        }
        self.mark_if_complete(id);
        Ok(())
    }

    fn mark_if_complete(&mut self, id: usize) {
        let s = &self.subs[id];
        let settled = !self.packer.unsettled(id);
        if s.answered == s.asks && settled && s.check.is_none() && !s.finished {
            self.complete.push(id);
        }
    }

    /// Opens the groups around level `l` of subproblem `id` that are known
    /// complete: a group at level `L` holds `L - L'` leaves, `L'` the next
    /// level below, so once it has that many no other leaf can join it.
    fn certify(&mut self, id: usize, l: usize) {
        let above = self.subs[id].levels.above(l);
        for level in std::iter::once(l).chain(above) {
            let s = &self.subs[id];
            let members = s.levels.members(level);
            let lower = s.levels.lower(level);
            let certain = level <= s.size && members.len() == level - lower;
            if !certain
                || members.len() < EARLY_GROUP
                || s.early.contains_key(&level)
                || s.deferred.contains(&level)
            {
                continue;
            }
            if self.defers(members, lower) {
                // Guessed once the caller is done, rather than built now.
                self.subs[id].deferred.insert(level);
                continue;
            }
            let key = self.scout_key(members);
            let members = members.to_vec();
            let child = self.open(members, Some((id, level)), 0, None);
            self.subs[id].early.insert(level, child);
            self.scout(child, key);
        }
    }

    /// Groups subproblem `id`'s partners by `l` and opens each group not
    /// opened early; those get their context leaf now.
    fn group(&mut self, id: usize) -> Result<()> {
        if self.subs[id].void {
            return Ok(());
        }
        if let Some(g) = self.subs[id].guess {
            self.group_guessed(id, g);
            return Ok(());
        }
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
        // The pivot's subtree below the group at hand.
        let mut below = vec![pivot];
        for (l, g) in by_l.into_groups() {
            let early = self.subs[id].early.get(&l).copied();
            let (part, built) = if let Some(child) = early {
                if self.subs[child].size != g.len() {
                    return Err(inconsistent(Inconsistency::ProvedComplete {
                        summand: pivot,
                        group: g.len(),
                        l,
                        proved: self.subs[child].size,
                    }));
                }
                self.settle(child, pivot);
                (Part::Sub(child), None)
            } else if let [leaf] = g[..] {
                (Part::Leaf(leaf), Some(self.lone_leaf(leaf)))
            } else {
                let part = self.open_group(g.clone(), (id, l), &below, misses);
                (part.map_or(Part::Held, Part::Sub), None)
            };
            below.extend_from_slice(&g);
            self.subs[id].groups.push(Group {
                l,
                size: g.len(),
                part,
                built,
            });
        }
        // A group at `live` reaches the caller's node: only with a context.
        debug_assert!(live > size || self.subs[id].groups.iter().all(|g| g.l <= size));
        self.release_prefixes(id);
        self.complete_up(id);
        Ok(())
    }

    /// A group of one leaf, `leaf`: placed, and built as it is.
    fn lone_leaf(&mut self, leaf: usize) -> Built {
        self.placement.place(leaf, &self.oracle.counters);
        Built::Complete(self.builder.leaf(leaf))
    }

    /// Makes subproblem `child` the group at `level` of `caller`, in place
    /// of the one held or rejected there.
    fn attach(&mut self, (caller, level): (usize, usize), child: usize) {
        let group = self.subs[caller].groups.iter_mut().find(|g| g.l == level);
        group.expect("the caller's group").part = Part::Sub(child);
    }

    /// A leaf of group `g`: its lone leaf, or its subproblem's pivot.
    fn rep(&self, g: &Group) -> usize {
        match g.part {
            Part::Leaf(leaf) => leaf,
            Part::Sub(sub) => self.subs[sub].pivot,
            Part::Held => unreachable!("a held group is read only once released"),
        }
    }

    /// Whether subproblem `id` is built, with all of its groups.
    fn is_complete(&self, id: usize) -> bool {
        let s = &self.subs[id];
        s.finished && s.open_groups == 0 && !s.void
    }

    /// Marks `id` complete if its groups are, and so on up: a complete
    /// binary subtree becomes a template.
    fn complete_up(&mut self, mut id: usize) {
        loop {
            if !self.is_complete(id) {
                return;
            }
            self.note_template(id);
            self.release(id);
            let Some((caller, _)) = self.subs[id].parent else {
                return;
            };
            self.subs[caller].open_groups -= 1;
            self.release_prefixes(caller);
            id = caller;
        }
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
            if sub.void {
                continue;
            }
            if !sub.finished {
                return Err(inconsistent(Inconsistency::Unanswered {
                    summand: sub.pivot,
                }));
            }
            let groups = std::mem::take(&mut sub.groups).into_iter().map(|g| {
                let built = g.built.expect("groups are built before their subproblem");
                (g.l, g.size, built)
            });
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
