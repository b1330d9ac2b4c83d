//! Laying queries into fields of inputs: which queued subproblems join
//! the input being planned, where each one's field sits among the others,
//! and the edits that move its mask from one partner to the next.

use super::{Field, Packer, Query};
use crate::reveal::masks::{Edits, Masks};

impl Packer {
    /// Plans the next call: at most `rows` inputs. False when nothing is
    /// left to ask.
    pub(in crate::reveal::packed) fn plan(&mut self, masks: &Masks, rows: usize) -> bool {
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
    pub(in crate::reveal::packed) fn base(&self) -> &[f64] {
        &self.base
    }

    /// The planned inputs.
    pub(in crate::reveal::packed) fn edits(&self) -> &Edits {
        &self.edits
    }

    /// Sets summand `at` to `v` in the input being planned.
    pub(super) fn set(&mut self, at: usize, v: f64) {
        self.state[at] = v;
        self.edits.set(at, v);
    }

    /// Whether a pair of stream `g` that meets at its reach (the node of
    /// its context leaf) swamps a live leaf of stream `f`: a leaf of `f`'s
    /// subproblem, or its context leaf, the pivot of `f`'s caller.
    pub(super) fn reaches(&self, g: usize, f: usize) -> bool {
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
    pub(super) fn end_field(&mut self, k: usize) {
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
