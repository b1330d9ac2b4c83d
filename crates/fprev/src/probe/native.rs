//! The built-in reference orders as black boxes (`native:ORDER`).

use crate::error::{Error, Result};
use crate::format::Format;
use crate::order::Order;
use crate::probe::{DEFAULT_N, Probe, ProbeOptions};

/// A reference [`Order`] summing in a chosen input and accumulator format.
#[derive(Clone, Debug)]
pub struct Native {
    order: Order,
    n: usize,
    format: Format,
    acc: Format,
}

impl Native {
    /// Opens `native:ORDER` (`order` is the text after `native:`); the
    /// accumulator defaults to the input format.
    pub fn new(order: &str, opts: &ProbeOptions) -> Result<Self> {
        let order: Order = order
            .parse()
            .map_err(|e| Error::Input(format!("native:{order}: {e}")))?;
        Ok(Native {
            order,
            n: opts.n.unwrap_or(DEFAULT_N),
            format: opts.format,
            acc: opts.accumulator.unwrap_or(opts.format),
        })
    }

    /// The order this black box sums in.
    pub fn order(&self) -> Order {
        self.order
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
        matches!(self.order, Order::Fused(_))
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()> {
        for (x, o) in inputs.chunks_exact(self.n).zip(out) {
            *o = self.order.sum(x, self.acc);
        }
        Ok(())
    }
}
