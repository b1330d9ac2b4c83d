//! Confirming a tree: replay it on random inputs and compare with the black
//! box bit for bit (`fprev check`).
//!
//! ```
//! use fprev::{check, probe, Format, Order};
//!
//! let opts = probe::ProbeOptions { n: Some(64), ..Default::default() };
//! let mut bb = fprev::open("native:pairwise", &opts).unwrap();
//! let right = check::check(&Order::Pairwise.tree(64), &mut bb, 50, 1).unwrap();
//! assert!(right.mismatch.is_none());
//! let wrong = check::check(&Order::Sequential.tree(64), &mut bb, 50, 1).unwrap();
//! assert!(wrong.mismatch.is_some());
//! ```

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::arith::Arithmetic;
use crate::document::{Confirmation, TreeDocument};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::formula::Formula;
use crate::inputs::Inputs;
use crate::probe::Probe;
use crate::reduce::Replay;
use crate::tree::SummationTree;

/// The input on which the last replay that had matched every input before
/// it disagreed with the black box: no replay matches from there on.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Which trial (0-based).
    pub trial: usize,
    /// What kind of input it was.
    pub kind: Inputs,
    /// The input.
    pub input: Vec<f64>,
    /// The vector it was multiplied by, for a black box that multiplies
    /// and a model that says how it rounds products (`None`: ones).
    pub weights: Option<Vec<f64>>,
    /// What the tree's replay gave.
    pub replayed: f64,
    /// The accumulator that replay added in.
    pub accumulator: Format,
    /// What the black box gave.
    pub black_box: f64,
}

/// Outcome of [`check()`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckReport {
    /// Trials run (all of them when nothing mismatched).
    pub trials: usize,
    /// Where the last accumulator still reproducing the black box failed,
    /// if none reproduced it (every trial before matched that replay).
    pub mismatch: Option<Mismatch>,
    /// The accumulator whose replay matched every trial.
    pub accumulator: Option<Format>,
    /// The arithmetic model whose replay matched every trial, when models
    /// were checked ([`check_models`]).
    pub model: Option<Arithmetic>,
}

impl CheckReport {
    /// Trials that matched bit for bit before the first mismatch (all of
    /// them when none did).
    pub fn passed(&self) -> usize {
        self.trials - usize::from(self.mismatch.is_some())
    }
}

/// Random inputs a reveal replays its tree on by default, to confirm that
/// the black box does what the tree says (and not only in that order).
pub const CONFIRM_TRIALS: usize = 48;

/// The most trials one check runs ([`crate::bounds::MOST_TRIALS`]).
pub const MAX_TRIALS: usize = crate::error::bounds::MOST_TRIALS as usize;

impl From<&CheckReport> for Confirmation {
    fn from(report: &CheckReport) -> Self {
        Confirmation {
            trials: report.trials,
            passed: report.passed(),
            accumulator: report.accumulator.map(|f| f.name().to_string()),
            mismatch_file: None,
        }
    }
}

/// Replays `tree` on `trials` seeded random inputs, cycling through the
/// kinds of [`Inputs`], and compares each result with the black box's, bit
/// for bit.
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
    check_row(tree, probe, trials, seed, 0)
}

/// [`check()`] against row `row` of a batched black box (a GEMM's row, an
/// MPI vector's element), whose order `fprev reveal --row` reveals: each
/// trial's input goes into rows 0 to `row`, and row `row`'s sum is compared.
pub fn check_row(
    tree: &SummationTree,
    probe: &mut dyn Probe,
    trials: usize,
    seed: u64,
    row: usize,
) -> Result<CheckReport> {
    check_shape(tree.n(), probe, row)?;
    let candidates: Vec<Replay> = accumulators(probe)
        .map(|acc| Replay::new(tree, acc))
        .collect();
    let (report, _) = check_replays(candidates, probe, trials, seed, row)?;
    Ok(report)
}

/// The accumulators a plain replay of `probe` tries: its declared one,
/// then each wider one that holds its inputs.
fn accumulators(probe: &dyn Probe) -> impl Iterator<Item = Format> {
    let (format, declared) = (probe.format(), probe.accumulator());
    std::iter::once(declared).chain([Format::F32, Format::F64].into_iter().filter(move |f| {
        f.precision() > declared.precision() && f.precision() >= format.precision()
    }))
}

