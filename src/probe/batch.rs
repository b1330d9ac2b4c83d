//! A batch of inputs that differ from one shared base in a few places, which
//! is what masked queries are: the same units everywhere, a mask pair per
//! input. Probes that can exploit this (the Python bridge sends one base
//! array and the edits, not a full matrix) override [`Probe::sum_batch`].

use crate::error::Result;
use crate::probe::Probe;

/// `rows` inputs, each `base` with `width` positions set to other values.
#[derive(Clone, Copy, Debug)]
pub struct Batch<'a> {
    /// The values every input starts from.
    pub base: &'a [f64],
    /// `width` positions per input, input after input.
    pub positions: &'a [usize],
    /// The values at those positions.
    pub values: &'a [f64],
    /// Edits per input.
    pub width: usize,
}

impl Batch<'_> {
    /// Number of inputs.
    pub fn rows(&self) -> usize {
        self.positions.len().checked_div(self.width).unwrap_or(0)
    }

    /// The edits of input `r`.
    pub fn edits(&self, r: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let at = r * self.width..(r + 1) * self.width;
        self.positions[at.clone()]
            .iter()
            .copied()
            .zip(self.values[at].iter().copied())
    }

    /// Every input written out, row after row.
    pub fn materialize(&self) -> Vec<f64> {
        let n = self.base.len();
        let mut rows = Vec::with_capacity(n * self.rows());
        for r in 0..self.rows() {
            let at = rows.len();
            rows.extend_from_slice(self.base);
            for (p, v) in self.edits(r) {
                rows[at + p] = v;
            }
        }
        rows
    }
}

/// The default [`Probe::sum_batch`]: probes taking one input per call get
/// each input edited in place in one buffer (no copy per input); batched
/// probes get the inputs written out, `max_batch` at a time.
pub(crate) fn sum_batch<P: Probe + ?Sized>(
    probe: &mut P,
    batch: &Batch,
    out: &mut [f64],
) -> Result<()> {
    let step = probe.max_batch().max(1);
    if step == 1 {
        let mut row = batch.base.to_vec();
        for (r, o) in out.iter_mut().enumerate() {
            for (p, v) in batch.edits(r) {
                row[p] = v;
            }
            let result = probe.sum(&row, std::slice::from_mut(o));
            for (p, _) in batch.edits(r) {
                row[p] = batch.base[p];
            }
            result?;
        }
        return Ok(());
    }
    let w = batch.width;
    for (k, chunk) in out.chunks_mut(step).enumerate() {
        let rows = k * step..k * step + chunk.len();
        let part = Batch {
            positions: &batch.positions[rows.start * w..rows.end * w],
            values: &batch.values[rows.start * w..rows.end * w],
            ..*batch
        };
        probe.sum(&part.materialize(), chunk)?;
    }
    Ok(())
}
