//! Pre-rounded summation (Demmel and Nguyen; ReproBLAS's binned sums;
//! Arteaga, Fuhrer and Hoefler's single sweep; docs/ALGORITHMS.md,
//! Reproducible reducers): a
//! sum whose bits do not depend on the order of the summands, nor on how
//! they are split into chunks and the chunks merged.
//!
//! The exponent range is cut into fixed bins of `W = 40` bits: bin `j` holds
//! multiples of `2^unit(j)`, `unit(j) = -1074 + 40 j`, `j = 0..=52`. A value
//! is split into pieces, one per bin from the top down: the piece in a bin is
//! the multiple of the bin's unit nearest to what the bins above left of the
//! value (ties away from zero). The pieces depend on the value and the fixed
//! boundaries only, and each bin adds its pieces exactly, so every bin's
//! total is the same whatever the order. An accumulator keeps `K` bins
//! (default 3), from the bin of the largest value seen down; a larger value
//! moves the window up and the lowest bins are dropped. A value is deposited
//! only into windows whose top bin is at or above its own, where its pieces
//! above its own bin are zero: the kept pieces are the same whenever it came.
//!
//! How a piece is extracted (ReproBLAS's deposit): a bin's accumulator is a
//! float `1.5 * 2^(unit + 52)` plus the pieces so far, so its ulp is the
//! bin's unit and `q = acc + x` rounds `x` to that unit, exactly, as long as
//! `acc` stays in its binade. Setting the last significand bit of `x` first
//! (`x | 1`) keeps that rounding off exact ties, whose round-to-even outcome
//! would depend on `acc`; the bin is wide enough (`W <= 53 - 2`) for that bit
//! to sit below half the unit. `x - (q - acc)` is the exact rest for the
//! next bin. A piece is at most `2^(unit + 39)`: after `2^(51 - W) = 2^11`
//! deposits `acc` is still within `2^(unit + 50)` of where it started, well
//! inside its binade; every 2048 the accumulators are emptied into integers. `W = 40` is ReproBLAS's width for doubles: wider bins would be
//! emptied more often, narrower ones keep fewer bits per level (3 levels
//! keep 80 to 119 bits under the largest summand). `f32` summands go into
//! the same `f64` bins, exactly converted: ReproBLAS's 13-bit `f32` bins
//! would cost as much per value and keep 26 bits instead of 80.
//!
//! `value` returns the float nearest to the kept bins' exact total (ties to
//! even). With `n` summands the result is within
//! `ulp/2 + n * 2^(-40 (K - 1)) * max|v_i|` of the exact sum: usually
//! correctly rounded, unless the sum cancels to more than 80 bits under the
//! largest summand.
//!
//! Edge cases: every finite value is supported (the top bin, whose
//! accumulator would overflow, is kept scaled by `2^-40`); a sum past the
//! float range rounds to an infinity, as IEEE addition would; subnormals are
//! added exactly; an empty sum and a sum of `-0.0`s are `+0.0`; any NaN, or
//! both infinities, give NaN, one sign of infinity gives that infinity.
//!
//! ```
//! use fprev::reduce::{PreRounded, prerounded_sum, prerounded_sum_threads};
//!
//! let x: Vec<f64> = (0..10_000).map(|i| (i as f64).sin() * 1e10_f64.powi(i % 3)).collect();
//! let sum = prerounded_sum(&x);
//! let mut reversed = x.clone();
//! reversed.reverse();
//! assert_eq!(prerounded_sum(&reversed).to_bits(), sum.to_bits());
//! assert_eq!(prerounded_sum_threads(&x, 4).to_bits(), sum.to_bits());
//!
//! // Chunks summed apart and merged in any order.
//! let (a, b) = x.split_at(3_333);
//! let mut left = PreRounded::new();
//! left.add_slice(a);
//! let mut right = PreRounded::new();
//! right.add_slice(b);
//! right.merge(&left);
//! assert_eq!(right.value().to_bits(), sum.to_bits());
//!
//! // Cancellation that a plain sum loses (1e16 + 1 rounds to 1e16).
//! assert_eq!(prerounded_sum(&[1e16, 1.0, -1e16]), 1.0);
//! assert_eq!(1e16 + 1.0 - 1e16, 0.0);
//! ```

use std::marker::PhantomData;

use rayon::prelude::*;

use super::Real;

