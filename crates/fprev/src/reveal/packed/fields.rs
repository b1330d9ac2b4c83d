//! Several queries in one input, each in a field of its own.
//!
//! A query of subproblem `S` (pivot `p`, partner `j`) masks `p` and `j` and
//! puts units on the other leaves of `S` and on its context leaf, a leaf of
//! the caller's subtree; the output counts the units outside `LCA(p, j)`,
//! 0 to `live - 2` of them. Another subproblem `T`, disjoint from `S`, can
//! ask a query in the same input with units of `u * (live - 1)`: the output
//! then holds both counts as the two digits of a mixed radix number, `S`'s
//! in radix `live - 1`. Digits of exactly the radix a count needs, rather
//! than bit fields, fit about half a bit more per field.
//!
//! Why the counts do not disturb each other:
//!
//! * Each pair has its own mask, a distinct power of two below `M`
//!   ([`Masks::mask`]), so masks of different pairs never cancel: a partial
//!   sum holding any of them swamps its units, and a unit survives exactly
//!   when it lies under no pair's LCA.
//! * `LCA(p, j)` holds only leaves of `S`, unless it holds the context leaf
//!   (the pair meets at the caller's fused node). Then it is that node, the
//!   subproblem's *reach*: the caller's pivot, the caller's groups up to
//!   `S`'s level and their subproblems (and, for the caller's own context
//!   group, the caller's reach), and `S`'s field reads 0. So a field can be
//!   disturbed only where another field reads 0 and reaches its leaves or
//!   its context leaf: those fields are asked again, and a subproblem known
//!   to reach others shares no input with them.
//! * All counts of one input stay below the accumulator's exact range for
//!   that many pairs ([`Masks::capacity`]).
//!
//! Each subproblem keeps its field over consecutive inputs, so an input
//! differs from the one before in two places per field (a mask moves on),
//! which is what [`Edits`] carry to the black box.
//!
//! Here subproblems and their queries are registered; [`plan`] lays them
//! into fields of inputs, and [`read`] decodes the outputs into answers.

mod plan;
mod read;

use std::collections::{BTreeSet, VecDeque};

use crate::reveal::masks::{Edits, Masks};

/// One subproblem's queries: its pivot against each partner.
struct Stream {
    pivot: usize,
    /// Every leaf of the subproblem but the pivot.
    partners: Vec<usize>,
    context: Option<usize>,
    /// Where it hangs in its caller (the subproblem whose pivot is `context`).
    link: Option<Link>,
    /// Partners not asked yet (or to ask again).
    todo: Vec<usize>,
    /// Groups taken out of `partners` before the last answer: each one's
    /// level below, and size. Answers count them back in.
    dropped: Vec<(usize, usize)>,
    /// A pair met at the context leaf's node: the subproblem is the rest of
    /// a fused node, and its pairs may reach beyond its leaves.
    partial: bool,
    /// Shares no input: an output with its field was not a sum of fields.
    solo: bool,
    /// Holds a field of the last input planned.
    active: bool,
    /// Waits in the ready queue.
    queued: bool,
}

/// A subproblem's place in its caller: the caller's group at `level`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Link {
    pub(super) caller: usize,
    pub(super) level: usize,
    /// The level is the caller's context level: the group is the rest of a
    /// fused node above the caller, whose reach is the caller's reach.
    pub(super) beyond: bool,
    /// Opened early, while the caller still asks: the caller's level below
    /// this one (see [`Packer::add`]).
    pub(super) early: Option<usize>,
}

impl Stream {
    fn new(
        pivot: usize,
        partners: Vec<usize>,
        todo: Vec<usize>,
        context: Option<usize>,
        link: Option<Link>,
    ) -> Self {
        Stream {
            pivot,
            partners,
            context,
            link,
            todo,
            dropped: Vec::new(),
            partial: false,
            solo: false,
            active: false,
            queued: false,
        }
    }

    /// Leaves carrying units or masks: partners, pivot and context leaf.
    fn live(&self) -> usize {
        self.partners.len() + 1 + usize::from(self.context.is_some())
    }

    /// Opened early and not settled yet (no context leaf: the caller's
    /// pivot is masked): the caller's level below this group's.
    fn early(&self) -> Option<usize> {
        self.link
            .and_then(|l| l.early)
            .filter(|_| self.context.is_none())
    }

