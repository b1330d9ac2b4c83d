//! Where the next summand goes, guessed from where earlier ones went
//! (docs/ALGORITHMS.md, Insertion, Guessed places).
//!
//! Library orders repeat themselves: a left-to-right sum puts each summand
//! above the root, a pairwise one above the ancestor of the summand before
//! it at the height the summand's trailing zeros say, a sum in `d` lanes
//! above the lane's last node, an ancestor of the summand `d` places back.
//! So each placed summand `k` records, for each anchor `k - d`, how many
//! edges its place lies above the anchor's leaf; a predictor copies that
//! height from the summand `P` places back (`P` a power of two), or puts
//! the summand above the root. Predictors are scored on the summands
//! placed (a score decays by a tenth a summand), and the best one that
//! names a node guesses.

use super::growing::{Growing, Node};

/// The anchors `d`: the summand `d` places back.
const ANCHORS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];
/// The periods `P`: the summand whose height is copied.
const PERIODS: usize = 13;
/// A chooser's score where it was right about half the summands lately.
const FORESEEN: f32 = 5.0;
/// What a score keeps of itself a summand.
const DECAY: f32 = 0.9;

/// Heights above an anchor recorded at most.
const MOST_HEIGHT: usize = 63;

/// Where a predictor finds the summand whose height it copies for `k`:
/// the last summand before `k` with as many trailing zero bits
/// (`k - 2^(z+1)`, `z` those of `k`: a pairwise order's ruler; `from` 0),
/// or the summand `2^p` places back (`from` `1 + p`).
const FROMS: usize = PERIODS + 1;

/// The summand that `from` (see `FROMS`) names for `k`.
fn copied(from: usize, k: usize) -> Option<usize> {
    match from {
        0 => k.checked_sub(2usize.checked_pow(k.trailing_zeros() + 1)?),
        _ => k.checked_sub(1 << (from - 1)),
    }
}

/// A predictor: above the root, or the height above anchor `ANCHORS[d]`
/// that the summand `from` names had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Predictor {
    Root,
    Copy { d: usize, from: usize },
}

impl Predictor {
    /// Every predictor, each at its `index`.
    fn all() -> Vec<Predictor> {
        let mut all = vec![Predictor::Root];
        for d in 0..ANCHORS.len() {
            for from in 0..FROMS {
                all.push(Predictor::Copy { d, from });
            }
        }
        all
    }

    /// Its place among all predictors, and its bit in a set of them.
    fn index(self) -> usize {
        match self {
            Predictor::Root => 0,
            Predictor::Copy { d, from } => 1 + d * FROMS + from,
        }
    }

    /// The summand whose height it copies for `k`, and from which anchor.
    fn source(self, k: usize) -> Option<(usize, usize)> {
        match self {
            Predictor::Root => None,
            Predictor::Copy { d, from } => Some((copied(from, k)?, d)),
        }
    }
}

/// `DECAY * score + hit` in f32, bit for bit. A score that decays toward
/// zero passes through subnormal values (about one update in seven at
/// 16,384 summands), whose products take a slow path on x86 (a hundred
/// cycles and more), so there the product is rounded in integers: a
/// subnormal is a count of units of `2^-149`, and so is the product, to
/// the nearest, ties to even.
fn decayed(score: f32, hit: bool) -> f32 {
    if !score.is_subnormal() {
        return DECAY * score + f32::from(u8::from(hit));
    }
    // `1 + s` rounds to 1 for any subnormal `s`.
    if hit {
        return 1.0;
    }
    // `DECAY` is `d 2^-shift`: `d` its significand, a 24-bit integer.
    let bits = DECAY.to_bits();
    let d = u64::from(bits & 0x7f_ffff | 0x80_0000);
    let shift = 150 - (bits >> 23);
    let exact = u64::from(score.to_bits()) * d;
    let (units, rest) = (exact >> shift, exact & ((1 << shift) - 1));
    let half = 1 << (shift - 1);
    let up = rest > half || (rest == half && units & 1 == 1);
    f32::from_bits((units + u64::from(up)) as u32)
}

/// Ranks `ranked` (indices into `scores`) best-scored first, the first
/// listed on a tie.
fn rank(ranked: &mut [usize], scores: &[f32]) {
    // Scores and indices order no two entries alike, so any sort gives
    // this one ranking. A summand moves few predictors past others (a
    // dozen swaps a summand on NumPy's sum), and few ways of choosing, so
    // the ranking before is nearly sorted, and an insertion sort passes
    // over it in about one comparison an entry.
    let ahead = |a: usize, b: usize| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)).is_lt();
    for i in 1..ranked.len() {
        let mut j = i;
        while j > 0 && ahead(ranked[j], ranked[j - 1]) {
            ranked.swap(j, j - 1);
            j -= 1;
        }
    }
}

/// A guess: the node above which the summand goes, and the anchor whose
/// root path it lies near (where one does).
pub(super) struct Guess {
    pub t: Node,
    pub anchor: Option<usize>,
}

