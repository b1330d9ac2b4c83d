//! Whether a black box's answer to the same input changes from call to
//! call (work stealing, dynamic schedules, atomics), and by how much.
//!
//! A reveal assumes one fixed order. A black box that regroups its sum on
//! every call breaks that assumption in a way of its own: not a wrong
//! precision, not a compensated sum, but another order each time. Asking
//! the same input again tells it apart, at the cost of the repeats.
//!
//! ```
//! use fprev::{Format, Probe, variation};
//!
//! /// Sums left to right, or right to left every other call.
//! struct Flips(bool);
//! impl Probe for Flips {
//!     fn n(&self) -> usize { 64 }
//!     fn format(&self) -> Format { Format::F32 }
//!     fn sum(&mut self, x: &[f64], out: &mut [f64]) -> fprev::Result<()> {
//!         self.0 = !self.0;
//!         let order = if self.0 { fprev::Order::Sequential } else { fprev::Order::Reverse };
//!         out[0] = order.sum(x, Format::F32);
//!         Ok(())
//!     }
//! }
//!
//! let v = variation::measure(&mut Flips(false), 8, 4, 1).unwrap();
//! assert!(v.varies());
//! let numpy_like = &mut fprev::open("native:pairwise", &Default::default()).unwrap();
//! assert!(!variation::measure(numpy_like, 8, 4, 1).unwrap().varies());
//! ```

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Deserializer, Serialize};

use crate::error::Result;
use crate::inputs::Inputs;
use crate::probe::Probe;
use crate::skeleton::Skeleton;

/// What repeating the same inputs showed: a tree file of a varying black
/// box records it (`"varies"`), with its skeleton's counts (a spread past
/// the largest finite number is `null` in JSON, read back as infinite).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Variation {
    /// Random inputs tried.
    pub inputs: usize,
    /// Calls of the black box on each.
    pub runs: usize,
    /// Inputs on which the results' bits differed between calls.
    pub varied: usize,
    /// The most distinct results seen for one input.
    pub most_distinct: usize,
    /// The largest difference between two results for one input, in units
    /// in the last place of the input format at the exact sum's magnitude.
    #[serde(deserialize_with = "null_is_infinite")]
    pub spread_ulps: f64,
    /// That difference relative to the exact sum's magnitude.
    #[serde(deserialize_with = "null_is_infinite")]
    pub spread_relative: f64,
    /// The condition number `κ = Σ|x| / |Σx|` of the input that spread
    /// most: two orders of `n` summands differ by at most about
    /// `(n - 1) ε κ` of the sum, `ε` the format's machine epsilon.
    #[serde(deserialize_with = "null_is_infinite")]
    pub condition: f64,
    /// The subtrees every call shared and the joins that varied, where
    /// they were looked for ([`reveal::skeleton`](crate::reveal::skeleton())).
    /// A tree file holds its tree as the file's tree. Boxed: a variation
    /// travels in outcomes far more often without one.
    #[serde(skip)]
    pub skeleton: Option<Box<Skeleton>>,
}

/// A number JSON wrote as `null` (it has no infinity) as infinite.
fn null_is_infinite<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

impl Variation {
    /// Whether any input gave different bits on different calls.
    pub fn varies(&self) -> bool {
        self.varied > 0
    }
}

/// Sums each of `inputs` seeded random inputs (cycling through the kinds
/// of [`Inputs`]) `runs` times with `probe` and compares the results bit
/// for bit: `inputs × runs` calls.
pub fn measure(probe: &mut dyn Probe, inputs: usize, runs: usize, seed: u64) -> Result<Variation> {
    sample(probe, inputs, runs, seed, false)
}

/// [`measure`], stopping after the first round of calls in which some
/// input's bits changed: at most `inputs × most_runs` calls, fewer for a
/// black box that varies. Variation that shows once in many calls (a pool
/// whose work stealing seldom regroups) needs many rounds to be seen.
pub fn look_for(
    probe: &mut dyn Probe,
    inputs: usize,
    most_runs: usize,
    seed: u64,
) -> Result<Variation> {
    sample(probe, inputs, most_runs, seed, true)
}

/// `inputs` seeded random inputs for `probe`, cycling through the kinds
/// of [`Inputs`].
fn drawn(probe: &dyn Probe, inputs: usize, seed: u64) -> Vec<Vec<f64>> {
    let (n, format) = (probe.n(), probe.format());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..inputs)
        .map(|k| Inputs::ALL[k % Inputs::ALL.len()].draw(format, n, &mut rng))
        .collect()
}

