//! Random inputs whose sums depend on the order: what confirming a tree
//! replays it on ([`crate::check`]), what a reveal tries its black box's
//! rows and order-independence with, and what NaiveSol tells trees apart by.

use std::fmt;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::format::Format;

/// The kinds of random input that [`check()`](crate::check::check) tries, in turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inputs {
    /// Both signs, full random significands, magnitudes within a few
    /// binades of each other: most additions round, and round differently
    /// in different orders.
    Close,
    /// Magnitudes spread over about three times the format's precision in
    /// binades: small summands are swamped, or not, depending on when they
    /// meet the large ones.
    Wide,
    /// Pairs `v, -v(1 + d)` with `d` up to two ulps, shuffled: heavy
    /// cancellation, so the sum is tiny next to its summands and carries
    /// every rounding error made on the way.
    Cancelling,
    /// Three of the format's least (subnormal) values, the others 0:
    /// hardware that flushes subnormal values to zero answers 0. Not in
    /// [`Inputs::ALL`]: a check of a matrix instruction asks it last.
    Subnormal,
}

impl Inputs {
    /// Every kind, in the order [`check()`](crate::check::check) cycles through them.
    pub const ALL: [Inputs; 3] = [Inputs::Close, Inputs::Wide, Inputs::Cancelling];

    /// A random input of `n` values of `format` of this kind, small enough
    /// that no partial sum overflows, and normal where the format's range
    /// leaves room for that.
    pub fn draw(self, format: Format, n: usize, rng: &mut impl Rng) -> Vec<f64> {
        let mut x = Vec::new();
        self.draw_into(format, n, rng, &mut x);
        x
    }

    /// [`Inputs::draw`] into `x`, reusing its memory: a confirmation of
    /// millions of summands draws dozens of them.
    pub fn draw_into(self, format: Format, n: usize, rng: &mut impl Rng, x: &mut Vec<f64>) {
        self.draw_summing(format, n, n, rng, x)
    }

    /// [`Inputs::draw_into`] of `n` values whose magnitudes leave room for
    /// a sum of `summed` of them in `format`: `n` where the sum stays in
    /// the inputs' format, 1 for the `x` of products a black box sums in
    /// a wider accumulator ([`Inputs::draw_weights`] bounds the products).
    pub fn draw_summing(
        self,
        format: Format,
        n: usize,
        summed: usize,
        rng: &mut impl Rng,
        x: &mut Vec<f64>,
    ) {
        if self == Inputs::Subnormal {
            x.clear();
            x.resize(n, 0.0);
            let least = format.ulp(0.0);
            for (v, k) in x.iter_mut().zip([3.0, -2.0, 5.0]) {
                *v = format.round(least * k);
            }
            return;
        }
        let room = (format.max_finite() / summed.max(1) as f64).log2().floor() as i32 - 1;
        let floor = format.min_normal().log2() as i32 + format.precision() as i32;
        let (lo, hi) = match self {
            Inputs::Close => (room.min(4) - 6, room.min(4)),
            Inputs::Wide | Inputs::Cancelling | Inputs::Subnormal => {
                let span = 3 * format.precision() as i32 / 2;
                (floor.max(-span).min(room), room.min(span))
            }
        };
        let span = (hi - lo + 1) as u64;
        x.clear();
        x.resize(n, 0.0);
        if n >= 2 * CHUNK {
            // Chunks of their own generators, seeded from this one, drawn
            // on every core: the same values whatever the cores.
            let seeds: Vec<u64> = (0..n.div_ceil(CHUNK)).map(|_| rng.random()).collect();
            x.par_chunks_mut(CHUNK)
                .zip(seeds)
                .for_each(|(chunk, seed)| {
                    let mut rng = ChaCha8Rng::seed_from_u64(seed);
                    self.fill(format, lo, span, chunk, &mut rng);
                });
        } else {
            self.fill(format, lo, span, x, rng);
        }
        if self == Inputs::Cancelling {
            shuffle(x, format.precision() <= Format::F32.precision(), rng);
        }
    }