/// Checks a tree file's tree against `probe` at `row`: with its
/// arithmetic model where it has one, bit for bit ([`check_models`]),
/// else in plain additions ([`check_row`]); replayed straight from its
/// formula where the file holds one and the model streams
/// ([`check_formula`]), else on its nodes, where they fit in memory.
pub fn check_document(
    doc: &TreeDocument,
    probe: &mut dyn Probe,
    trials: usize,
    seed: u64,
    row: usize,
) -> Result<CheckReport> {
    let models: Vec<Arithmetic> = doc.arithmetic.iter().cloned().collect();
    if let Some(formula) = doc.formula()
        && models.iter().all(Replay::streams)
    {
        return check_formula(formula, &models, probe, trials, seed, row);
    }
    let tree = doc.buildable().map_err(|why| match doc.formula() {
        Some(_) => Error::Input(format!(
            "its arithmetic model needs the tree's nodes (it names some, compensates, adds in \
             x87 registers or rounds products), and {why}"
        )),
        None => Error::Input(why),
    })?;
    match models.is_empty() {
        true => check_row(tree, probe, trials, seed, row),
        false => Ok(check_models(tree, &models, probe, trials, seed, row)?.0),
    }
}

/// [`check_models()`] of the tree `formula` gives at the black box's `n`,
/// or, without models, [`check_row()`]: replayed from the formula as it
/// streams, no node built, so a check of `2^27` summands holds little
/// more than one input. Only models that stream are tried (those naming
/// no node, compensating no error, adding in no x87 register and rounding
/// no product: see [`check_document`] for the rest); the report's `model`
/// is the first whose replay matched every trial.
///
/// ```
/// use fprev::{check, formula::Formula, probe};
///
/// let f: Formula = "blocks(64, sequential, pairwise)".parse().unwrap();
/// let opts = probe::ProbeOptions { n: Some(100_000), ..Default::default() };
/// let mut bb = fprev::open(&format!("native:{f}"), &opts).unwrap();
/// let report = check::check_formula(&f, &[], &mut bb, 8, 1, 0).unwrap();
/// assert!(report.mismatch.is_none());
/// let pairwise: Formula = "pairwise".parse().unwrap();
/// assert!(check::check_formula(&pairwise, &[], &mut bb, 8, 1, 0).unwrap().mismatch.is_some());
/// ```
pub fn check_formula(
    formula: &Formula,
    models: &[Arithmetic],
    probe: &mut dyn Probe,
    trials: usize,
    seed: u64,
    row: usize,
) -> Result<CheckReport> {
    let n = probe.n();
    check_shape(n, probe, row)?;
    let streamed: Vec<(&Arithmetic, Replay)> = models
        .iter()
        .filter_map(|m| Some((m, Replay::of_formula(formula, n, m)?)))
        .collect();
    if !models.is_empty() && streamed.is_empty() {
        return Err(Error::Input(
            "no model given streams from a formula: each names nodes, compensates, adds in \
             x87 registers or rounds products"
                .into(),
        ));
    }
    let candidates = match streamed.is_empty() {
        true => accumulators(probe)
            .filter_map(|acc| {
                let ieee = Arithmetic::uniform(crate::arith::NodeArithmetic::ieee(acc));
                Replay::of_formula(formula, n, &ieee)
            })
            .collect(),
        false => streamed.iter().map(|(_, r)| r.clone()).collect(),
    };
    let (mut report, left) = check_replays(candidates, probe, trials, seed, row)?;
    report.model = left
        .first()
        .and_then(|&k| streamed.get(k))
        .map(|(m, _)| (*m).clone());
    Ok(report)
}

/// [`check_row()`] for arithmetic models: replays `tree` with each of
/// `models` and returns the report with the index of the first model that
/// matched every trial (`None` when none did).
pub fn check_models(
    tree: &SummationTree,
    models: &[Arithmetic],
    probe: &mut dyn Probe,
    trials: usize,
    seed: u64,
    row: usize,
) -> Result<(CheckReport, Option<usize>)> {
    check_shape(tree.n(), probe, row)?;
    let candidates = models
        .iter()
        .map(|m| Replay::with_arithmetic(tree, m))
        .collect();
    let (mut report, left) = check_replays(candidates, probe, trials, seed, row)?;
    let first = left.first().copied();
    report.model = first.map(|k| models[k].clone());
    Ok((report, first))
}

