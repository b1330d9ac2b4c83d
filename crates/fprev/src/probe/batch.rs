//! A batch of inputs in which each input differs from the one before it in a
//! few places, which is what masked queries are: between two inputs a mask
//! moves and a few units change. Probes that keep their input in a buffer
//! of their own (the Python bridge) apply the edits to it instead of
//! receiving every input written out, and the default [`Probe::sum_batch`]
//! does the same with one buffer.

use crate::error::Result;
use crate::probe::Probe;

/// `rows()` inputs: input 0 is `base` with its edits applied, and input `r`
/// is input `r - 1` with the edits of `r` applied.
///
/// ```
/// use fprev::probe::Batch;
///
/// // Three inputs of four values: [1, 1, 1, 1], [1, 5, 1, 1], [1, 5, 1, 7].
/// let batch = Batch {
///     base: &[1.0; 4],
///     starts: &[0, 0, 1, 2],
///     positions: &[1, 3],
///     values: &[5.0, 7.0],
///     continues: false,
/// };
/// assert_eq!(batch.rows(), 3);
/// assert_eq!(batch.materialize()[8..], [1.0, 5.0, 1.0, 7.0]);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Batch<'a> {
    /// The values the first input's edits apply to.
    pub base: &'a [f64],
    /// Input `r`'s edits are `positions[starts[r]..starts[r + 1]]` (and the
    /// same range of `values`), applied in order; `rows() + 1` entries.
    pub starts: &'a [usize],
    /// The positions edited, input after input.
    pub positions: &'a [usize],
    /// The values written there.
    pub values: &'a [f64],
    /// `base` is the last input of the previous batch handed to this probe:
    /// a probe that keeps its last input may apply the edits to it and skip
    /// writing `base`.
    pub continues: bool,
}

impl Batch<'_> {
    /// Number of inputs.
    pub fn rows(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// The edits of input `r`.
    pub fn edits(&self, r: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let at = self.starts[r]..self.starts[r + 1];
        self.positions[at.clone()]
            .iter()
            .copied()
            .zip(self.values[at].iter().copied())
    }

    /// Applies input `r`'s edits to `buffer`, which holds input `r - 1`
    /// (or `base`, for `r = 0`).
    pub fn apply(&self, r: usize, buffer: &mut [f64]) {
        for (p, v) in self.edits(r) {
            buffer[p] = v;
        }
    }

    /// Every input written out, row after row.
    pub fn materialize(&self) -> Vec<f64> {
        let n = self.base.len();
        let mut rows = Vec::with_capacity(n * self.rows());
        let mut current = self.base.to_vec();
        for r in 0..self.rows() {
            self.apply(r, &mut current);
            rows.extend_from_slice(&current);
        }
        rows
    }
}

/// The default [`Probe::sum_batch`]: probes taking one input per call get
/// each input in turn in one buffer (no copy per input); batched probes get
/// the inputs written out, `max_batch` at a time.
pub(crate) fn sum_batch<P: Probe + ?Sized>(
    probe: &mut P,
    batch: &Batch,
    out: &mut [f64],
) -> Result<()> {
    let step = probe.max_batch().max(1);
    let mut current = batch.base.to_vec();
    if step == 1 {
        for (r, o) in out.iter_mut().enumerate() {
            batch.apply(r, &mut current);
            probe.sum(&current, std::slice::from_mut(o))?;
        }
        return Ok(());
    }
    let n = batch.base.len();
    let mut rows = Vec::with_capacity(n * step);
    for (k, chunk) in out.chunks_mut(step).enumerate() {
        rows.clear();
        for r in k * step..k * step + chunk.len() {
            batch.apply(r, &mut current);
            rows.extend_from_slice(&current);
        }
        probe.sum(&rows, chunk)?;
    }
    Ok(())
}

/// Sums whole inputs (`out.len()` rows of `n` values) through
/// [`Probe::sum_batch`]: each input after the first overwrites all of the
/// one before. For probes whose [`Probe::sum`] is their batch form.
#[cfg(any(feature = "python", feature = "mpi"))]
pub(crate) fn sum_whole<P: Probe + ?Sized>(
    probe: &mut P,
    inputs: &[f64],
    out: &mut [f64],
) -> Result<()> {
    let rows = out.len();
    if rows == 0 {
        return Ok(());
    }
    whole(inputs, probe.n(), rows, |batch| probe.sum_batch(batch, out))
}

/// Runs `f` on `rows` whole inputs of `n` values (`rows` at least 1) as a
/// batch: each input after the first overwrites all of the one before.
#[cfg(any(feature = "python", feature = "mpi"))]
pub(crate) fn whole<R>(inputs: &[f64], n: usize, rows: usize, f: impl FnOnce(&Batch) -> R) -> R {
    let starts: Vec<usize> = [0].into_iter().chain((0..rows).map(|r| r * n)).collect();
    let positions: Vec<usize> = (1..rows).flat_map(|_| 0..n).collect();
    let batch = Batch {
        base: &inputs[..n],
        starts: &starts,
        positions: &positions,
        values: &inputs[n..rows * n],
        continues: false,
    };
    f(&batch)
}