/// Bits per bin.
const W: i32 = 40;
/// The highest bin: its unit `2^1006` would need an accumulator beyond
/// `f64::MAX`, so it is kept scaled by `2^-W`, like the bin below.
const TOP: usize = 52;
/// Bins in all: with `K = BINS` levels every sum is exact.
const BINS: usize = TOP + 1;
/// Independent accumulators per bin, so that consecutive values do not wait
/// for each other (and are added with SIMD).
const LANES: usize = 32;
/// Deposits per lane between two emptyings of the accumulators.
const FLUSH: u32 = 2048;
/// Summands per rayon task.
const CHUNK: usize = 1 << 15;

/// The floats the pre-rounded sum adds: `f32` and `f64`.
pub trait PreRoundable: Real + sealed::Float {}
impl PreRoundable for f32 {}
impl PreRoundable for f64 {}

mod sealed {
    /// What the final rounding needs to know of a float type.
    pub trait Float: Copy {
        /// Significand bits, the implicit one included.
        const DIGITS: i32;
        /// Exponent of the smallest subnormal.
        const MIN_UNIT: i32;
        /// Every finite value is below `2^MAX_EXP`.
        const MAX_EXP: i32;
        /// Exact.
        fn to_f64(self) -> f64;
        /// Exact for the values the rounding gives it.
        fn from_f64(v: f64) -> Self;
    }

    impl Float for f64 {
        const DIGITS: i32 = f64::MANTISSA_DIGITS as i32;
        const MIN_UNIT: i32 = f64::MIN_EXP - f64::MANTISSA_DIGITS as i32;
        const MAX_EXP: i32 = f64::MAX_EXP;
        fn to_f64(self) -> f64 {
            self
        }
        fn from_f64(v: f64) -> Self {
            v
        }
    }

    impl Float for f32 {
        const DIGITS: i32 = f32::MANTISSA_DIGITS as i32;
        const MIN_UNIT: i32 = f32::MIN_EXP - f32::MANTISSA_DIGITS as i32;
        const MAX_EXP: i32 = f32::MAX_EXP;
        fn to_f64(self) -> f64 {
            self.into()
        }
        fn from_f64(v: f64) -> Self {
            v as f32
        }
    }
}

/// The pre-rounded sum of `x` with 3 levels: the same bits for every order
/// of `x`. 0 for an empty slice.
pub fn prerounded_sum<T: PreRoundable>(x: &[T]) -> T {
    let mut acc = PreRounded::new();
    acc.add_slice(x);
    acc.value()
}

/// [`prerounded_sum`] on `threads` threads: the same bits for every thread
/// count. Builds a thread pool per call; [`prerounded_sum_on`] reuses one.
///
/// # Panics
/// If the thread pool cannot be built.
pub fn prerounded_sum_threads<T: PreRoundable>(x: &[T], threads: usize) -> T {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .expect("a thread pool");
    prerounded_sum_on(&pool, x)
}

/// [`prerounded_sum`] on the threads of `pool`: chunks summed apart, merged
/// in whatever order they finish.
pub fn prerounded_sum_on<T: PreRoundable>(pool: &rayon::ThreadPool, x: &[T]) -> T {
    pool.install(|| {
        x.par_chunks(CHUNK)
            .map(|c| {
                let mut acc = PreRounded::new();
                acc.add_slice(c);
                acc
            })
            .reduce(PreRounded::new, |mut a, b| {
                a.merge(&b);
                a
            })
            .value()
    })
}

/// A pre-rounded sum in progress: add values and merge accumulators in any
/// order, the [`value`](PreRounded::value) has the same bits.
#[derive(Clone, Debug)]
pub struct PreRounded<T> {
    /// The bin of level 0; level `k` is bin `top - k`.
    top: usize,
    /// Per level, the pieces emptied out of `acc`, in units of its bin.
    sums: Vec<i128>,
    /// Per level and lane, `offset` plus the pieces since the last flush.
    acc: Vec<[f64; LANES]>,
    /// Deposits per lane since the last flush.
    pending: u32,
    /// The sum of the infinities and NaNs seen, 0 if none.
    nonfinite: f64,
    summand: PhantomData<T>,
}

impl<T: PreRoundable> Default for PreRounded<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: PreRoundable> PreRounded<T> {
    /// An empty sum with 3 levels.
    pub fn new() -> Self {
        Self::with_levels(3)
    }