    /// Live leaves, dropped groups included: the `l` of a pair that meets
    /// at the context leaf's node.
    fn full_live(&self) -> usize {
        self.live() + self.dropped.iter().map(|&(_, size)| size).sum::<usize>()
    }

    /// `|LCA ∩ live|` of a pair that meets at `level`, at most the
    /// subproblem's size: the level less the groups dropped below it.
    fn meeting_at(&self, level: usize) -> usize {
        let dropped = self.dropped.iter().filter(|&&(lower, _)| lower < level);
        level - dropped.map(|&(_, size)| size).sum::<usize>()
    }

    /// `l` from `|LCA ∩ live|`: a dropped group lies under the LCA exactly
    /// when the pair meets above the level below it (no level lies between
    /// that one and the group's, and the partner is not in the group).
    fn decode(&self, mut l: usize) -> usize {
        for &(lower, size) in &self.dropped {
            if l <= lower {
                break;
            }
            l += size;
        }
        l
    }
}

/// A subproblem's place in the inputs being planned: a digit of a mixed
/// radix number. Its counts run from 0 to `live - 2`, so its radix is
/// `live - 1`, and the digit above starts at `scale * radix` or higher.
#[derive(Clone, Copy, Debug)]
struct Field {
    stream: usize,
    /// Its units are `u * scale`.
    scale: u64,
    /// `live - 1`: one more than its largest count.
    radix: u64,
    /// Which mask its pair uses.
    pair: usize,
    partner: Option<usize>,
}

impl Field {
    /// Where the next field may start.
    fn end(&self) -> u64 {
        self.scale * self.radix
    }
}

/// A query in a planned input.
#[derive(Clone, Copy, Debug)]
struct Query {
    stream: usize,
    partner: usize,
    scale: u64,
}

/// A query's outcome.
#[derive(Clone, Copy, Debug)]
pub(super) struct Answer {
    /// The subproblem, as [`Packer::add`] numbered it.
    pub(super) sub: usize,
    pub(super) partner: usize,
    /// `|LCA(pivot, partner) ∩ live|`, or `None`: ask again.
    pub(super) l: Option<usize>,
}

/// Plans inputs that pack queries of different subproblems into fields,
/// and reads their outputs.
pub(super) struct Packer {
    u: f64,
    /// The black box may add in fused nodes.
    may_fuse: bool,
    /// At most this many fields per input (1: one query per input).
    most_fields: usize,
    streams: Vec<Stream>,
    /// Queued streams by live leaves (their field's radix is one less), then
    /// number.
    ready: BTreeSet<(usize, usize)>,
    /// Solo streams with queries left, in the order they were queued.
    waiting: VecDeque<usize>,
    /// Streams were queued or fields ended since fields were last added.
    changed: bool,
    /// The values of the last input planned.
    state: Vec<f64>,
    /// The values before the call being planned.
    base: Vec<f64>,
    /// The fields of the last input planned, by scale.
    fields: Vec<Field>,
    edits: Edits,
    /// Queries of the planned inputs: input `k` holds
    /// `queries[starts[k]..starts[k + 1]]`.
    queries: Vec<Query>,
    starts: Vec<usize>,
    /// Mask pairs of each planned input.
    pairs: Vec<usize>,
}

impl Packer {
    /// A packer for `n` summands; `pack` false asks one query per input.
    pub(super) fn new(n: usize, masks: &Masks, may_fuse: bool, pack: bool) -> Self {
        Packer {
            u: masks.u,
            may_fuse,
            most_fields: if pack { masks.max_pairs() } else { 1 },
            streams: Vec::new(),
            ready: BTreeSet::new(),
            waiting: VecDeque::new(),
            changed: false,
            state: vec![0.0; n],
            base: vec![0.0; n],
            fields: Vec::new(),
            edits: Edits::default(),
            queries: Vec::new(),
            starts: vec![0],
            pairs: Vec::new(),
        }
    }

    /// Queues subproblem `pivot + partners` and returns its number;
    /// partners are asked from the last one. A group has units also on its
    /// context leaf, its caller's pivot.
    ///
    /// An early group (`link.early`) is opened while its caller still asks,
    /// once the caller's answers prove the group complete. The caller's
    /// pivot is masked then, so it has no context leaf until
    /// [`Packer::settle`]; its leaves leave the caller's units. The two can
    /// share inputs: the caller's pair lies below the group (`l` at most
    /// the level below it) or above it, where it swamps the group's field,
    /// which is then asked again. See [`Packer::read`].
    pub(super) fn add(&mut self, pivot: usize, partners: Vec<usize>, link: Option<Link>) -> usize {
        let asks = partners.clone();
        self.add_asking(pivot, partners, asks, link)
    }

