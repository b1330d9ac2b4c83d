//! Guessing a group's shape from a subtree built before it (`--no-guess`
//! turns it off). Blocked and pairwise sums repeat one shape, shifted:
//! checking a guess asks one query per node of the guessed subtree, where
//! building it asks each leaf once per node above it (docs/ALGORITHMS.md,
//! FPRev, Guessed shapes).
//!
//! The first group of a kind (its leaf count and span, [`Engine::key`]) is
//! built as the scout of the groups alike, which wait for it rather than
//! being built beside it. Once it is complete and binary throughout, it is
//! a template, and they are guessed from it. A group with as many leaves as
//! its caller's subtree below it (a pairwise half) waits for that part of
//! its caller instead, its likely template.

use std::collections::HashMap;

use super::{Engine, Group, Part, Sub};
use crate::tree::SummationTree;

/// The fewest leaves of a group whose shape is guessed (see [`Guess`]):
/// below it a wrong guess costs about what building saves.
const GUESS_FROM: usize = 16;

/// Answers of a scout, each at a level of its own, that show it a chain.
const CHAIN_SEEN: usize = 4;

/// What groups alike share: their leaf count and span (largest leaf less
/// smallest).
type Key = (usize, usize);

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
pub(super) struct Guess {
    pub(super) template: usize,
    /// The template's highest group taken (`usize::MAX`: all of them).
    top: usize,
    shift: isize,
    /// The guessed subproblem whose leaves were measured, not guessed.
    root: usize,
}

impl Guess {
    /// The leaf here that is `template_leaf` in the template.
    pub(super) fn leaf(&self, template_leaf: usize) -> usize {
        template_leaf.wrapping_add_signed(self.shift)
    }
}

/// The templates, the scouts and the groups waiting for either.
pub(super) struct Guesses {
    enabled: bool,
    /// The last complete binary subtree by [`Engine::key`]: a group alike
    /// may share its shape.
    templates: HashMap<Key, usize>,
    /// The group being built for a key no template has yet, and the groups
    /// alike that wait for it (by scout, with its key) rather than being
    /// built beside it.
    scouts: HashMap<Key, usize>,
    waiting: HashMap<usize, (Key, Vec<Waiter>)>,
    /// Groups held for the part of their caller below them, by caller,
    /// lowest first (see [`Engine::hold_for_prefix`]).
    prefix_waiters: HashMap<usize, Vec<Waiter>>,
}

impl Guesses {
    /// No templates yet; `enabled` false guesses nothing.
    pub(super) fn new(enabled: bool) -> Self {
        Guesses {
            enabled,
            templates: HashMap::new(),
            scouts: HashMap::new(),
            waiting: HashMap::new(),
            prefix_waiters: HashMap::new(),
        }
    }
}

/// A group held until its scout is complete.
struct Waiter {
    leaves: Vec<usize>,
    parent: (usize, usize),
    misses: u8,
}