/// The bits of `probe`'s answer to each of `inputs` seeded random inputs
/// (drawn as [`measure`] draws them): what another process, asked the
/// same, is compared with ([`Processes::compare`]).
pub fn answers(probe: &mut dyn Probe, inputs: usize, seed: u64) -> Result<Vec<u64>> {
    let mut out = [0.0];
    drawn(probe, inputs, seed)
        .iter()
        .map(|x| {
            probe.sum(x, &mut out)?;
            Ok(out[0].to_bits())
        })
        .collect()
}

/// What the answers of several processes to the same inputs showed: an
/// order fixed in each process but chosen as it starts (a hash seed, a
/// thread pool's start-up, an allocation's address) differs between them.
///
/// ```
/// use fprev::variation::Processes;
///
/// let same = Processes::compare(&[vec![1, 2], vec![1, 2], vec![1, 2]]);
/// assert!(!same.varies());
/// let apart = Processes::compare(&[vec![1, 2], vec![1, 3], vec![1, 4]]);
/// assert_eq!((apart.varied, apart.most_distinct), (1, 3));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Processes {
    /// Processes compared.
    pub processes: usize,
    /// Random inputs each answered.
    pub inputs: usize,
    /// Inputs whose answers' bits differed between processes.
    pub varied: usize,
    /// The most distinct answers to one input.
    pub most_distinct: usize,
}

impl Processes {
    /// Compares the [`answers`] of each process, one list a process.
    pub fn compare(answers: &[Vec<u64>]) -> Processes {
        let inputs = answers.iter().map(Vec::len).min().unwrap_or(0);
        let mut found = Processes {
            processes: answers.len(),
            inputs,
            varied: 0,
            most_distinct: 1,
        };
        for k in 0..inputs {
            let mut bits: Vec<u64> = answers.iter().map(|a| a[k]).collect();
            bits.sort_unstable();
            bits.dedup();
            if bits.len() > 1 {
                found.varied += 1;
                found.most_distinct = found.most_distinct.max(bits.len());
            }
        }
        found
    }

    /// Whether any input was answered differently by two processes.
    pub fn varies(&self) -> bool {
        self.varied > 0
    }
}

fn sample(
    probe: &mut dyn Probe,
    inputs: usize,
    runs: usize,
    seed: u64,
    stop_early: bool,
) -> Result<Variation> {
    let xs = drawn(probe, inputs, seed);
    let format = probe.format();
    let mut results: Vec<Vec<f64>> = vec![Vec::with_capacity(runs); inputs];
    let mut out = [0.0];
    let mut done = 0;
    while done < runs {
        // Every other round in reverse, so that a black box whose order
        // changes with the count of calls (every second one, every eighth)
        // does not answer each input in the same phase every round.
        let mut order: Vec<usize> = (0..inputs).collect();
        if done % 2 == 1 {
            order.reverse();
        }
        for k in order {
            probe.sum(&xs[k], &mut out)?;
            results[k].push(out[0]);
        }
        done += 1;
        let changed = |seen: &Vec<f64>| seen.iter().any(|y| y.to_bits() != seen[0].to_bits());
        if stop_early && results.iter().any(changed) {
            break;
        }
    }
    let mut found = Variation {
        inputs,
        runs: done,
        varied: 0,
        most_distinct: 1,
        spread_ulps: 0.0,
        spread_relative: 0.0,
        condition: 1.0,
        skeleton: None,
    };
    for (x, seen) in xs.iter().zip(&results) {
        let mut bits: Vec<u64> = seen.iter().map(|y| y.to_bits()).collect();
        bits.sort_unstable();
        bits.dedup();
        if bits.len() == 1 {
            continue;
        }
        found.varied += 1;
        found.most_distinct = found.most_distinct.max(bits.len());
        let (lo, hi) = seen
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &y| {
                (lo.min(y), hi.max(y))
            });
        let exact: f64 = x.iter().sum();
        let magnitude: f64 = x.iter().map(|v| v.abs()).sum();
        let scale = exact.abs().max(f64::MIN_POSITIVE);
        let spread = hi - lo;
        let ulps = spread / format.ulp(scale);
        if ulps > found.spread_ulps || !spread.is_finite() {
            found.spread_ulps = ulps;
            found.spread_relative = spread / scale;
            found.condition = magnitude / scale;
        }
    }
    Ok(found)
}