/// [`check_models()`] that returns every model that matched every trial
/// (in the order given), not only the first.
pub(crate) fn check_models_all(
    tree: &SummationTree,
    models: &[Arithmetic],
    probe: &mut dyn Probe,
    trials: usize,
    seed: u64,
) -> Result<(CheckReport, Vec<usize>)> {
    check_shape(tree.n(), probe, 0)?;
    let candidates = models
        .iter()
        .map(|m| Replay::with_arithmetic(tree, m))
        .collect();
    let (mut report, left) = check_replays(candidates, probe, trials, seed, 0)?;
    report.model = left.first().map(|&k| models[k].clone());
    Ok((report, left))
}

fn check_shape(n: usize, probe: &dyn Probe, row: usize) -> Result<()> {
    if row >= probe.max_batch().max(1) {
        return Err(Error::Input(format!(
            "no row {row}: this black box sums {} rows a call",
            probe.max_batch().max(1)
        )));
    }
    if n != probe.n() {
        return Err(Error::Input(format!(
            "the tree has {n} summands but the black box takes {}",
            probe.n()
        )));
    }
    Ok(())
}

/// From this many summands a trial's replay runs beside the black box's
/// call, on another thread: below it, a thread costs more than it saves.
const OVERLAP_FROM: usize = 1 << 16;