    /// The `y` of products `x_i * y_i` whose `x` is of this kind: values
    /// of `format` near 1 (Close); where `x` is too narrow to round alone
    /// and the black box takes products of its operands (fp8: `reach`,
    /// the exponent of the largest `y` that keeps every partial sum
    /// finite), a Wide input's `y` are powers of two from `2^reach` down to
    /// the format's smallest, so that the products lie as far apart as a
    /// fused window reaches (e4m3 into f32: 2^-11 to 2^14).
    pub fn draw_weights(
        self,
        format: Format,
        reach: Option<i32>,
        n: usize,
        rng: &mut impl Rng,
        y: &mut Vec<f64>,
    ) {
        let Some(reach) = reach.filter(|_| self == Inputs::Wide) else {
            return Inputs::Close.draw_into(format, n, rng, y);
        };
        // Close values (full significands, so that products of two reach
        // past 2, where aligning at the factors' exponents shows), each
        // scaled by a power of two and kept normal.
        Inputs::Close.draw_into(format, n, rng, y);
        let lowest = format.min_normal().log2() as i32 + 1;
        let highest = reach.clamp(lowest, format.mask().log2() as i32 - 1);
        for v in y.iter_mut() {
            *v = format.round(*v * 2f64.powi(rng.random_range(lowest..=highest)));
        }
    }

    /// Fills `x` with values of this kind (its pairs not yet shuffled),
    /// their exponents from `lo` over `span` binades.
    fn fill(self, format: Format, lo: i32, span: u64, x: &mut [f64], rng: &mut impl Rng) {
        match format {
            Format::F64 => lay_out(x, rng, lo, span, 52, |v| v),
            // 23 fraction bits and an exponent within f32's normal range
            // (from -36 up): an f32 already.
            Format::F32 => lay_out(x, rng, lo, span, 23, |v| v),
            _ => lay_out(x, rng, lo, span, 23, |v| format.round(v)),
        }
        if self == Inputs::Cancelling {
            let ulp = 2f64.powi(1 - format.precision() as i32);
            for k in (1..x.len()).step_by(2) {
                let d = rng.random_range(-2i32..=2) as f64 * ulp;
                x[k] = format.round(-x[k - 1] * (1.0 + d));
            }
        }
    }
}

/// Values a chunk of a long input holds, each chunk drawn by a generator
/// of its own; even, so that no cancelling pair straddles two.
const CHUNK: usize = 1 << 16;

/// Fills `x` with random values, each its random bits laid into an f64
/// as its sign, an exponent in `lo..lo + span` and `f_bits` of fraction,
/// then `round`ed. Replays of a black box that multiplies draw 2n values a
/// trial, so a value is kept to a few instructions: the exponent is scaled
/// from its bits, not taken modulo the span (a division costs more than the
/// rest of a draw), and 23 fraction bits take 32 bits, two values from each
/// random word.
fn lay_out(
    x: &mut [f64],
    rng: &mut impl Rng,
    lo: i32,
    span: u64,
    f_bits: u32,
    round: impl Fn(f64) -> f64,
) {
    let e_bits = if f_bits <= 23 { 8 } else { 11 };
    let value = |bits: u64| {
        let e = lo + (((bits & ((1 << e_bits) - 1)) * span) >> e_bits) as i32;
        let fraction = (bits >> e_bits) & ((1 << f_bits) - 1);
        let sign = (bits >> (e_bits + f_bits)) & 1;
        round(f64::from_bits(
            sign << 63 | ((e + 1023) as u64) << 52 | fraction << (52 - f_bits),
        ))
    };
    // The random words first, a block at a time; then a loop free of the
    // generator's state, which the compiler can vectorise.
    let per_word = if f_bits <= 23 { 2 } else { 1 };
    let mut words = [0u64; 4096];
    for block in x.chunks_mut(words.len() * per_word) {
        let words = &mut words[..block.len().div_ceil(per_word)];
        rng.fill(&mut words[..]);
        if per_word == 2 {
            let mut pairs = block.chunks_exact_mut(2);
            for (pair, &w) in (&mut pairs).zip(words.iter()) {
                pair[0] = value(w & 0xffff_ffff);
                pair[1] = value(w >> 32);
            }
            if let [last] = pairs.into_remainder() {
                *last = value(words[words.len() - 1] & 0xffff_ffff);
            }
        } else {
            for (v, &w) in block.iter_mut().zip(words.iter()) {
                *v = value(w);
            }
        }
    }
}