impl Engine<'_, '_, '_> {
    /// The partners guessed subproblem `g` asks: one leaf a group, the top
    /// group's first (a wrong guess shows there soonest).
    pub(super) fn guess_asks(&self, g: Guess) -> Vec<usize> {
        self.template_groups(g)
            .map(|t| g.leaf(self.rep(t)))
            .collect()
    }

    /// Checks the answer `l` of guessed subproblem `id` with `partner`
    /// against the template's; a wrong one rejects the guess.
    pub(super) fn answer_guessed(&mut self, id: usize, g: Guess, partner: usize, l: usize) {
        let expected = self
            .template_groups(g)
            .find(|t| g.leaf(self.rep(t)) == partner)
            .map(|t| t.l);
        if expected != Some(l) {
            tracing::debug!(root = g.root, partner, l, ?expected, "wrong guess");
            self.reject(g.root);
            return;
        }
        // Its groups are the template's: no levels to keep.
        self.subs[id].answered += 1;
        self.mark_if_complete(id);
    }

    /// Opens the groups waiting for subproblem `id` once its answers show it
    /// a chain: a guess would ask a chain as much as building it does.
    pub(super) fn release_if_chain(&mut self, id: usize) {
        if self.subs[id].levels.len() == CHAIN_SEEN && self.chain(id) {
            self.release(id);
        }
    }

    /// Whether a group proved complete early, of `members` with `lower`
    /// leaves below it in its caller, waits to be guessed once the caller
    /// is done rather than opening now.
    pub(super) fn defers(&self, members: &[usize], lower: usize) -> bool {
        let key = self.key(members);
        let scout = key.and_then(|k| self.guesses.scouts.get(&k)).copied();
        // As many leaves as the part below it: maybe that part shifted.
        let halves = key.is_some() && members.len() == lower;
        halves || scout.is_some_and(|s| !self.chain(s)) || self.guess_for(members).is_some()
    }

    /// The key a group of `members` opened now scouts for: its own, unless
    /// a group alike scouts for it already.
    pub(super) fn scout_key(&self, members: &[usize]) -> Option<Key> {
        let key = self.key(members);
        key.filter(|k| !self.guesses.scouts.contains_key(k))
    }

    /// Opens a group of an unguessed subproblem, `below` the leaves of the
    /// caller's subtree under it: guessed if a template fits; else held
    /// (`None`) for that subtree if it has the group's leaves shifted, or
    /// for a group alike being built; else built, as the scout of the
    /// groups alike that come while it is.
    pub(super) fn open_group(
        &mut self,
        leaves: Vec<usize>,
        parent: (usize, usize),
        below: &[usize],
        misses: u8,
    ) -> Option<usize> {
        if let Some(guess) = self.guess_for(&leaves) {
            return Some(self.open(leaves, Some(parent), misses, Some(guess)));
        }
        let key = self.key(&leaves);
        let within = parent.1 <= self.subs[parent.0].size;
        if key.is_some() && within && shift_between(&leaves, below).is_some() {
            self.hold_for_prefix(leaves, parent, misses);
            return None;
        }
        if let Some(&scout) = key.and_then(|k| self.guesses.scouts.get(&k)) {
            let waiter = self.hold(leaves, parent, misses);
            let waiting = self.guesses.waiting.get_mut(&scout);
            waiting.expect("a scout").1.push(waiter);
            return None;
        }
        let id = self.open(leaves, Some(parent), misses, None);
        self.scout(id, key);
        Some(id)
    }

    /// Whether subproblem `id` looks like a chain so far: at least
    /// [`CHAIN_SEEN`] levels, each of one partner. Building a
    /// chain asks one query per node, as checking a guess does, so groups
    /// alike gain nothing by waiting for it.
    fn chain(&self, id: usize) -> bool {
        let levels = &self.subs[id].levels;
        levels.len() >= CHAIN_SEEN && levels.groups().all(|m| m.len() == 1)
    }

    /// Makes group `id` the scout of groups alike, `key`.
    pub(super) fn scout(&mut self, id: usize, key: Option<Key>) {
        if let Some(k) = key {
            self.guesses.scouts.insert(k, id);
            self.guesses.waiting.insert(id, (k, Vec::new()));
        }
    }

    /// Opens the groups held for scout `id`, now complete: guessed where
    /// it (or another template) fits, built otherwise.
    pub(super) fn release(&mut self, id: usize) {
        let Some((key, waiters)) = self.guesses.waiting.remove(&id) else {
            return;
        };
        self.guesses.scouts.remove(&key);
        for w in waiters {
            let guess = self.guess_for(&w.leaves);
            self.unhold(w, guess);
        }
    }

    /// Holds the group of `leaves` at `parent = (caller, level)`: its
    /// leaves are those of the caller's subtree below it, shifted, as in
    /// pairwise halves, where no subtree built before has its shape. Once
    /// that part is complete, the group is guessed from it (see
    /// [`Engine::release_prefixes`]).
    fn hold_for_prefix(&mut self, leaves: Vec<usize>, parent: (usize, usize), misses: u8) {
        let waiter = self.hold(leaves, parent, misses);
        let waiters = self.guesses.prefix_waiters.entry(parent.0);
        waiters.or_default().push(waiter);
    }

    /// Opens the groups of `caller` held for the part below them, lowest
    /// first, while that part is complete: guessed from it where it is
    /// binary, built otherwise.
    pub(super) fn release_prefixes(&mut self, caller: usize) {
        while let Some(level) = self
            .guesses
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
            let waiters = self.guesses.prefix_waiters.get_mut(&caller);
            let w = waiters.expect("waiters").remove(0);
            let guess = binary
                .then(|| self.guess_from(&w.leaves, caller, level - 1))
                .flatten();
            self.unhold(w, guess);
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
    fn unhold(&mut self, w: Waiter, guess: Option<Guess>) {
        self.subs[w.parent.0].open_groups -= 1;
        let child = self.open(w.leaves, Some(w.parent), w.misses, guess);
        self.attach(w.parent, child);
    }

    /// Takes guessed subproblem `id`'s groups from its template, every
    /// answer having matched, and opens each to be guessed in turn.
    pub(super) fn group_guessed(&mut self, id: usize, g: Guess) {
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
                    let child = self.open(leaves, Some((id, l)), 0, Some(guess));
                    (Part::Sub(child), None)
                }
                Part::Leaf(leaf) => {
                    let leaf = g.leaf(leaf);
                    (Part::Leaf(leaf), Some(self.lone_leaf(leaf)))
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
        self.complete_up(id);
    }

    /// A wrong guess under `root`: drops every subproblem guessed there and
    /// builds `root` anew, as if no template had fit.
    fn reject(&mut self, root: usize) {
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
        let leaves = self.guessed_leaves(g);
        // The whole input, guessed from a prediction, is built anew as the
        // root.
        let Some(parent) = parent else {
            self.open(leaves, None, misses, None);
            return;
        };
        self.subs[parent.0].open_groups -= 1;
        let id = self.open(leaves, Some(parent), misses, None);
        self.attach(parent, id);
    }

    /// Makes binary `tree` the template of the whole input and returns the
    /// guess to open the root with: every node is then checked with one
    /// query, packed as any other, and one wrong answer builds the whole
    /// tree as usual.
    ///
    /// Each subproblem of the template is a node's subtree with the pivot
    /// reached by always descending to the child with fewer leaves, so its
    /// groups are few and the larger subtrees hang below as subproblems of
    /// their own, asked in smaller fields. The templates ask nothing
    /// themselves.
    pub(super) fn seed(&mut self, tree: &SummationTree) -> Guess {
        debug_assert!(tree.is_binary() && tree.n() == self.oracle.n());
        let template = |engine: &mut Self, node| {
            let mut path = vec![node];
            while let [a, b] = tree.children(*path.last().expect("a node"))[..] {
                let light = if tree.node(a).size <= tree.node(b).size {
                    a
                } else {
                    b
                };
                path.push(light);
            }
            let pivot = tree.node(*path.last().expect("a leaf")).min_leaf;
            let id = engine.packer.add_idle(pivot);
            let mut sub = Sub::new(pivot, tree.node(node).size, None, 0, 0, None);
            (sub.finished, sub.void) = (true, true);
            engine.subs.push(sub);
            (id, path)
        };
        let (root, path) = template(self, tree.root());
        let mut todo = vec![(root, path)];
        while let Some((id, path)) = todo.pop() {
            // From the pivot up: each node's other child is a group.
            for pair in path.windows(2).rev() {
                let (node, on_path) = (pair[0], pair[1]);
                let other = *tree
                    .children(node)
                    .iter()
                    .find(|&&c| c != on_path)
                    .expect("a binary node");
                let size = tree.node(other).size;
                let part = match tree.node(other).leaf {
                    Some(leaf) => Part::Leaf(leaf),
                    None => {
                        let (child, path) = template(self, other);
                        todo.push((child, path));
                        Part::Sub(child)
                    }
                };
                self.subs[id].groups.push(Group {
                    l: tree.node(node).size,
                    size,
                    part,
                    built: None,
                });
            }
        }
        Guess {
            template: root,
            top: usize::MAX,
            shift: 0,
            root: self.subs.len(),
        }
    }

    /// Records complete subproblem `id`'s span if it is binary throughout,
    /// and makes it the template of its key if it is large enough.
    pub(super) fn note_template(&mut self, id: usize) {
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
        let size = s.size;
        self.subs[id].span = span;
        if let Some((lo, hi)) = span.filter(|_| size >= GUESS_FROM) {
            tracing::debug!(size, lo, hi, "template");
            self.guesses.templates.insert((size, hi - lo), id);
        }
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

    /// The key of a group of `leaves` worth guessing: groups alike, the
    /// same leaves shifted, share it.
    fn key(&self, leaves: &[usize]) -> Option<Key> {
        if !self.guesses.enabled || leaves.len() < GUESS_FROM {
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
        let &template = self.guesses.templates.get(&self.key(leaves)?)?;
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
