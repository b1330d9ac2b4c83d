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

use std::collections::{BTreeSet, VecDeque};

use crate::error::{Error, Result};
use crate::reveal::masks::{Edits, Masks};
use crate::reveal::oracle::Oracle;

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

    /// Plans the next call: at most `rows` inputs. False when nothing is
    /// left to ask.
    pub(super) fn plan(&mut self, masks: &Masks, rows: usize) -> bool {
        // The new call starts where the last one ended.
        self.edits.apply_ended(&mut self.base);
        self.edits.clear();
        self.queries.clear();
        self.starts.truncate(1);
        self.pairs.clear();
        for _ in 0..rows {
            self.retire();
            self.admit(masks);
            if self.fields.is_empty() {
                break;
            }
            for k in 0..self.fields.len() {
                let f = self.fields[k];
                let partner = self.streams[f.stream]
                    .todo
                    .pop()
                    .expect("an active field has partners left");
                if let Some(old) = f.partner {
                    self.set(old, self.u * f.scale as f64);
                }
                self.set(partner, -masks.mask(f.pair));
                self.fields[k].partner = Some(partner);
                self.queries.push(Query {
                    stream: f.stream,
                    partner,
                    scale: f.scale,
                });
            }
            self.edits.end_input();
            self.starts.push(self.queries.len());
            self.pairs
                .push(self.fields.iter().map(|f| f.pair + 1).max().unwrap_or(1));
        }
        !self.pairs.is_empty()
    }

    /// The values the planned call starts from.
    pub(super) fn base(&self) -> &[f64] {
        &self.base
    }

    /// The planned inputs.
    pub(super) fn edits(&self) -> &Edits {
        &self.edits
    }

    /// Reads one output per planned input into answers; queries whose
    /// field may have been disturbed come back with `l: None` and are
    /// queued again.
    pub(super) fn read(&mut self, outputs: &[f64], oracle: &Oracle) -> Result<Vec<Answer>> {
        let mut answers = Vec::with_capacity(self.queries.len());
        let planned = std::mem::take(&mut self.queries);
        for (k, &y) in outputs.iter().enumerate() {
            let queries = &planned[self.starts[k]..self.starts[k + 1]];
            let answer = |q: &Query, l| Answer {
                sub: q.stream,
                partner: q.partner,
                l,
            };
            if let [q] = queries {
                // Alone, a field may still sit at the scale it had beside others.
                let s = &self.streams[q.stream];
                let l = oracle
                    .validate(y / q.scale as f64, s.live(), s.pivot, q.partner)?
                    .ok_or_else(|| not_a_sum(y, s, q.partner))?;
                let l = s.decode(l);
                if l == s.full_live() && s.context.is_some() {
                    self.streams[q.stream].partial = true;
                }
                answers.push(answer(q, Some(l)));
                continue;
            }
            let Some(counts) = self.split(y, queries, oracle.masks().capacity(self.pairs[k]))
            else {
                // Not a sum of fields: each is asked again alone, where the
                // black box answers for itself.
                for q in queries {
                    self.streams[q.stream].solo = true;
                    self.ask(q.stream, q.partner);
                    answers.push(answer(q, None));
                }
                continue;
            };
            let levels: Vec<usize> = queries
                .iter()
                .zip(&counts)
                .map(|(q, &c)| {
                    let s = &self.streams[q.stream];
                    s.decode(s.live() - c as usize)
                })
                .collect();
            let swamped = self.swamped_early_groups(queries, &counts, &levels);
            // Fields at 0 with a context leaf may have met at their reach;
            // so may an early group's beside no field of its caller.
            let zeros: Vec<usize> = (0..queries.len())
                .filter(|&i| counts[i] == 0 && !swamped[i])
                .filter(|&i| {
                    let s = &self.streams[queries[i].stream];
                    s.context.is_some()
                        || (s.early().is_some() && self.caller_in(queries, i).is_none())
                })
                .collect();
            // Whether met there or swamped by another, they may reach
            // beyond their leaves: they share no more inputs with those.
            for &z in &zeros {
                let s = &mut self.streams[queries[z].stream];
                s.partial |= s.context.is_some();
            }
            for (i, q) in queries.iter().enumerate() {
                let doubted = swamped[i]
                    || zeros
                        .iter()
                        .any(|&z| z != i && self.reaches(queries[z].stream, q.stream));
                if doubted {
                    self.ask(q.stream, q.partner);
                    answers.push(answer(q, None));
                } else {
                    answers.push(answer(q, Some(levels[i])));
                }
            }
        }
        self.queries = planned;
        Ok(answers)
    }

    /// Where the caller of query `i`'s early group asks in the same input.
    fn caller_in(&self, queries: &[Query], i: usize) -> Option<usize> {
        let s = &self.streams[queries[i].stream];
        let caller = s.link.filter(|_| s.early().is_some())?.caller;
        field_of(queries, caller)
    }

    /// Which fields of one output an early group and its caller disturbed.
    ///
    /// The group `G` sits at level `L` of its caller `C`, `L'` below it.
    /// `C`'s pair meets above `L'` only at or above `L`, over all of `G`:
    /// `G`'s field is swamped, and so are those of the early groups inside
    /// `G`, however far down. At or below `L'` it leaves `G` alone, and
    /// `G`'s pair stays inside `G` unless it meets at `C`'s node at `L`, a
    /// fused node: that swamps everything under `L`, so `G` reads 0 (as it
    /// does at its own top) and `C` reads as if its pair met at `L`. Where
    /// fused nodes may be, that pair of readings doubts every field `G`
    /// reaches: `C`'s, and those of `C`'s other early groups below `L`.
    fn swamped_early_groups(
        &self,
        queries: &[Query],
        counts: &[u64],
        levels: &[usize],
    ) -> Vec<bool> {
        let mut swamped = vec![false; queries.len()];
        if queries
            .iter()
            .all(|q| self.streams[q.stream].early().is_none())
        {
            return swamped;
        }
        // Callers open before their groups: in stream order, a caller's
        // verdict is final before its groups read it.
        let mut order: Vec<usize> = (0..queries.len()).collect();
        order.sort_unstable_by_key(|&i| queries[i].stream);
        for &i in &order {
            // The nearest early caller up the chain that asks here.
            let mut s = queries[i].stream;
            while let (Some(lower), Some(link)) = (self.streams[s].early(), self.streams[s].link) {
                if let Some(c) = field_of(queries, link.caller) {
                    swamped[i] = swamped[c] || levels[c] > lower;
                    break;
                }
                s = link.caller;
            }
        }
        let mut doubted = swamped.clone();
        for i in 0..queries.len() {
            let Some(c) = self.caller_in(queries, i).filter(|_| self.may_fuse) else {
                continue;
            };
            let g = queries[i].stream;
            let level = self.streams[g].link.expect("an early group").level;
            let caller = &self.streams[queries[c].stream];
            if counts[i] == 0 && caller.live() - counts[c] as usize == caller.meeting_at(level) {
                for (j, q) in queries.iter().enumerate() {
                    doubted[j] |= j != i && self.reaches(g, q.stream);
                }
            }
        }
        doubted
    }

    /// The counts of the fields of one output, or `None` if it is not a
    /// valid packing of them (then each query is asked again on its own,
    /// where the black box alone answers for it).
    fn split(&self, y: f64, queries: &[Query], capacity: u64) -> Option<Vec<u64>> {
        let units = y / self.u;
        if !(units >= 0.0 && units < capacity as f64 && units.fract() == 0.0) {
            return None;
        }
        // Digits from the highest: each must count at most `live - 2`
        // units, and nothing may be left between or below the fields. That
        // keeps it below its radix too: a field keeps the radix it joined
        // with (or was compacted to) while its subproblem loses leaves to
        // early groups, so `live - 1` is at most the radix.
        let mut rest = units as u64;
        let mut counts = vec![0; queries.len()];
        for (k, q) in queries.iter().enumerate().rev() {
            let a = rest / q.scale;
            if a as usize + 2 > self.streams[q.stream].live() {
                return None;
            }
            rest -= a * q.scale;
            counts[k] = a;
        }
        (rest == 0).then_some(counts)
    }

    /// Sets summand `at` to `v` in the input being planned.
    fn set(&mut self, at: usize, v: f64) {
        self.state[at] = v;
        self.edits.set(at, v);
    }

    /// Whether a pair of stream `g` that meets at its reach (the node of
    /// its context leaf) swamps a live leaf of stream `f`: a leaf of `f`'s
    /// subproblem, or its context leaf, the pivot of `f`'s caller.
    fn reaches(&self, g: usize, f: usize) -> bool {
        let Some(reach) = self.streams[g].link else {
            // Without a context leaf a pair meets inside its subproblem.
            return false;
        };
        // The node holds the caller's pivot (the caller's field, while it
        // asks, and its settled groups' context leaf) and its groups up to
        // `level`, and so every subproblem opened inside those groups.
        if f == reach.caller {
            return true;
        }
        let mut at = f;
        let mut first = self.streams[f].context.is_some();
        while let Some(link) = self.streams[at].link {
            let pivot_inside = first && link.caller == reach.caller;
            if pivot_inside || (link.caller == reach.caller && link.level <= reach.level) {
                return true;
            }
            first = false;
            at = link.caller;
        }
        reach.beyond && self.reaches(reach.caller, f)
    }

    /// Whether streams `a` and `b` should not share inputs: one is known to
    /// reach beyond its leaves, into the other's.
    fn conflict(&self, a: usize, b: usize) -> bool {
        (self.streams[a].partial && self.reaches(a, b))
            || (self.streams[b].partial && self.reaches(b, a))
    }

    /// Ends the fields with nothing left to ask, and those of solo streams
    /// that share the input, zeroing their leaves.
    fn retire(&mut self) {
        let mut k = 0;
        while k < self.fields.len() {
            let f = self.fields[k];
            let s = &self.streams[f.stream];
            // A solo stream, or one found to reach another's leaves, leaves
            // the inputs it shares (and comes back when it fits).
            let shared = self.fields.len() > 1;
            let clashes = s.partial
                && self
                    .fields
                    .iter()
                    .any(|g| g.stream != f.stream && self.conflict(f.stream, g.stream));
            let ends = s.todo.is_empty() || (s.solo && shared) || clashes;
            if ends {
                self.end_field(k);
            } else {
                k += 1;
            }
        }
    }

    /// Ends field `k`, zeroing its leaves, and queues its stream again if
    /// it has queries left.
    fn end_field(&mut self, k: usize) {
        let f = self.fields.remove(k);
        self.changed = true;
        let s = &self.streams[f.stream];
        let (pivot, context) = (s.pivot, s.context);
        for i in 0..s.partners.len() {
            self.set(self.streams[f.stream].partners[i], 0.0);
        }
        self.set(pivot, 0.0);
        if let Some(c) = context {
            self.set(c, self.state[c] - self.u * f.scale as f64);
        }
        self.streams[f.stream].active = false;
        self.enqueue(f.stream);
    }

    /// Adds fields for queued streams, largest first, while they fit and
    /// reach into no other's leaves. A solo stream waits until no field is
    /// left, and then has the inputs to itself; no other stream joins
    /// while one waits.
    fn admit(&mut self, masks: &Masks) {
        // Nothing that did not fit last time fits better now.
        if !std::mem::take(&mut self.changed)
            || self.fields.iter().any(|f| self.streams[f.stream].solo)
        {
            return;
        }
        if let Some(&id) = self.waiting.front() {
            if self.fields.is_empty() {
                self.waiting.pop_front();
                self.streams[id].queued = false;
                let field = self
                    .place(id, masks)
                    .expect("an empty input fits any stream");
                self.join(field, masks);
            }
            return;
        }
        // The largest queued stream whose field fits the room left, then
        // the next, passing over those that do not fit after all.
        let mut below = (usize::MAX, usize::MAX);
        let mut passed = 0;
        while self.fields.len() < self.most_fields && passed < 16 {
            let pairs = (self.fields.len() + 1).min(masks.max_pairs());
            // Packed tight, the fields end at the product of their radixes,
            // and a field of radix `r` above them fits while `r * product`
            // is at most the capacity; an empty input takes what `place`
            // takes.
            let product: u64 = self.fields.iter().map(|f| f.radix).product();
            let most_live = match masks.capacity(pairs) / product {
                _ if self.fields.is_empty() => usize::MAX,
                0 => break,
                r => usize::try_from(r).map_or(usize::MAX, |r| r.saturating_add(1)),
            };
            below = below.min((most_live, usize::MAX));
            let Some(&(live, id)) = self.ready.range(..below).next_back() else {
                break;
            };
            below = (live, id);
            if self.streams[id].solo {
                // Went solo while queued here: it waits for empty inputs.
                self.ready.remove(&(live, id));
                self.streams[id].queued = false;
                self.enqueue(id);
                continue;
            }
            if self.fields.iter().any(|f| self.conflict(id, f.stream)) {
                passed += 1;
                continue;
            }
            // Room split into gaps too small: close them (it costs edits,
            // no call) and try again.
            let placed = self.place(id, masks).or_else(|| {
                self.compact();
                self.place(id, masks)
            });
            match placed {
                Some(field) => {
                    self.ready.remove(&(live, id));
                    self.streams[id].queued = false;
                    self.join(field, masks);
                }
                None => passed += 1,
            }
        }
    }

    /// Where stream `id` fits beside the current fields: the lowest free
    /// gap, the first free mask, within the capacity.
    fn place(&self, id: usize, masks: &Masks) -> Option<Field> {
        let radix = (self.streams[id].live() - 1) as u64;
        let mut scale = 1u64;
        for f in &self.fields {
            if scale.checked_mul(radix).is_some_and(|end| f.scale >= end) {
                break;
            }
            scale = scale.max(f.end());
        }
        let pair = (0..).find(|p| self.fields.iter().all(|f| f.pair != *p))?;
        let pairs = self
            .fields
            .iter()
            .map(|f| f.pair)
            .max()
            .unwrap_or(0)
            .max(pair)
            + 1;
        if pairs > masks.max_pairs() {
            return None;
        }
        // The largest count the input can hold, every field at its most.
        let most = |f: &Field| (f.radix - 1).checked_mul(f.scale);
        let field = Field {
            stream: id,
            scale,
            radix,
            pair,
            partner: None,
        };
        let total = self
            .fields
            .iter()
            .chain([&field])
            .try_fold(0u64, |t, f| t.checked_add(most(f)?))?;
        (total < masks.capacity(pairs)).then_some(field)
    }

    /// Moves the fields down to leave no gaps between them, rescaling the
    /// units of those that move, and narrows those whose subproblems lost
    /// leaves to early groups since they joined.
    fn compact(&mut self) {
        let mut next = 1;
        for k in 0..self.fields.len() {
            let f = self.fields[k];
            if f.scale != next {
                let (old, new) = (self.u * f.scale as f64, self.u * next as f64);
                let s = &self.streams[f.stream];
                let context = s.context;
                for i in 0..s.partners.len() {
                    let leaf = self.streams[f.stream].partners[i];
                    // The partner being asked holds the mask, not a unit.
                    if Some(leaf) != f.partner {
                        self.set(leaf, new);
                    }
                }
                if let Some(c) = context {
                    self.set(c, self.state[c] - old + new);
                }
                self.fields[k].scale = next;
            }
            let radix = (self.streams[f.stream].live() - 1) as u64;
            self.fields[k].radix = radix;
            next *= radix;
        }
    }

    /// Gives `field`'s stream its units and its pivot's mask.
    fn join(&mut self, field: Field, masks: &Masks) {
        let unit = self.u * field.scale as f64;
        let id = field.stream;
        for i in 0..self.streams[id].partners.len() {
            self.set(self.streams[id].partners[i], unit);
        }
        let (pivot, context) = (self.streams[id].pivot, self.streams[id].context);
        self.set(pivot, masks.mask(field.pair));
        if let Some(c) = context {
            self.set(c, self.state[c] + unit);
        }
        self.streams[id].active = true;
        let at = self.fields.partition_point(|f| f.scale < field.scale);
        self.fields.insert(at, field);
    }
}