    /// An empty sum keeping `levels` bins of 40 bits: more levels, fewer
    /// low-order bits dropped (53 keep every bit, so the sum is exact).
    ///
    /// # Panics
    /// If `levels` is not in `1..=53`.
    pub fn with_levels(levels: usize) -> Self {
        assert!(
            (1..=BINS).contains(&levels),
            "{levels} levels: expected 1 to {BINS}"
        );
        // The lowest window: every level is a real bin.
        let top = levels - 1;
        PreRounded {
            top,
            sums: vec![0; levels],
            acc: (0..levels).map(|k| [offset(top - k); LANES]).collect(),
            pending: 0,
            nonfinite: 0.0,
            summand: PhantomData,
        }
    }

    /// The number of bins kept.
    pub fn levels(&self) -> usize {
        self.sums.len()
    }

    /// Adds one value ([`add_slice`](PreRounded::add_slice) is faster).
    pub fn add(&mut self, v: T) {
        let mut x = [v.to_f64()];
        self.admit(&mut x);
        self.deposit(x);
    }

    /// Adds every value of `x`.
    pub fn add_slice(&mut self, x: &[T]) {
        let mut blocks = x.chunks_exact(LANES);
        let mut bound = limit(self.top);
        for block in &mut blocks {
            let mut v: [f64; LANES] = std::array::from_fn(|l| block[l].to_f64());
            // Without a branch per value: does the whole block fit?
            if !v.iter().fold(true, |ok, v| ok & (v.abs() < bound)) {
                self.admit(&mut v);
                bound = limit(self.top);
            }
            self.deposit(v);
        }
        for v in blocks.remainder() {
            self.add(*v);
        }
    }

    /// Adds the values `other` has added.
    ///
    /// # Panics
    /// If the two keep different numbers of levels.
    pub fn merge(&mut self, other: &Self) {
        assert_eq!(self.levels(), other.levels(), "merging different levels");
        self.raise(self.top.max(other.top));
        for (k, total) in other.totals().into_iter().enumerate() {
            // Bins under self's window are dropped, as if other's values had
            // been added here.
            if let Some(sum) = self.sums.get_mut(self.top - other.top + k) {
                *sum += total;
            }
        }
        self.nonfinite += other.nonfinite;
    }

    /// The float nearest to the exact total of the kept bins.
    pub fn value(&self) -> T {
        if self.nonfinite != 0.0 {
            // NaN, or the one infinity seen (the finite part cannot matter).
            return T::from_f64(if self.nonfinite.is_nan() {
                f64::NAN
            } else {
                self.nonfinite
            });
        }
        nearest(self.top, &self.totals())
    }

    /// Takes the infinities and NaNs out of `x`, and moves the window up to
    /// the bin of the largest value.
    fn admit(&mut self, x: &mut [f64]) {
        for v in x {
            if !v.is_finite() {
                self.nonfinite += *v;
                *v = 0.0;
            } else if v.abs() >= limit(self.top) {
                let top = (self.top..TOP).find(|&j| v.abs() < limit(j)).unwrap_or(TOP);
                self.raise(top);
            }
        }
    }

    /// Splits each `x[l]` (below `limit(top)`) into the bins of lane `l`.
    fn deposit<const N: usize>(&mut self, mut x: [f64; N]) {
        for (k, acc) in self.acc.iter_mut().enumerate() {
            let bin = self.top - k;
            if bin == TOP {
                for (a, v) in acc.iter_mut().zip(&mut x) {
                    *v = extract_scaled(a, *v);
                }
            } else {
                // Bin 0's unit is the smallest subnormal: the rest is
                // already a multiple of it, and must not be touched.
                let sticky = u64::from(bin > 0);
                for (a, v) in acc.iter_mut().zip(&mut x) {
                    *v = extract(a, *v, sticky);
                }
            }
        }
        self.pending += 1;
        if self.pending == FLUSH {
            self.flush();
        }
    }

    /// Empties the accumulators into `sums`.
    fn flush(&mut self) {
        for (k, (sum, acc)) in self.sums.iter_mut().zip(&mut self.acc).enumerate() {
            let empty = offset(self.top - k);
            for a in acc {
                *sum += units(*a);
                *a = empty;
            }
        }
        self.pending = 0;
    }

    /// Moves level 0 to bin `top` (at or above the current one).
    fn raise(&mut self, top: usize) {
        if top == self.top {
            return;
        }
        self.flush();
        let shift = (top - self.top).min(self.levels());
        self.sums.rotate_right(shift);
        self.sums[..shift].fill(0);
        self.top = top;
        for (k, acc) in self.acc.iter_mut().enumerate() {
            *acc = [offset(top - k); LANES];
        }
    }

    /// Per level, the exact total of its bin, in units of the bin.
    fn totals(&self) -> Vec<i128> {
        self.sums
            .iter()
            .zip(&self.acc)
            .map(|(sum, acc)| sum + acc.iter().map(|a| units(*a)).sum::<i128>())
            .collect()
    }
}

