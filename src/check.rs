//! Confirming a tree: replay it on random inputs and compare with the black
//! box bit for bit (`fprev check`).
//!
//! ```
//! use fprev::{check, probe, Format, Order};
//!
//! let opts = probe::ProbeOptions { n: Some(64), ..Default::default() };
//! let mut bb = probe::open("native:pairwise", &opts).unwrap();
//! let right = check::check(&Order::Pairwise.tree(64), &mut bb, 50, 1).unwrap();
//! assert!(right.mismatch.is_none());
//! let wrong = check::check(&Order::Sequential.tree(64), &mut bb, 50, 1).unwrap();
//! assert!(wrong.mismatch.is_some());
//! ```

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};
use crate::format::Format;
use crate::probe::Probe;
use crate::reduce::Replay;
use crate::tree::SummationTree;

/// A random input of `n` values of `format` whose sum depends on the order:
/// both signs, full random significands, magnitudes within a few binades of
/// each other (so that most additions round, and round differently in
/// different orders), small enough that no partial sum overflows.
pub fn random_input(format: Format, n: usize, rng: &mut impl Rng) -> Vec<f64> {
    let room = (format.max_finite() / n.max(1) as f64).log2().floor() as i32 - 1;
    let hi = room.min(4);
    let lo = hi - 6;
    (0..n)
        .map(|_| {
            let e = rng.random_range(lo..=hi);
            let m: f64 = rng.random_range(1.0..2.0);
            let s = if rng.random_bool(0.5) { -1.0 } else { 1.0 };
            format.round(s * m * 2f64.powi(e))
        })
        .collect()
}

/// The first input on which replay and black box disagreed.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Which trial (0-based).
    pub trial: usize,
    /// The input.
    pub input: Vec<f64>,
    /// What the tree's replay gave.
    pub replayed: f64,
    /// What the black box gave.
    pub black_box: f64,
}

/// Outcome of [`check()`].
#[derive(Clone, Debug, PartialEq)]
pub struct CheckReport {
    /// Trials run (all of them when nothing mismatched).
    pub trials: usize,
    /// The first disagreement (under the declared accumulator), if no
    /// accumulator reproduced the black box.
    pub mismatch: Option<Mismatch>,
    /// The accumulator whose replay matched every trial.
    pub accumulator: Option<Format>,
}

/// Replays `tree` on `trials` seeded random inputs and compares each result
/// with the black box's, bit for bit.
///
/// The order is the tree's; the precision of the partial sums is not always
/// the input format's (NumPy sums f16 in f32, OpenBLAS's sdot accumulates in
/// f64). So the replay runs in the probe's declared accumulator and in every
/// wider one, each result rounded once to the input format at the end, and
/// the check passes when one of them matches every trial.
pub fn check(
    tree: &SummationTree,
    probe: &mut dyn Probe,
    trials: usize,
    seed: u64,
) -> Result<CheckReport> {
    let n = probe.n();
    if tree.n() != n {
        return Err(Error::Input(format!(
            "the tree has {} summands but the black box takes {n}",
            tree.n()
        )));
    }
    let format = probe.format();
    let declared = probe.accumulator();
    let mut candidates: Vec<Replay> = std::iter::once(declared)
        .chain([Format::F32, Format::F64].into_iter().filter(|f| {
            f.precision() > declared.precision() && f.precision() >= format.precision()
        }))
        .map(|acc| Replay::new(tree, acc))
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut scratch = Vec::new();
    let mut out = [0.0];
    let mut first_mismatch = None;
    for trial in 0..trials {
        let input = random_input(format, n, &mut rng);
        probe.sum(&input, &mut out)?;
        let got = out[0];
        candidates.retain(|replay| {
            let replayed = format.round(replay.sum_with(&input, &mut scratch));
            let same = replayed.to_bits() == got.to_bits() || (replayed.is_nan() && got.is_nan());
            if !same && first_mismatch.is_none() && replay.accumulator() == declared {
                first_mismatch = Some(Mismatch {
                    trial,
                    input: input.clone(),
                    replayed,
                    black_box: got,
                });
            }
            same
        });
        if candidates.is_empty() {
            return Ok(CheckReport {
                trials: trial + 1,
                mismatch: first_mismatch,
                accumulator: None,
            });
        }
    }
    Ok(CheckReport {
        trials,
        mismatch: None,
        accumulator: candidates.first().map(Replay::accumulator),
    })
}