/// Where stream `stream` asks among `queries`, one input's.
fn field_of(queries: &[Query], stream: usize) -> Option<usize> {
    queries.iter().position(|q| q.stream == stream)
}

fn not_a_sum(y: f64, s: &Stream, partner: usize) -> Error {
    Error::BlackBox(format!(
        "the black box returned {y} for the input masking summands {} and {partner}, more \
         than the {} units unmasked: it does not compute a sum of its inputs",
        s.pivot,
        s.live() - 2
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Format;

    /// Subproblems of 5,001 and 3,001 live leaves count 0 to 4,999 and 0 to
    /// 2,999 units: 13 + 12 bits as bit fields, more than f32's 24, but
    /// 5,000 * 3,000 < 2^24 as digits, so they share every input.
    #[test]
    fn counts_share_an_input_as_digits_where_bit_fields_would_not_fit() {
        let n = 8_002;
        let masks = Masks::new(n, Format::F32, Format::F32, false).unwrap();
        let mut packer = Packer::new(n, &masks, false, true);
        packer.add(0, (1..5_001).collect(), None);
        packer.add(5_001, (5_002..n).collect(), None);
        assert!(packer.plan(&masks, 1));
        let q = packer.queries.clone();
        let radixes: Vec<u64> = packer.fields.iter().map(|f| f.radix).collect();
        assert_eq!(radixes, [5_000, 3_000]);
        let output =
            |digits: [u64; 2]| masks.u * (digits[0] * q[0].scale + digits[1] * q[1].scale) as f64;
        let capacity = masks.capacity(2);
        for digits in [[0, 0], [4_999, 2_999], [1_234, 17]] {
            assert_eq!(
                packer.split(output(digits), &q, capacity),
                Some(digits.to_vec())
            );
        }
        // A count beyond its subproblem, or a part of a unit: not a sum of
        // these fields.
        assert_eq!(packer.split(output([0, 3_000]), &q, capacity), None);
        assert_eq!(packer.split(output([1, 0]) * 1.5, &q, capacity), None);
    }
}
