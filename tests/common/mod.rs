//! What several test files share.

use fprev::{Format, Probe};

/// A black box that sums `rows` inputs per call, each with `inner`: the
/// engine then packs queries into rows as well as into bit fields.
pub struct Rows<P>(pub P, pub usize);

impl<P: Probe> Probe for Rows<P> {
    fn n(&self) -> usize {
        self.0.n()
    }
    fn format(&self) -> Format {
        self.0.format()
    }
    fn accumulator(&self) -> Format {
        self.0.accumulator()
    }
    fn may_fuse(&self) -> bool {
        self.0.may_fuse()
    }
    fn max_batch(&self) -> usize {
        self.1
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> fprev::Result<()> {
        let n = self.n();
        for (x, o) in inputs.chunks_exact(n).zip(out) {
            self.0.sum(x, std::slice::from_mut(o))?;
        }
        Ok(())
    }
}