    /// Queues a subproblem that asks only `asks` of its partners (asked
    /// from the last one); the others carry units all the same.
    pub(super) fn add_asking(
        &mut self,
        pivot: usize,
        partners: Vec<usize>,
        asks: Vec<usize>,
        link: Option<Link>,
    ) -> usize {
        let id = self.streams.len();
        let early = link.and_then(|l| l.early);
        if let (Some(link), Some(lower)) = (link, early) {
            self.drop_group(link.caller, &partners, pivot, lower);
        }
        let context = match (link, early) {
            (Some(link), None) => Some(self.streams[link.caller].pivot),
            _ => None,
        };
        let stream = Stream::new(pivot, partners, asks, context, link);
        self.streams.push(stream);
        self.enqueue(id);
        id
    }

    /// Numbers a subproblem that asks nothing and shares no input: a
    /// template taken from a predicted tree (see `Engine::seed`).
    pub(super) fn add_idle(&mut self, pivot: usize) -> usize {
        self.streams
            .push(Stream::new(pivot, Vec::new(), Vec::new(), None, None));
        self.streams.len() - 1
    }

    /// Live leaves of subproblem `sub`: a pair meeting at the context leaf's
    /// node answers `l` equal to this.
    pub(super) fn live(&self, sub: usize) -> usize {
        self.streams[sub].full_live()
    }

    /// Takes an early group's leaves out of its caller's units.
    fn drop_group(&mut self, caller: usize, partners: &[usize], pivot: usize, lower: usize) {
        let gone: BTreeSet<usize> = partners.iter().copied().chain([pivot]).collect();
        let c = &mut self.streams[caller];
        c.partners.retain(|j| !gone.contains(j));
        let at = c.dropped.partition_point(|&(l, _)| l < lower);
        c.dropped.insert(at, (lower, gone.len()));
        if !c.active {
            return;
        }
        if let Some(k) = self.fields.iter().position(|f| f.stream == caller) {
            // The partner asked last is masked, and answered: if it left,
            // nothing is restored for it.
            if self.fields[k].partner.is_some_and(|j| gone.contains(&j)) {
                self.fields[k].partner = None;
            }
        }
        for j in gone {
            self.set(j, 0.0);
        }
    }

    /// Gives early group `sub` its context leaf, `context`, its caller's
    /// pivot, free now that the caller's answers are all in.
    pub(super) fn settle(&mut self, sub: usize, context: usize) {
        if let Some(k) = self.fields.iter().position(|f| f.stream == sub) {
            // Its field widens by the context leaf: it joins again.
            self.end_field(k);
        }
        self.streams[sub].context = Some(context);
        self.enqueue(sub);
    }

    /// Whether subproblem `sub` was opened early and is not settled yet: it
    /// has no context leaf while its caller's pivot is masked, so `l =
    /// size` cannot tell its own top node from the caller's node.
    pub(super) fn unsettled(&self, sub: usize) -> bool {
        self.streams[sub].early().is_some()
    }

    /// Asks `partner` of subproblem `sub` (again).
    pub(super) fn ask(&mut self, sub: usize, partner: usize) {
        self.streams[sub].todo.push(partner);
        self.enqueue(sub);
    }

    /// Asks subproblem `sub` nothing more: its field, if it has one, ends
    /// with the input being planned.
    pub(super) fn cancel(&mut self, sub: usize) {
        let s = &mut self.streams[sub];
        s.todo.clear();
        if std::mem::take(&mut s.queued) {
            let key = (s.live(), sub);
            self.ready.remove(&key);
            self.waiting.retain(|&w| w != sub);
        }
    }

    /// Queues stream `id` if it has queries left and no field: solo
    /// streams in `waiting`, others in `ready`.
    fn enqueue(&mut self, id: usize) {
        let s = &mut self.streams[id];
        if s.active || s.queued || s.todo.is_empty() {
            return;
        }
        s.queued = true;
        self.changed = true;
        if s.solo {
            self.waiting.push_back(id);
        } else {
            self.ready.insert((s.live(), id));
        }
    }
}