/// The heights each placed summand has above its anchors, and the
/// predictors' scores.
pub(super) struct Predictors {
    all: Vec<Predictor>,
    scores: Vec<f32>,
    /// `heights[k][d]`: edges from anchor `k - ANCHORS[d]` up to `k`'s place
    /// (-1: none within reach, or no such anchor placed).
    heights: Vec<[i8; ANCHORS.len()]>,
    at_root: Vec<bool>,
    /// The predictors right about each placed summand, one bit each.
    hits: Vec<u128>,
    /// How often each way of choosing was right: the best-scored
    /// predictor (0), or the best-scored of those right about the summand
    /// `2^(m-1)` places back (`m`).
    choosers: [f32; PERIODS + 1],
    /// The ways of choosing, best-scored first (the first listed on a
    /// tie), ranked as each summand is scored rather than at each guess
    /// (guesses taken back are guessed again).
    chooser_ranks: [usize; PERIODS + 1],
    /// The predictors, best-scored first, ranked as each summand is
    /// scored (guesses read it as it stands).
    ranked: Vec<usize>,
}

impl Predictors {
    pub(super) fn new(n: usize) -> Self {
        let all = Predictor::all();
        Predictors {
            ranked: (0..all.len()).collect(),
            scores: vec![0.0; all.len()],
            all,
            heights: vec![[-1; ANCHORS.len()]; n],
            at_root: vec![false; n],
            hits: vec![0; n],
            choosers: [0.0; PERIODS + 1],
            chooser_ranks: std::array::from_fn(|m| m),
        }
    }

    /// The predictor chooser `m` picks for `k` (see `choosers`).
    fn chosen(&self, ranked: &[usize], m: usize, k: usize) -> Option<usize> {
        let among = match m {
            0 => u128::MAX,
            _ => self.hits[k.checked_sub(1 << (m - 1))?],
        };
        ranked.iter().copied().find(|&i| among >> i & 1 == 1)
    }

    /// Notes that `k` is placed above `t` (`t` the root before it was).
    pub(super) fn record(&mut self, tree: &Growing, k: usize, t: Node, was_root: bool) {
        self.at_root[k] = was_root;
        for (d, &back) in ANCHORS.iter().enumerate() {
            self.heights[k][d] = k
                .checked_sub(back)
                .filter(|&a| tree.is_placed(a))
                .and_then(|a| tree.height_above(tree.leaf(a), t, MOST_HEIGHT))
                .map_or(-1, |h| h as i8);
        }
    }

    /// Scores every predictor, and every way of choosing one, on `k`'s
    /// place (recorded).
    pub(super) fn score(&mut self, k: usize) {
        // Predictors copying from one summand share its heights: each
        // summand's are read once, for all anchors.
        let here = self.heights[k];
        let mut hits = u128::from(self.at_root[k]);
        for from in 0..FROMS {
            let there = copied(from, k).map(|back| self.heights[back]);
            for d in 0..ANCHORS.len() {
                // Without a summand to copy from, a predictor puts `k`
                // above the root, as its guesses do.
                let hit = there.map_or(self.at_root[k], |there| {
                    there[d] >= 0 && there[d] == here[d]
                });
                hits |= u128::from(hit) << Predictor::Copy { d, from }.index();
            }
        }
        self.hits[k] = hits;
        for m in 0..=PERIODS {
            let right = self
                .chosen(&self.ranked, m, k)
                .is_some_and(|i| hits >> i & 1 == 1);
            self.choosers[m] = decayed(self.choosers[m], right);
        }
        rank(&mut self.chooser_ranks, &self.choosers);
        for (i, score) in self.scores.iter_mut().enumerate() {
            *score = decayed(*score, hits >> i & 1 == 1);
        }
        rank(&mut self.ranked, &self.scores);
    }

    /// Whether guesses are likely right: the best way of choosing was right
    /// about at least half the summands lately (its score, decaying by a
    /// tenth a summand, is at most 10).
    pub(super) fn foresee(&self) -> bool {
        self.choosers.iter().any(|&c| c >= FORESEEN)
    }

    /// The node for summand `k` of the predictor the best-scored way of
    /// choosing picks (a period's, where orders repeat with one), else of
    /// the best-scored predictor that names a node of `tree`.
    pub(super) fn guess(&self, tree: &Growing, k: usize) -> Option<Guess> {
        let ranked = &self.ranked;
        self.chooser_ranks
            .iter()
            .filter_map(|&m| self.chosen(ranked, m, k))
            .chain(ranked.iter().copied())
            .find_map(|i| self.node(tree, i, k))
    }

    /// The node predictor `i` names for summand `k`.
    fn node(&self, tree: &Growing, i: usize, k: usize) -> Option<Guess> {
        match self.all[i].source(k) {
            None => Some(Guess {
                t: tree.root(),
                anchor: k.checked_sub(1).filter(|&a| tree.is_placed(a)),
            }),
            Some((back, d)) => {
                let anchor = k.checked_sub(ANCHORS[d]).filter(|&a| tree.is_placed(a))?;
                let h = self.heights[back][d];
                let t = tree.ancestor(tree.leaf(anchor), usize::try_from(h).ok()?)?;
                Some(Guess {
                    t,
                    anchor: Some(anchor),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scoring reads a predictor's hit at its index.
    #[test]
    fn predictors_stand_at_their_index() {
        for (i, predictor) in Predictor::all().into_iter().enumerate() {
            assert_eq!(predictor.index(), i, "{predictor:?}");
        }
    }

    /// The integer rounding of subnormal scores is the hardware's, on every
    /// subnormal value.
    #[test]
    fn subnormal_scores_decay_as_in_f32() {
        for units in 1..0x80_0000u32 {
            let score = f32::from_bits(units);
            for hit in [false, true] {
                let hardware = DECAY * std::hint::black_box(score) + f32::from(u8::from(hit));
                assert_eq!(
                    decayed(score, hit).to_bits(),
                    hardware.to_bits(),
                    "{units} {hit}"
                );
            }
        }
    }
}
