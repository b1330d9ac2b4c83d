//! A saved tree evaluated as a black box (`replay:PATH.json`).

use crate::arith::Arithmetic;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::probe::{Dot, Probe, ProbeOptions};
use crate::reduce::Replay;
use crate::tree::SummationTree;

/// Tree replay as a probe: the first reproducible reducer, and the test
/// oracle (reveal a replayed tree and you must get the tree back).
#[derive(Clone, Debug)]
pub struct ReplayProbe {
    replay: Replay,
    format: Format,
    scratch: Vec<f64>,
    /// Round each result to `format`.
    round_output: bool,
}

impl ReplayProbe {
    /// Replays `tree` on inputs of `format`, adding in `acc`.
    pub fn new(replay: Replay, format: Format) -> Self {
        ReplayProbe {
            replay,
            format,
            scratch: Vec::new(),
            round_output: false,
        }
    }

    /// Replays `tree` (with the arithmetic `model` of its file, where it
    /// has one and no `--acc` overrides it) on inputs of `opts.format`; the
    /// accumulator defaults to the input format.
    pub fn of(tree: &SummationTree, model: Option<&Arithmetic>, opts: &ProbeOptions) -> Self {
        // Results of the input format, as the black box's were.
        if let Some(model) = model.filter(|_| opts.accumulator.is_none()) {
            let mut probe = ReplayProbe::new(
                Replay::with_arithmetic(tree, model).returning(opts.format),
                opts.format,
            );
            probe.round_output = true;
            return probe;
        }
        let acc = opts.accumulator.unwrap_or(opts.format);
        ReplayProbe::new(Replay::new(tree, acc), opts.format)
    }
}

impl Probe for ReplayProbe {
    fn n(&self) -> usize {
        self.replay.n()
    }
    fn format(&self) -> Format {
        self.format
    }
    fn accumulator(&self) -> Format {
        self.replay.narrowest()
    }
    fn may_fuse(&self) -> bool {
        self.fuses()
    }
    fn fuses(&self) -> bool {
        self.replay.has_fused_nodes()
    }
    fn deterministic(&self) -> bool {
        true
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()> {
        for (x, o) in inputs.chunks_exact(self.replay.n()).zip(out) {
            let sum = self.replay.sum_with(x, &mut self.scratch);
            *o = self.output(sum);
        }
        Ok(())
    }
    /// A model that says how products are rounded replays a dot product.
    fn as_dot(&mut self) -> Option<&mut dyn Dot> {
        if self.replay.has_products() {
            Some(self)
        } else {
            None
        }
    }
}

impl Dot for ReplayProbe {
    fn dot(&mut self, rows: &[f64], y: &[f64], out: &mut [f64]) -> Result<()> {
        if y.len() != self.replay.n() {
            return Err(Error::Input(format!(
                "replay: y holds {} values for a tree of {} summands",
                y.len(),
                self.replay.n()
            )));
        }
        for (x, o) in rows.chunks_exact(self.replay.n()).zip(out) {
            let sum = self.replay.dot_with(x, y, &mut self.scratch);
            *o = self.output(sum);
        }
        Ok(())
    }
}

impl ReplayProbe {
    fn output(&self, sum: f64) -> f64 {
        if self.round_output {
            self.format.round(sum)
        } else {
            sum
        }
    }
}
