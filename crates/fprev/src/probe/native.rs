//! The built-in orders as black boxes: `native:ORDER` for a reference
//! order or any formula of the order language (`native:FORMULA`).

use crate::arith::{Arithmetic, NodeArithmetic};
use crate::error::{Error, Param, Remedy, Result};
use crate::format::Format;
use crate::formula::Formula;
use crate::probe::{DEFAULT_N, Probe, ProbeOptions};
use crate::reduce::Replay;

/// Up to this many summands a composed formula's tree is compiled, which
/// sums fastest; past it the formula is run as it streams, in memory of
/// its input's size instead of a few hundred bytes a summand.
pub const COMPILE_UP_TO: usize = 1 << 20;

/// A formula summing in a chosen input and accumulator format.
#[derive(Clone, Debug)]
pub struct Native {
    formula: Formula,
    /// A composed formula's tree, compiled once for this `n` (run from the
    /// formula as it streams past [`COMPILE_UP_TO`] summands).
    replay: Option<Replay>,
    n: usize,
    format: Format,
    acc: Format,
}

impl Native {
    /// Opens `native:FORMULA` (`formula` is the text after `native:`); the
    /// accumulator defaults to the input format.
    pub fn new(formula: &str, opts: &ProbeOptions) -> Result<Self> {
        let parsed: Formula = formula.parse().map_err(|e| {
            let spec = crate::error::abbreviated(&format!("native:{formula}"));
            Error::Input(format!("{spec}: {e}"))
        })?;
        let n = opts.n.unwrap_or(DEFAULT_N);
        let acc = opts.accumulator.unwrap_or(opts.format);
        let replay = match &parsed {
            Formula::Order(_) => None,
            _ if n == 0 => None,
            composed if n > COMPILE_UP_TO => {
                let ieee = Arithmetic::uniform(NodeArithmetic::ieee(acc));
                Replay::of_formula(composed, n, &ieee)
                    .or_else(|| Some(Replay::new(&composed.tree(n), acc)))
            }
            composed => Some(Replay::new(&composed.tree(n), acc)),
        };
        Ok(Native {
            formula: parsed,
            replay,
            n,
            format: opts.format,
            acc,
        })
    }

    /// The formula this black box sums by.
    pub fn formula(&self) -> &Formula {
        &self.formula
    }
}

impl Probe for Native {
    fn n(&self) -> usize {
        self.n
    }
    fn format(&self) -> Format {
        self.format
    }
    fn accumulator(&self) -> Format {
        self.acc
    }
    fn may_fuse(&self) -> bool {
        self.fuses()
    }
    fn fuses(&self) -> bool {
        self.formula.may_fuse()
    }
    fn deterministic(&self) -> bool {
        true
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()> {
        for (x, o) in inputs.chunks_exact(self.n).zip(out) {
            // A sum of f32 inputs is an f32, whatever it added in: a wider
            // accumulator is rounded once at the end, as a library's is.
            *o = self.format.round(match (&self.formula, &self.replay) {
                (Formula::Order(order), _) => order.sum(x, self.acc),
                (_, Some(replay)) => replay.sum(x),
                (_, None) => {
                    return Err(Error::Input(
                        "native: a formula needs at least one summand".into(),
                    )
                    .advise(Remedy::AtLeast(Param::N, 1)));
                }
            });
        }
        Ok(())
    }
}
