//! A sum that truncates, past the summands masks that hold under
//! truncation reach (docs/ALGORITHMS.md, Masked inputs, Truncating
//! accumulators): its masked answers fit no tree, which says nothing
//! against its being a sum. A few of its summands, the others 0, show
//! whether a sum that rounds toward zero explains it.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::masks::Masks;
use super::oracle::Oracle;
use super::{Pivot, reveal_toward_zero};
use crate::arith::{Arithmetic, NodeArithmetic, Rounding};
use crate::error::{Error, Fault, Param, Remedy, Result};
use crate::format::Format;
use crate::inputs::Inputs;
use crate::probe::{Batch, Probe};
use crate::reduce::Replay;

/// Summands of the black box asked (spread over all of them), at most.
const SPREAD: usize = 64;

/// Random inputs the truncating tree of the spread summands must replay.
const TRIALS: usize = 16;

/// Where the oracle's black box has more summands than masks that hold
/// under truncation reach, and a sum rounding toward zero explains it on
/// [`SPREAD`] of them: the error that says so (that it appears to
/// truncate, and up to how many summands fprev proves the order of such a
/// sum). `None` where those masks reach its `n` (they were asked), or the
/// spread summands do not show a truncating sum.
pub(super) fn past_reach(oracle: &mut Oracle, pivot: Pivot, row: usize) -> Result<Option<Error>> {
    let n = oracle.n();
    let probe = oracle.probe();
    let (format, acc, may_fuse) = (probe.format(), probe.accumulator(), probe.may_fuse());
    let reach = Masks::toward_zero_reach(format, acc, may_fuse);
    if n <= reach || reach < 3 {
        return Ok(None);
    }
    let Some(k) = (3..=reach.min(SPREAD))
        .rev()
        .find(|&k| Masks::toward_zero(k, format, acc, may_fuse).is_some())
    else {
        return Ok(None);
    };
    let at: Vec<usize> = (0..k).map(|i| i * (n - 1) / (k - 1)).collect();
    let mut spread = Spread::new(probe, at, row);
    let mut sub = Oracle::new(&mut spread)?;
    let Some(tree) = reveal_toward_zero(&mut sub, pivot)? else {
        return Ok(None);
    };
    // Its truncating additions must give random inputs' bits too, which
    // tells it from a sum rounding to nearest (whose masked answers a
    // truncating tree may also give).
    let truncating = Arithmetic::uniform(NodeArithmetic {
        rounding: Rounding::TowardZero,
        ..NodeArithmetic::ieee(acc)
    });
    let replay = Replay::with_arithmetic(&tree, &truncating).returning(format);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut scratch = Vec::new();
    for trial in 0..TRIALS {
        let x = Inputs::ALL[trial % Inputs::ALL.len()].draw(format, k, &mut rng);
        if sub.sum_one(&x)?.to_bits() != replay.sum_with(&x, &mut scratch).to_bits() {
            return Ok(None);
        }
    }
    Ok(Some(
        Error::BlackBox(Fault::TowardZeroPastReach {
            n,
            k,
            format,
            accumulator: acc,
            trials: TRIALS,
            reach,
        })
        .advise(Remedy::Smaller(Param::N)),
    ))
}

/// `at.len()` of a black box's summands, at positions `at`, the others 0:
/// adding 0 is exact under every rounding, so the black box sums them in
/// the tree its own tree gives them. A batched black box gets each input
/// in every row up to `row`, whose output is the answer.
struct Spread<'a> {
    inner: &'a mut dyn Probe,
    at: Vec<usize>,
    row: usize,
    full: Vec<f64>,
}

impl<'a> Spread<'a> {
    fn new(inner: &'a mut dyn Probe, at: Vec<usize>, row: usize) -> Self {
        let full = vec![0.0; inner.n()];
        Spread {
            inner,
            at,
            row,
            full,
        }
    }
}

impl Probe for Spread<'_> {
    fn n(&self) -> usize {
        self.at.len()
    }

    fn format(&self) -> Format {
        self.inner.format()
    }

    fn accumulator(&self) -> Format {
        self.inner.accumulator()
    }

    fn may_fuse(&self) -> bool {
        self.inner.may_fuse()
    }

    fn fuses(&self) -> bool {
        self.inner.fuses()
    }

    fn operands(&self) -> Option<(Format, Format)> {
        self.inner.operands()
    }

    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()> {
        let rows = self.row + 1;
        let starts = vec![0; rows + 1];
        let mut outs = vec![0.0; rows];
        for (x, o) in inputs.chunks(self.at.len()).zip(out) {
            for (&i, &v) in self.at.iter().zip(x) {
                self.full[i] = v;
            }
            let batch = Batch {
                base: &self.full,
                starts: &starts,
                positions: &[],
                values: &[],
                continues: false,
            };
            self.inner.sum_batch(&batch, &mut outs)?;
            *o = outs[self.row];
        }
        Ok(())
    }

    fn sum_batch(&mut self, batch: &Batch, out: &mut [f64]) -> Result<()> {
        if self.inner.max_batch() > 1 {
            return crate::probe::batch::sum_batch(self, batch, out);
        }
        // One input a call: the edits, moved to the summands they edit.
        self.full.fill(0.0);
        for (&i, &v) in self.at.iter().zip(batch.base) {
            self.full[i] = v;
        }
        let positions: Vec<usize> = batch.positions.iter().map(|&p| self.at[p]).collect();
        let moved = Batch {
            base: &self.full,
            positions: &positions,
            continues: false,
            ..*batch
        };
        self.inner.sum_batch(&moved, out)
    }
}
