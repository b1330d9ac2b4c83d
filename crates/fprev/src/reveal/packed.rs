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
//! overlaps instead of running end to end. Groups whose shape can be
//! guessed ([`Guess`]) do not open early: those alike a subtree being
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
//! count; narrower accumulators go through [`super::fprev`].

use std::collections::{BTreeMap, BTreeSet, HashMap};

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

/// The fewest leaves of a group whose shape is guessed (see [`Guess`]):
/// below it a wrong guess costs about what building saves.
const GUESS_FROM: usize = 16;

/// Answers of a scout, each at a level of its own, that show it a chain.
const CHAIN_SEEN: usize = 4;

/// A subproblem's shape guessed from a subtree built before it: leaf `j`
/// of the template is leaf `j + shift` here. The subproblem asks its pivot
/// against one leaf of each group the template predicts, and expects the
/// template's `l`; its groups are the template's, shifted, and are guessed
/// in turn. That is one query per node of the guessed subtree, where
/// building it asks each leaf once per node above it.
///
/// A binary subtree is the only tree those answers fit: each answer's
/// `l` counts the live leaves under the pair's lowest common ancestor,
/// and the counts leave no room for a leaf elsewhere (checked on every
/// tree of up to 6 leaves against every binary guess). One answer off,
/// anywhere below `root`, and `root` is built as usual.
///
/// The template is a complete subproblem, or the part of the caller built
/// so far: its pivot and its groups up to `top` (see
/// [`Engine::hold_for_prefix`]).
#[derive(Clone, Copy, Debug)]
struct Guess {
    template: usize,
    /// The template's highest group taken (`usize::MAX`: all of them).
    top: usize,
    shift: isize,
    /// The guessed subproblem whose leaves were measured, not guessed.
    root: usize,
}