/// Adds to the bin accumulator `acc` the multiple of its unit nearest to
/// `x` (ties away from zero, by `sticky`), and returns the exact rest.
#[inline(always)]
fn extract(acc: &mut f64, x: f64, sticky: u64) -> f64 {
    let q = f64::from_bits(x.to_bits() | sticky) + *acc;
    let rest = x + (*acc - q);
    *acc = q;
    rest
}

/// [`extract`] for the top bin, whose accumulator holds `2^-W` times its
/// pieces. The piece is taken off in halves: a whole one may be `2^1024`.
fn extract_scaled(acc: &mut f64, x: f64) -> f64 {
    let q = f64::from_bits((x * pow2(-W)).to_bits() | 1) + *acc;
    let half = (*acc - q) * pow2(W - 1);
    *acc = q;
    x + half + half
}

/// The unit of bin `j` (which may be below bin 0, for the rounding).
fn unit(j: isize) -> i32 {
    -1074 + W * j as i32
}

/// The empty accumulator of bin `j`: `1.5 * 2^(unit + 52)`, whose ulp is
/// the unit, in the middle of its binade.
fn offset(j: usize) -> f64 {
    1.5 * pow2(unit(j.min(TOP - 1) as isize) + 52)
}

/// Values below this round to zero in every bin above `j`: they may be
/// deposited into a window whose top is `j`.
fn limit(j: usize) -> f64 {
    if j == TOP {
        f64::INFINITY
    } else {
        pow2(unit(j as isize) + W - 1)
    }
}

/// The pieces an accumulator holds, in units of its bin: its significand
/// less the offset's.
fn units(acc: f64) -> i128 {
    i128::from(acc.to_bits() & ((1 << 52) - 1)) - (1 << 51)
}

/// `2^e`, for `e` in `-1074..=1023`.
fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1 << (e + 1074))
    }
}

/// The float nearest to `sum_k totals[k] * 2^unit(top - k)`, ties to even.
fn nearest<T: PreRoundable>(top: usize, totals: &[i128]) -> T {
    // Signed digits in [-2^39, 2^39), lowest bin first, carried up through
    // bins above the top (a top total is at most about 2^104).
    let mut digits = Vec::with_capacity(totals.len() + 4);
    let mut carry = 0i128;
    for &t in totals.iter().rev().chain(&[0; 4]) {
        let n = t + carry;
        carry = (n + (1 << (W - 1))) >> W;
        digits.push(n - (carry << W));
    }
    let Some(t) = digits.iter().rposition(|&d| d != 0) else {
        return T::from_f64(0.0);
    };
    // The top three digits in one integer (below 2^120); the digits under
    // them add up to less than one of its units, so their sign alone tells
    // on which side of it the sum lies: an extra half unit, like a sticky bit.
    let t = t as isize;
    let digit = |i: isize| usize::try_from(i).map_or(0, |i| digits[i]);
    let window = (digit(t) << (2 * W)) + (digit(t - 1) << W) + digit(t - 2);
    let below = digits[..usize::try_from(t - 2).unwrap_or(0)]
        .iter()
        .rev()
        .find(|&&d| d != 0)
        .map_or(0, |d| d.signum());
    let low = (top + 1 - totals.len()) as isize;
    round::<T>(2 * window + below, unit(low + t - 2) - 1)
}

/// The float nearest to `m * 2^e`, ties to even.
fn round<T: PreRoundable>(m: i128, e: i32) -> T {
    let mag = m.unsigned_abs();
    let len = 128 - mag.leading_zeros() as i32;
    // Bits to drop: beyond the precision, or under the smallest subnormal
    // (at most len + 1: that already rounds to zero).
    let cut = (len - T::DIGITS).max(T::MIN_UNIT - e).clamp(0, len + 1);
    let mut q = mag >> cut;
    if cut > 0 {
        let rest = mag & ((1 << cut) - 1);
        let half = 1 << (cut - 1);
        q += u128::from(rest > half || (rest == half && q & 1 == 1));
    }
    let e = e + cut;
    // q <= 2^DIGITS: exact in f64, and so is the product when it is finite.
    let v = if q == 0 {
        0.0
    } else if e + (128 - q.leading_zeros() as i32) > T::MAX_EXP {
        f64::INFINITY
    } else {
        q as f64 * pow2(e)
    };
    T::from_f64(if m < 0 { -v } else { v })
}
