//! Tests packed into masked inputs, and their answers read back bit by
//! bit (docs/ALGORITHMS.md, Insertion, Answers of many bits).
//!
//! A test is a mask pair and the summands whose bits it reads: summand
//! `k` holds `2^b u`, a bit of its own, and the answer holds that bit
//! exactly when `k` lies outside every pair's meeting node. Tests share an
//! input when no bit may lie under another test's pair: each bit says where
//! its summand may hang (preorder intervals of the tree so far), each pair
//! which nodes it swallows.

use std::collections::HashSet;

use super::super::oracle::{Edits, Oracle};
use crate::error::Result;

/// A preorder interval, both ends included; empty when its start is past
/// its end.
pub(super) type Span = [u32; 2];

/// One bit of a test: the summand holding it, where that summand may hang,
/// and the caller's tag for the answer.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bit {
    pub leaf: usize,
    pub at: [Span; 3],
    pub tag: u32,
}

impl Bit {
    /// A bit on a placed summand, hanging at preorder number `pre`.
    pub(super) fn placed(leaf: usize, pre: u32, tag: u32) -> Self {
        Bit {
            leaf,
            at: [[pre, pre], EMPTY, EMPTY],
            tag,
        }
    }
}

/// A bit's tag and whether its summand survived (`None`: not asked).
pub(super) type Read = (u32, Option<bool>);

/// The empty span.
pub(super) const EMPTY: Span = [1, 0];

/// A mask pair, the nodes it swallows, and the bits it reads; and its
/// witness, where it has one: a summand every tree swallows with the pair,
/// whose bit, in each input the pair goes to, must be lost.
#[derive(Clone, Debug)]
pub(super) struct Test {
    pub pair: [usize; 2],
    pub swallow: Span,
    pub bits: Vec<Bit>,
    pub witness: Option<usize>,
}

/// How much one input holds: mask pairs, and bits (so that every sum of
/// them is exact and swamped).
#[derive(Clone, Copy, Debug)]
pub(super) struct Room {
    pub pairs: usize,
    pub bits: usize,
}

impl Room {
    /// The room the oracle's masks and the black box's input format leave;
    /// `None` where an input holds fewer than 8 bits.
    pub(super) fn of(oracle: &mut Oracle) -> Option<Room> {
        let masks = oracle.masks();
        let pairs = masks.max_pairs().max(1);
        let capacity = masks.capacity(pairs);
        let u = masks.u;
        let input = oracle.probe().format();
        let mut bits = (u64::BITS - 1 - capacity.leading_zeros()) as usize;
        bits = bits.min(52);
        while bits > 0 && !input.represents(u * 2f64.powi(bits as i32 - 1)) {
            bits -= 1;
        }
        (bits >= 8).then_some(Room { pairs, bits })
    }
}

fn meets(a: Span, b: Span) -> bool {
    a[0] <= a[1] && b[0] <= b[1] && a[0] <= b[1] && b[0] <= a[1]
}

fn bit_meets(bit: &Bit, swallow: Span) -> bool {
    bit.at.iter().any(|&s| meets(s, swallow))
}

/// One input being packed.
#[derive(Default)]
struct Input {
    pairs: Vec<([usize; 2], Span)>,
    /// Bits, each with the pair (index) it reads, its place among all the
    /// tests' bits and its weight (`2^w u`).
    bits: Vec<(Bit, usize, usize, u32)>,
    /// The witnesses' summands, weights and pairs: bits that must be lost.
    witnesses: Vec<(usize, u32, [usize; 2])>,
    /// The summands it holds, and a filter of them: a bit of 128 a
    /// summand, which most summands it does not hold find clear, so that
    /// a packing, which tries each test on many inputs, seldom scans
    /// `used`.
    used: Vec<usize>,
    filter: u128,
    /// The spans where its bits' summands may hang, side by side, which a
    /// new pair's swallowed nodes must not meet.
    spans: Vec<Span>,
}