impl Guess {
    fn leaf(&self, template_leaf: usize) -> usize {
        template_leaf.wrapping_add_signed(self.shift)
    }
}

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
/// `guess` guesses groups' shapes from subtrees built before them.
pub(super) fn build(
    oracle: &mut Oracle,
    pivot: Pivot,
    progress: &mut Progress,
    pack: bool,
    guess: bool,
) -> Result<SummationTree> {
    let n = oracle.n();
    let may_fuse = oracle.probe().may_fuse();
    let mut engine = Engine {
        builder: TreeBuilder::new(n),
        pivots: Pivots::new(pivot),
        packer: Packer::new(n, oracle.masks(), may_fuse, pack),
        subs: Vec::new(),
        complete: Vec::new(),
        guess,
        templates: HashMap::new(),
        scouts: HashMap::new(),
        waiting: HashMap::new(),
        prefix_waiters: HashMap::new(),
    };
    let root = match n {
        1 => Some(Built::Complete(engine.builder.leaf(0))),
        _ => {
            engine.open((0..n).collect(), None, 0, None, oracle, progress);
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
    guess: bool,
    /// The last complete binary subtree by [`Engine::key`]: a group alike
    /// may share its shape.
    templates: HashMap<(usize, usize), usize>,
    /// The group being built for a key no template has yet, and the groups
    /// alike that wait for it (by scout, with its key) rather than being
    /// built beside it.
    scouts: HashMap<(usize, usize), usize>,
    waiting: HashMap<usize, ((usize, usize), Vec<Waiter>)>,
    /// Groups held for the part of their caller below them, by caller,
    /// lowest first (see [`Engine::hold_for_prefix`]).
    prefix_waiters: HashMap<usize, Vec<Waiter>>,
}

/// A group held until its scout is complete.
struct Waiter {
    leaves: Vec<usize>,
    parent: (usize, usize),
    misses: u8,
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
        guess: Option<Guess>,
        oracle: &Oracle,
        progress: &mut Progress,
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
        let (id, asks) = match guess {
            // One leaf a group, the top group's first: a wrong guess
            // shows there soonest.
            Some(g) => {
                let asks: Vec<usize> = self
                    .template_groups(g)
                    .map(|t| g.leaf(self.rep(t)))
                    .collect();
                let n = asks.len();
                (self.packer.add_asking(pivot, leaves, asks, link), n)
            }
            None => (self.packer.add(pivot, leaves, link), size - 1),
        };
        debug_assert_eq!(id, self.subs.len());
        if let Some((caller, _)) = parent {
            self.subs[caller].open_groups += 1;
        }
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
            asks,
            guess,
            deferred: BTreeSet::new(),
            open_groups: 0,
            span: None,
            void: false,
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
        if self.subs[id].void {
            return Ok(());
        }
        if let Some(g) = self.subs[id].guess {
            let expected = self
                .template_groups(g)
                .find(|t| g.leaf(self.rep(t)) == partner)
                .map(|t| t.l);
            if expected != Some(l) {
                tracing::debug!(root = g.root, partner, l, ?expected, "wrong guess");
                self.reject(g.root, oracle, progress);
                return Ok(());
            }
            // Its groups are the template's: no levels to keep.
            self.subs[id].answered += 1;
            self.mark_if_complete(id);
            return Ok(());
        }
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
                if s.answered < s.asks {
                    self.certify(id, l, oracle, progress);
                }
                if self.subs[id].levels.len() == CHAIN_SEEN && self.chain(id) {
                    // A guess would ask a chain as much as building it does.
                    self.release(id, oracle, progress);
                }
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
    fn certify(&mut self, id: usize, l: usize, oracle: &Oracle, progress: &mut Progress) {
        let s = &self.subs[id];
        let above = s.levels.range(l + 1..).next().map(|(&up, _)| up);
        for level in std::iter::once(l).chain(above) {
            let s = &self.subs[id];
            let members = &s.levels[&level];
            let lower = s.lower(level);
            let certain = level <= s.size && members.len() == level - lower;
            if !certain
                || members.len() < EARLY_GROUP
                || s.early.contains_key(&level)
                || s.deferred.contains(&level)
            {
                continue;
            }
            let key = self.key(members);
            let scout = key.and_then(|k| self.scouts.get(&k)).copied();
            // As many leaves as the part below it: maybe that part shifted.
            let halves = key.is_some() && members.len() == lower;
            if halves || scout.is_some_and(|s| !self.chain(s)) || self.guess_for(members).is_some()
            {
                // Guessed once the caller is done, rather than built now.
                self.subs[id].deferred.insert(level);
                continue;
            }
            let key = key.filter(|_| scout.is_none());
            let members = members.clone();
            let child = self.open(members, Some((id, level)), 0, None, oracle, progress);
            self.subs[id].early.insert(level, child);
            self.scout(child, key);
        }
    }

    /// Groups subproblem `id`'s partners by `l` and opens each group not
    /// opened early; those get their context leaf now.
    fn group(&mut self, id: usize, oracle: &Oracle, progress: &mut Progress) -> Result<()> {
        if self.subs[id].void {
            return Ok(());
        }
        if let Some(g) = self.subs[id].guess {
            self.group_guessed(id, g, oracle, progress);
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
                (Part::Sub(child), None)
            } else if let [leaf] = g[..] {
                progress.place(leaf, oracle);
                (
                    Part::Leaf(leaf),
                    Some(Built::Complete(self.builder.leaf(leaf))),
                )
            } else {
                let part = self.open_group(g.clone(), (id, l), &below, misses, oracle, progress);
                (part.map_or(Part::Held, Part::Sub), None)
            };
            below.extend_from_slice(&g);
            let (part, built) = built;
            self.subs[id].groups.push(Group {
                l,
                size: g.len(),
                part,
                built,
            });
        }
        // A group at `live` reaches the caller's node: only with a context.
        debug_assert!(live > size || self.subs[id].groups.iter().all(|g| g.l <= size));
        self.release_prefixes(id, oracle, progress);
        self.complete_up(id, oracle, progress);
        Ok(())
    }

    /// Opens a group of an unguessed subproblem, `below` the leaves of the
    /// caller's subtree under it: guessed if a template fits; else held
    /// (`None`) for that subtree if it has the group's leaves shifted, or
    /// for a group alike being built; else built, as the scout of the
    /// groups alike that come while it is.
    fn open_group(
        &mut self,
        leaves: Vec<usize>,
        parent: (usize, usize),
        below: &[usize],
        misses: u8,
        oracle: &Oracle,
        progress: &mut Progress,
    ) -> Option<usize> {
        if let Some(guess) = self.guess_for(&leaves) {
            return Some(self.open(leaves, Some(parent), misses, Some(guess), oracle, progress));
        }
        let key = self.key(&leaves);
        let within = parent.1 <= self.subs[parent.0].size;
        if key.is_some() && within && shift_between(&leaves, below).is_some() {
            self.hold_for_prefix(leaves, parent, misses);
            return None;
        }
        if let Some(&scout) = key.and_then(|k| self.scouts.get(&k)) {
            let waiter = self.hold(leaves, parent, misses);
            self.waiting
                .get_mut(&scout)
                .expect("a scout")
                .1
                .push(waiter);
            return None;
        }
        let id = self.open(leaves, Some(parent), misses, None, oracle, progress);
        self.scout(id, key);
        Some(id)
    }

    /// Whether subproblem `id` looks like a chain so far: at least
    /// [`CHAIN_SEEN`] levels, each of one partner. Building a
    /// chain asks one query per node, as checking a guess does, so groups
    /// alike gain nothing by waiting for it.
    fn chain(&self, id: usize) -> bool {
        let s = &self.subs[id];
        s.levels.len() >= CHAIN_SEEN && s.levels.values().all(|m| m.len() == 1)
    }

    /// Makes group `id` the scout of groups alike, `key`.
    fn scout(&mut self, id: usize, key: Option<(usize, usize)>) {
        if let Some(k) = key {
            self.scouts.insert(k, id);
            self.waiting.insert(id, (k, Vec::new()));
        }
    }

    /// Opens the groups held for scout `id`, now complete: guessed where
    /// it (or another template) fits, built otherwise.
    fn release(&mut self, id: usize, oracle: &Oracle, progress: &mut Progress) {
        let Some((key, waiters)) = self.waiting.remove(&id) else {
            return;
        };
        self.scouts.remove(&key);
        for w in waiters {
            let guess = self.guess_for(&w.leaves);
            self.unhold(w, guess, oracle, progress);
        }
    }

    /// Holds the group of `leaves` at `parent = (caller, level)`: its
    /// leaves are those of the caller's subtree below it, shifted, as in
    /// pairwise halves, where no subtree built before has its shape. Once
    /// that part is complete, the group is guessed from it (see
    /// [`Engine::release_prefixes`]).
    fn hold_for_prefix(&mut self, leaves: Vec<usize>, parent: (usize, usize), misses: u8) {
        let waiter = self.hold(leaves, parent, misses);
        self.prefix_waiters
            .entry(parent.0)
            .or_default()
            .push(waiter);
    }

    /// Opens the groups of `caller` held for the part below them, lowest
    /// first, while that part is complete: guessed from it where it is
    /// binary, built otherwise.
    fn release_prefixes(&mut self, caller: usize, oracle: &Oracle, progress: &mut Progress) {
        while let Some(level) = self
            .prefix_waiters
            .get(&caller)
            .and_then(|w| w.first())
            .map(|w| w.parent.1)
        {
            let below = self.subs[caller].groups.iter().take_while(|g| g.l < level);
            let mut binary = true;
            for g in below {
                let (complete, span) = match g.part {
                    Part::Leaf(_) => (true, true),
                    Part::Sub(s) => (self.is_complete(s), self.subs[s].span.is_some()),
                    Part::Held => (false, false),
                };
                if !complete {
                    return;
                }
                binary &= span;
            }
            let w = self
                .prefix_waiters
                .get_mut(&caller)
                .expect("waiters")
                .remove(0);
            let guess = binary
                .then(|| self.guess_from(&w.leaves, caller, level - 1))
                .flatten();
            self.unhold(w, guess, oracle, progress);
        }
    }

    /// A group held in its caller (which counts it open) until it can be
    /// guessed.
    fn hold(&mut self, leaves: Vec<usize>, parent: (usize, usize), misses: u8) -> Waiter {
        self.subs[parent.0].open_groups += 1;
        Waiter {
            leaves,
            parent,
            misses,
        }
    }

    /// Opens held group `w`, guessed or not, in its place in the caller.
    fn unhold(
        &mut self,
        w: Waiter,
        guess: Option<Guess>,
        oracle: &Oracle,
        progress: &mut Progress,
    ) {
        self.subs[w.parent.0].open_groups -= 1;
        let child = self.open(w.leaves, Some(w.parent), w.misses, guess, oracle, progress);
        self.attach(w.parent, child);
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

    /// Takes guessed subproblem `id`'s groups from its template, every
    /// answer having matched, and opens each to be guessed in turn.
    fn group_guessed(&mut self, id: usize, g: Guess, oracle: &Oracle, progress: &mut Progress) {
        self.subs[id].finished = true;
        let template: Vec<(usize, usize, Part)> = self
            .template_groups(g)
            .map(|t| (t.l, t.size, t.part))
            .collect();
        for (l, size, part) in template {
            let (part, built) = match part {
                Part::Sub(t) => {
                    let guess = Guess {
                        template: t,
                        top: usize::MAX,
                        ..g
                    };
                    let leaves = self.guessed_leaves(guess);
                    let child = self.open(leaves, Some((id, l)), 0, Some(guess), oracle, progress);
                    (Part::Sub(child), None)
                }
                Part::Leaf(leaf) => {
                    let leaf = g.leaf(leaf);
                    progress.place(leaf, oracle);
                    (
                        Part::Leaf(leaf),
                        Some(Built::Complete(self.builder.leaf(leaf))),
                    )
                }
                Part::Held => unreachable!("a template is complete"),
            };
            self.subs[id].groups.push(Group {
                l,
                size,
                part,
                built,
            });
        }
        self.complete_up(id, oracle, progress);
    }

    /// A wrong guess under `root`: drops every subproblem guessed there and
    /// builds `root` anew, as if no template had fit.
    fn reject(&mut self, root: usize, oracle: &Oracle, progress: &mut Progress) {
        if self.subs[root].void {
            return;
        }
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            self.subs[id].void = true;
            self.packer.cancel(id);
            stack.extend(self.subs[id].groups.iter().filter_map(|g| match g.part {
                Part::Sub(sub) => Some(sub),
                _ => None,
            }));
        }
        let r = &self.subs[root];
        let (parent, misses, g) = (r.parent, r.misses, r.guess.expect("a guessed root"));
        let parent = parent.expect("a guessed subproblem is a group");
        let leaves = self.guessed_leaves(g);
        self.subs[parent.0].open_groups -= 1;
        let id = self.open(leaves, Some(parent), misses, None, oracle, progress);
        self.attach(parent, id);
    }

    /// The groups of guess `g`'s template it takes: those up to its top.
    fn template_groups(&self, g: Guess) -> impl Iterator<Item = &Group> {
        let groups = self.subs[g.template].groups.iter();
        groups.take_while(move |t| t.l <= g.top)
    }

    /// The leaves of a guessed subproblem: its template's, shifted.
    fn guessed_leaves(&self, g: Guess) -> Vec<usize> {
        let leaves = self.leaves_of(g.template, g.top).into_iter();
        leaves.map(|j| g.leaf(j)).collect()
    }

    /// The leaves of subproblem `id`'s subtree up to its group at `top`,
    /// once those groups are known all the way down.
    fn leaves_of(&self, id: usize, top: usize) -> Vec<usize> {
        let mut leaves = Vec::with_capacity(self.subs[id].size);
        let mut stack = vec![(id, top)];
        while let Some((s, top)) = stack.pop() {
            leaves.push(self.subs[s].pivot);
            for g in self.subs[s].groups.iter().take_while(|g| g.l <= top) {
                match g.part {
                    Part::Sub(sub) => stack.push((sub, usize::MAX)),
                    _ => leaves.push(self.rep(g)),
                }
            }
        }
        leaves
    }

    /// Leaves and span (largest leaf less smallest) of a group worth
    /// guessing: groups alike, the same leaves shifted, share it.
    fn key(&self, leaves: &[usize]) -> Option<(usize, usize)> {
        if !self.guess || leaves.len() < GUESS_FROM {
            return None;
        }
        let (lo, hi) = leaves
            .iter()
            .fold((usize::MAX, 0), |(lo, hi), &j| (lo.min(j), hi.max(j)));
        Some((leaves.len(), hi - lo))
    }

    /// A guess for the group of `leaves`, if a complete binary subtree has
    /// its leaves shifted; the group is the next subproblem opened.
    fn guess_for(&self, leaves: &[usize]) -> Option<Guess> {
        let &template = self.templates.get(&self.key(leaves)?)?;
        self.guess_from(leaves, template, usize::MAX)
    }

    /// A guess for the group of `leaves` from subproblem `template`'s
    /// subtree up to its group at `top`, if that has the same leaves
    /// shifted; the group is the next subproblem opened.
    fn guess_from(&self, leaves: &[usize], template: usize, top: usize) -> Option<Guess> {
        let shift = shift_between(leaves, &self.leaves_of(template, top))?;
        Some(Guess {
            template,
            top,
            shift,
            root: self.subs.len(),
        })
    }

    /// Whether subproblem `id` is built, with all of its groups.
    fn is_complete(&self, id: usize) -> bool {
        let s = &self.subs[id];
        s.finished && s.open_groups == 0 && !s.void
    }

    /// Marks `id` complete if its groups are, and so on up: a complete
    /// binary subtree becomes a template.
    fn complete_up(&mut self, mut id: usize, oracle: &Oracle, progress: &mut Progress) {
        loop {
            if !self.is_complete(id) {
                return;
            }
            let s = &self.subs[id];
            let mut span = Some((s.pivot, s.pivot));
            for g in &s.groups {
                let part = match g.part {
                    Part::Sub(sub) => self.subs[sub].span,
                    _ => Some((self.rep(g), self.rep(g))),
                };
                span = match (span, part) {
                    (Some(a), Some(b)) if g.l <= s.size => Some((a.0.min(b.0), a.1.max(b.1))),
                    _ => None,
                };
            }
            let (size, parent) = (s.size, s.parent);
            self.subs[id].span = span;
            if let Some((lo, hi)) = span.filter(|_| size >= GUESS_FROM) {
                tracing::debug!(size, lo, hi, "template");
                self.templates.insert((size, hi - lo), id);
            }
            self.release(id, oracle, progress);
            let Some((caller, _)) = parent else { return };
            self.subs[caller].open_groups -= 1;
            self.release_prefixes(caller, oracle, progress);
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

/// `s` such that `ours` are `theirs` plus `s`, if there is one.
fn shift_between(ours: &[usize], theirs: &[usize]) -> Option<isize> {
    if ours.is_empty() || ours.len() != theirs.len() {
        return None;
    }
    let mut ours = ours.to_vec();
    let mut theirs = theirs.to_vec();
    ours.sort_unstable();
    theirs.sort_unstable();
    let shift = ours[0] as isize - theirs[0] as isize;
    let alike = ours
        .iter()
        .zip(&theirs)
        .all(|(&a, &b)| a == b.wrapping_add_signed(shift));
    alike.then_some(shift)
}
