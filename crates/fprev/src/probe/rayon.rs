//! Rayon's parallel sums as black boxes: `rayon:sum[:THREADS]` is
//! `x.par_iter().sum()`, `rayon:dot[:THREADS]` is
//! `x.par_iter().zip(y).map(|(a, b)| a * b).sum()`, in f32 or f64, on a
//! pool of `THREADS` threads (default: Rayon's global pool, one thread a
//! core). Work stealing splits the sum differently from call to call once
//! there are two threads or more: the black box users most often find
//! varying.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::format::Format;
use crate::probe::linalg::ieee_format;
use crate::probe::reducer::{pool, threads};
use crate::probe::{Dot, Probe, ProbeOptions, resolve_n};

/// What the black box computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Sum,
    Dot,
}

/// A Rayon parallel sum or dot product as a black box.
#[derive(Debug)]
pub struct RayonProbe {
    n: usize,
    format: Format,
    op: Op,
    /// `None`: Rayon's global pool.
    pool: Option<rayon::ThreadPool>,
    x: Vec<f32>,
    y: Vec<f32>,
}

impl RayonProbe {
    /// Opens `rayon:OP[:THREADS]` (`op` is its `OP`, `in_spec` its
    /// `THREADS`).
    pub fn open(spec: &str, op: &str, in_spec: Option<&str>, opts: &ProbeOptions) -> Result<Self> {
        let op = match op {
            "sum" => Op::Sum,
            "dot" => Op::Dot,
            _ => {
                return Err(Error::Input(format!(
                    "'{spec}': unknown operation '{op}': expected rayon:sum[:THREADS] or \
                     rayon:dot[:THREADS]"
                )));
            }
        };
        let pool = match (in_spec, opts.threads) {
            (None, None) => None,
            _ => Some(pool(spec, threads(spec, in_spec, opts)?)?),
        };
        Ok(RayonProbe {
            n: resolve_n(spec, opts)?,
            format: ieee_format(spec, opts.format)?,
            op,
            pool,
            x: Vec::new(),
            y: Vec::new(),
        })
    }

    /// `Σ x_i` (a sum) or `Σ x_i y_i` (a dot product) as Rayon computes
    /// it, in the black box's format; `self.x` and `self.y` hold `x` and
    /// `y` in f32.
    fn run(&self, x: &[f64], y: &[f64]) -> f64 {
        let compute = || -> f64 {
            match (self.op, self.format) {
                (Op::Sum, Format::F64) => x.par_iter().sum(),
                (Op::Dot, Format::F64) => x.par_iter().zip(y).map(|(a, b)| a * b).sum(),
                (Op::Sum, _) => self.x.par_iter().sum::<f32>() as f64,
                (Op::Dot, _) => {
                    let products = self.x.par_iter().zip(&self.y).map(|(a, b)| a * b);
                    products.sum::<f32>() as f64
                }
            }
        };
        match &self.pool {
            Some(pool) => pool.install(compute),
            None => compute(),
        }
    }

    /// Sums every row of `rows` with `y` into `out`.
    fn each(&mut self, rows: &[f64], y: &[f64], out: &mut [f64]) {
        self.y.clear();
        self.y.extend(y.iter().map(|v| *v as f32));
        for (x, o) in rows.chunks_exact(self.n).zip(out) {
            self.x.clear();
            self.x.extend(x.iter().map(|v| *v as f32));
            *o = self.run(x, y);
        }
    }
}

impl Probe for RayonProbe {
    fn n(&self) -> usize {
        self.n
    }
    fn format(&self) -> Format {
        self.format
    }
    fn may_fuse(&self) -> bool {
        false
    }
    fn about(&self) -> Option<String> {
        let threads = match &self.pool {
            Some(pool) => pool.current_num_threads(),
            None => rayon::current_num_threads(),
        };
        Some(format!("rayon on {threads} threads"))
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()> {
        // A dot product sums its inputs as products with ones.
        let ones = match self.op {
            Op::Sum => Vec::new(),
            Op::Dot => vec![1.0; self.n],
        };
        self.each(inputs, &ones, out);
        Ok(())
    }
    fn as_dot(&mut self) -> Option<&mut dyn Dot> {
        match self.op {
            Op::Dot => Some(self),
            Op::Sum => None,
        }
    }
}

impl Dot for RayonProbe {
    fn dot(&mut self, rows: &[f64], y: &[f64], out: &mut [f64]) -> Result<()> {
        self.each(rows, y, out);
        Ok(())
    }
}