/// Shuffles `x` uniformly. Fisher-Yates reads and writes anywhere in `x`,
/// a cache miss a value once `x` outgrows the caches (a second for 2^24
/// values); so a long `x` is first dealt into random buckets, each then
/// shuffled in cache and laid end to end (Rao and Sandelius: every
/// permutation stays equally likely). The buckets are drawn and shuffled
/// on every core, each chunk and bucket by a generator of its own; the
/// values wait in `f32` while they are dealt where `narrow` says each is
/// one: a copy of 2^27 values in `f64` would be another GiB.
fn shuffle(x: &mut [f64], narrow: bool, rng: &mut impl Rng) {
    const BUCKETS: usize = 256;
    if x.len() < 1 << 16 {
        x.shuffle(rng);
        return;
    }
    let mut bucket = vec![0u8; x.len()];
    let seeds: Vec<u64> = (0..x.len().div_ceil(CHUNK)).map(|_| rng.random()).collect();
    bucket
        .par_chunks_mut(CHUNK)
        .zip(seeds)
        .for_each(|(chunk, seed)| ChaCha8Rng::seed_from_u64(seed).fill(chunk));
    let mut next = [0usize; BUCKETS];
    for &b in &bucket {
        next[b as usize] += 1;
    }
    let sizes = next;
    let mut at = 0;
    for slot in next.iter_mut() {
        (*slot, at) = (at, at + *slot);
    }
    if narrow {
        let waiting: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        deal(x, &waiting, &bucket, &mut next);
    } else {
        let waiting = x.to_vec();
        deal(x, &waiting, &bucket, &mut next);
    }
    let mut buckets = Vec::with_capacity(BUCKETS);
    let mut rest = x;
    for size in sizes {
        let (b, r) = rest.split_at_mut(size);
        buckets.push((b, rng.random::<u64>()));
        rest = r;
    }
    buckets
        .into_par_iter()
        .for_each(|(b, seed)| b.shuffle(&mut ChaCha8Rng::seed_from_u64(seed)));
}

/// Lays each of `waiting` at the next place of its bucket in `x`.
fn deal<T: Copy + Into<f64>>(x: &mut [f64], waiting: &[T], bucket: &[u8], next: &mut [usize]) {
    for (&v, &b) in waiting.iter().zip(bucket) {
        x[next[b as usize]] = v.into();
        next[b as usize] += 1;
    }
}

impl fmt::Display for Inputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Inputs::Close => "close magnitudes",
            Inputs::Wide => "wide exponent range",
            Inputs::Cancelling => "cancelling pairs",
            Inputs::Subnormal => "subnormal values",
        })
    }
}

/// A random input of [`Inputs::Close`] values: the kind whose sum depends
/// most reliably on the order.
pub fn random_input(format: Format, n: usize, rng: &mut impl Rng) -> Vec<f64> {
    Inputs::Close.draw(format, n, rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn a_long_shuffle_is_a_permutation_that_moves_values_anywhere() {
        let n = 1 << 17;
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // Where value 0 lands, over many shuffles: every eighth of the
        // range, about equally often.
        let mut landed = [0usize; 8];
        for _ in 0..64 {
            let mut x: Vec<f64> = (0..n).map(|i| i as f64).collect();
            shuffle(&mut x, false, &mut rng);
            let mut sorted = x.clone();
            sorted.sort_by(f64::total_cmp);
            assert!(sorted.iter().enumerate().all(|(i, v)| *v == i as f64));
            let at = x.iter().position(|v| *v == 0.0).unwrap();
            landed[at * 8 / n] += 1;
            // Neighbours do not stay neighbours.
            let kept = x.windows(2).filter(|w| w[1] - w[0] == 1.0).count();
            assert!(kept < 16, "{kept} neighbours kept");
        }
        assert!(landed.iter().all(|&k| k >= 1), "{landed:?}");
    }
}