/// Replays every candidate on the same seeded random inputs, dropping each
/// at its first mismatch; the indices returned are the candidates left.
fn check_replays(
    candidates: Vec<Replay>,
    probe: &mut dyn Probe,
    trials: usize,
    seed: u64,
    row: usize,
) -> Result<(CheckReport, Vec<usize>)> {
    if trials > MAX_TRIALS {
        return Err(Error::Input(format!(
            "{trials} trials: a check runs at most {MAX_TRIALS}"
        )));
    }
    let n = probe.n();
    let format = probe.format();
    // Each candidate returning the black box's format, and (made once the
    // black box returns a value wider than that: Python's built-in sum of
    // float32 values returns a Python float) returning its root in f64.
    let mut candidates: Vec<(usize, Replay, Option<Replay>)> = candidates
        .into_iter()
        .enumerate()
        .map(|(k, r)| (k, r.returning(format), None))
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut scratch = Vec::new();
    let mut out = vec![0.0; row + 1];
    let starts = vec![0; row + 2];
    let mut last_failure = None;
    // Products are only asked of a black box that forms them, and only
    // when a model says how it rounds them.
    let multiplies =
        probe.as_dot().is_some() && candidates.iter().any(|(_, r, _)| r.has_products());
    let (mut input, mut y) = (Vec::new(), Vec::new());
    for trial in 0..trials {
        let kind = Inputs::ALL[trial % Inputs::ALL.len()];
        kind.draw_into(format, n, &mut rng, &mut input);
        let weights = multiplies.then(|| {
            Inputs::Close.draw_into(format, n, &mut rng, &mut y);
            &y
        });
        let run = |r: &Replay, scratch: &mut Vec<f64>| match weights {
            Some(y) => r.dot_with(&input, y, scratch),
            None => r.sum_with(&input, scratch),
        };
        // Each candidate's result, and its result in f64 where that
        // replay is made already.
        let replay_all = |scratch: &mut Vec<f64>| -> Vec<(f64, Option<f64>)> {
            candidates
                .iter()
                .map(|(_, narrow, wide)| {
                    (run(narrow, scratch), wide.as_ref().map(|w| run(w, scratch)))
                })
                .collect()
        };
        let call = |probe: &mut dyn Probe, out: &mut Vec<f64>| -> Result<f64> {
            if let Some(y) = weights
                && let Some(dot) = probe.as_dot()
            {
                // The input in every row up to `row`, as below.
                if row == 0 {
                    dot.dot(&input, y, out)?;
                } else {
                    dot.dot(&input.repeat(row + 1), y, out)?;
                }
            } else if row == 0 {
                probe.sum(&input, out)?;
            } else {
                // The input in every row up to `row`.
                let batch = crate::probe::Batch {
                    base: &input,
                    starts: &starts,
                    positions: &[],
                    values: &[],
                    continues: false,
                };
                probe.sum_batch(&batch, out)?;
            }
            Ok(out[row])
        };
        let (got, mut replayed) = if n >= OVERLAP_FROM {
            // A large input is replayed on a second core while the black
            // box sums it: a trial then costs the slower of the two.
            std::thread::scope(|s| {
                let replaying = s.spawn(|| replay_all(&mut scratch));
                let got = call(&mut *probe, &mut out);
                let replayed = replaying.join().expect("a replay does not panic");
                got.map(|got| (got, replayed))
            })?
        } else {
            let got = call(&mut *probe, &mut out)?;
            (got, replay_all(&mut scratch))
        };
        let wider = got.is_finite() && format.round(got) != got;
        if wider {
            for ((_, narrow, wide), (_, result)) in candidates.iter_mut().zip(&mut replayed) {
                if wide.is_none() {
                    let w = narrow.clone().returning(Format::F64);
                    *result = Some(run(&w, &mut scratch));
                    *wide = Some(w);
                }
            }
        }
        let mut results = replayed.into_iter();
        candidates.retain(|(_, narrow, wide)| {
            let (narrow_result, wide_result) = results.next().expect("a result a candidate");
            let (replay, replayed) = match (wide, wide_result) {
                (Some(wide), Some(r)) if wider => (wide, r),
                _ => (narrow, narrow_result),
            };
            let same = replayed.to_bits() == got.to_bits() || (replayed.is_nan() && got.is_nan());
            if !same {
                // The input is kept only once no candidate is left: a
                // copy of 2^27 values is a GiB.
                last_failure = Some(Mismatch {
                    trial,
                    kind,
                    input: Vec::new(),
                    weights: None,
                    replayed,
                    accumulator: replay.accumulator(),
                    black_box: got,
                });
            }
            same
        });
        if candidates.is_empty() {
            // The last candidate failed on this trial's input.
            let mismatch = last_failure.take().map(|m| Mismatch {
                input: std::mem::take(&mut input),
                weights: weights.cloned(),
                ..m
            });
            let report = CheckReport {
                trials: trial + 1,
                mismatch,
                accumulator: None,
                model: None,
            };
            return Ok((report, Vec::new()));
        }
    }
    let report = CheckReport {
        trials,
        mismatch: None,
        accumulator: candidates.first().map(|(_, r, _)| r.accumulator()),
        model: None,
    };
    Ok((report, candidates.iter().map(|(k, _, _)| *k).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binades(x: &[f64]) -> i32 {
        let e = |v: &f64| v.abs().log2().floor() as i32;
        x.iter().map(e).max().unwrap() - x.iter().map(e).min().unwrap()
    }

    #[test]
    fn the_input_kinds_are_what_they_claim() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for format in Format::ALL {
            for n in [3, 64, 1000] {
                for kind in Inputs::ALL {
                    let x = kind.draw(format, n, &mut rng);
                    assert_eq!(x.len(), n);
                    // e4m3 cannot hold 1000 normal values without
                    // overflowing their sum.
                    let normal = format != Format::E4m3 || n < 1000;
                    assert!(
                        x.iter().all(|v| format.round(*v) == *v
                            && (!normal || v.abs() >= format.min_normal())
                            && v.abs() * n as f64 <= format.max_finite()),
                        "{format} {kind} n = {n}"
                    );
                }
                let close = Inputs::Close.draw(format, n, &mut rng);
                assert!(binades(&close) <= 7, "{format} n = {n}");
            }
        }
        let wide = Inputs::Wide.draw(Format::F32, 1000, &mut rng);
        assert!(binades(&wide) >= 2 * 24, "{}", binades(&wide));
        let cancelling = Inputs::Cancelling.draw(Format::F64, 1000, &mut rng);
        let total: f64 = cancelling.iter().sum();
        let scale: f64 = cancelling.iter().map(|v| v.abs()).sum();
        assert!(total.abs() < scale * 1e-12, "{total} against {scale}");
    }
}