impl Input {
    fn weights(&self) -> u32 {
        (self.bits.len() + self.witnesses.len()) as u32
    }

    fn full(&self, room: Room) -> bool {
        self.weights() as usize >= room.bits || self.pairs.len() >= room.pairs
    }

    fn uses(&self, leaf: usize) -> bool {
        self.filter & Self::filter_bit(leaf) != 0 && self.used.contains(&leaf)
    }

    /// Notes that the input holds `leaf`.
    fn hold(&mut self, leaf: usize) {
        self.used.push(leaf);
        self.filter |= Self::filter_bit(leaf);
    }

    /// `leaf`'s bit of the filter: the top 7 bits of a multiplicative hash,
    /// so that neighbouring summands, which tests often hold together, take
    /// bits apart.
    fn filter_bit(leaf: usize) -> u128 {
        1 << ((leaf as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 57)
    }

    /// Adds `test`'s pair and as many of `bits` as fit, with `witness`
    /// where there is room, and takes those bits out of `bits` (the rest
    /// keep their order); adds nothing where no bit fits. Returns whether
    /// the witness went in.
    fn take(
        &mut self,
        test: &Test,
        witness: Option<usize>,
        bits: &mut Vec<(Bit, usize)>,
        room: Room,
    ) -> bool {
        let shared = self
            .pairs
            .iter()
            .position(|&(p, s)| p == test.pair && s == test.swallow);
        let pair = match shared {
            Some(at) => at,
            None => {
                let fits = self.pairs.len() < room.pairs
                    && !test.pair.iter().any(|&l| self.uses(l))
                    && !self.spans.iter().any(|&s| meets(s, test.swallow));
                if !fits {
                    return false;
                }
                self.pairs.len()
            }
        };
        // Bits go in as they fit, each weighed and marked used at once, so
        // that the next is weighed after it and no summand goes in twice;
        // a new pair is pushed after them, as no bit is checked against
        // it.
        let before = self.bits.len();
        bits.retain(|&(bit, serial)| {
            let fits = (self.weights() as usize) < room.bits
                && !self.uses(bit.leaf)
                && !test.pair.contains(&bit.leaf)
                && !self
                    .pairs
                    .iter()
                    .enumerate()
                    .any(|(p, &(_, s))| p != pair && bit_meets(&bit, s));
            if fits {
                self.hold(bit.leaf);
                self.spans.extend(bit.at.iter().filter(|s| s[0] <= s[1]));
                self.bits.push((bit, pair, serial, self.weights()));
            }
            !fits
        });
        if self.bits.len() == before {
            return false;
        }
        if shared.is_none() {
            self.pairs.push((test.pair, test.swallow));
            test.pair.iter().for_each(|&l| self.hold(l));
        }
        // The pair's witness, where there is room: it can only be lost,
        // whatever else the input holds.
        match witness {
            Some(leaf)
                if shared.is_none()
                    && !self.uses(leaf)
                    && (self.weights() as usize) < room.bits =>
            {
                self.hold(leaf);
                self.witnesses.push((leaf, self.weights(), test.pair));
                true
            }
            _ => false,
        }
    }
}

/// How many inputs with room a test tries (the latest, oldest first)
/// before it opens one of its own: enough for the blocks of a blocked sum
/// to share them.
const OPEN: usize = 256;

/// Packs `tests` into inputs, asks them, and returns each bit's tag with
/// whether its summand survived (lay outside every pair's meeting node),
/// the tests' bits in order. With `until_lost`, no call is made after one
/// whose answers lost a bit (checks of guesses, which keep every bit while
/// the guesses hold): the bits not asked read `None`.
/// `None` where an answer is no sum of the input's bits: the black box
/// breaks the method's assumptions, which FPRev's engine then reports.
pub(super) fn ask(
    oracle: &mut Oracle,
    tests: &[Test],
    room: Room,
    until_lost: bool,
    witnessed: &mut HashSet<[usize; 2]>,
) -> Result<Option<Vec<Read>>> {
    let mut inputs: Vec<Input> = Vec::new();
    // The inputs with room left, oldest first.
    let mut open: Vec<usize> = Vec::new();
    let mut serial = 0;
    // A pair meets at one node of a summation tree whatever else an input
    // holds: its witness is asked once a reveal, in the first input it
    // goes to; `planned` holds those of this ask's inputs.
    let mut planned = HashSet::new();
    let mut bits: Vec<(Bit, usize)> = Vec::new();
    for test in tests {
        bits.clear();
        for &b in &test.bits {
            bits.push((b, serial));
            serial += 1;
        }
        // The test's witness, where neither the reveal nor this ask has
        // one of its pair yet: it goes to the first input that takes it.
        let asked = witnessed.contains(&test.pair) || planned.contains(&test.pair);
        let mut witness = test.witness.filter(|_| !asked);
        let mut take = |input: &mut Input, bits: &mut Vec<(Bit, usize)>| {
            if input.take(test, witness, bits, room) {
                planned.insert(test.pair);
                witness = None;
            }
        };
        let mut at = open.len().saturating_sub(OPEN);
        while at < open.len() && !bits.is_empty() {
            let input = &mut inputs[open[at]];
            take(input, &mut bits);
            if input.full(room) {
                open.remove(at);
            } else {
                at += 1;
            }
        }
        while !bits.is_empty() {
            let mut input = Input::default();
            let before = bits.len();
            take(&mut input, &mut bits);
            // An empty input takes a bit of any test; should one not, the
            // method stands aside rather than loop.
            if bits.len() == before {
                return Ok(None);
            }
            if !input.full(room) {
                open.push(inputs.len());
            }
            inputs.push(input);
        }
    }
    oracle.counters.queries += tests.iter().map(|t| t.bits.len() as u64).sum::<u64>();
    let masks = oracle.masks().clone();
    let mut current = vec![0.0; oracle.n()];
    let mut set: Vec<usize> = Vec::new();
    let mut edits = Edits::default();
    let mut read: Vec<Read> = tests
        .iter()
        .flat_map(|t| t.bits.iter().map(|b| (b.tag, None)))
        .collect();
    let mut lost = false;
    for (c, call) in inputs.chunks(oracle.rows().max(1)).enumerate() {
        for input in call {
            for &at in &set {
                edits.set(at, 0.0);
            }
            set.clear();
            for (k, &([a, b], _)) in input.pairs.iter().enumerate() {
                edits.set(a, masks.mask(k));
                edits.set(b, -masks.mask(k));
                set.extend([a, b]);
            }
            let leaves = input.bits.iter().map(|&(b, _, _, w)| (b.leaf, w));
            let witnesses = input.witnesses.iter().map(|&(leaf, w, _)| (leaf, w));
            for (leaf, w) in leaves.chain(witnesses) {
                edits.set(leaf, masks.u * 2f64.powi(w as i32));
                set.push(leaf);
            }
            edits.end_input();
        }
        // The first call starts from zeros, whatever was asked before.
        let out = oracle.sum_inputs(&current, &edits, c > 0)?.to_vec();
        for (input, y) in call.iter().zip(out) {
            let units = y / masks.u;
            let most = 2f64.powi(input.weights() as i32);
            // A witness kept: the pair did not swallow what every tree
            // swallows with it.
            if !(0.0..most).contains(&units)
                || units.fract() != 0.0
                || input
                    .witnesses
                    .iter()
                    .any(|&(_, w, _)| (units as u64) >> w & 1 == 1)
            {
                return Ok(None);
            }
            witnessed.extend(input.witnesses.iter().map(|&(.., pair)| pair));
            let units = units as u64;
            for &(_, _, serial, w) in &input.bits {
                let kept = units >> w & 1 == 1;
                read[serial].1 = Some(kept);
                lost |= !kept;
            }
        }
        edits.apply_ended(&mut current);
        edits.clear();
        if until_lost && lost {
            break;
        }
    }
    Ok(Some(read))
}
