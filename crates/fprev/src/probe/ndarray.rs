//! The ndarray crate's own kernels as black boxes: `ndarray:sum`,
//! `ndarray:dot`, `ndarray:gemv`, `ndarray:gemm`, in f32 or f64.
//!
//! - `sum`: `Array1::sum` of one vector of `n`;
//! - `dot`: `x.dot(&y)` of two vectors of `n`;
//! - `gemv`: `a.dot(&y)` with `a` of `M x n`, one query per row of `a`
//!   (the batch is padded with zero rows to `M`, so every call has the same
//!   shape); `M` is `--shape`'s first dimension, else `n`;
//! - `gemm`: `a.dot(&b)` with `a` of `M x n` and `b` of `n x N` holding `y`
//!   in every column (matrixmultiply's sgemm/dgemm); column 0 of the product
//!   holds one query per row; `M` and `N` default to `n`.
//!
//! `y` is ones, so that the products are exact and only the order of the
//! additions shows, except in [`Dot::dot`](crate::Dot::dot), which
//! supplies it.
//!
//! The same semantics as `crates/fprev/src/probe/python/numpy.py`. This crate builds ndarray
//! without its `blas` feature, so these are ndarray's (and matrixmultiply's)
//! own loops, not a BLAS library's.

use ndarray::{Array1, Array2, LinalgScalar};

use crate::error::Result;
use crate::format::Format;
use crate::probe::ProbeOptions;
use crate::probe::linalg::{Kernel, LinalgProbe, Run, fill_front};

/// Opens `ndarray:OP` (`op` is the text after `ndarray:`).
pub fn open(spec: &str, op: &str, opts: &ProbeOptions) -> Result<LinalgProbe> {
    LinalgProbe::open(
        "ndarray",
        spec,
        op,
        opts,
        &["sum", "dot", "gemv", "gemm"],
        |_, _| Ok(()),
        |kernel, n, format| -> Result<Box<dyn Run>> {
            Ok(match format {
                Format::F64 => Box::new(Buffers::<f64>::new(kernel, n)),
                _ => Box::new(Buffers::<f32>::new(kernel, n)),
            })
        },
    )
}

/// A scalar type ndarray has kernels for.
trait Real: LinalgScalar + Into<f64> {
    fn from_f64(x: f64) -> Self;
}

impl Real for f32 {
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

impl Real for f64 {
    fn from_f64(x: f64) -> Self {
        x
    }
}

/// The kernel's operands, allocated once.
struct Buffers<T> {
    kernel: Kernel,
    n: usize,
    /// The vector of `sum` and `dot`.
    x: Array1<T>,
    /// The weights (ones unless a dot set them): the right operand of `dot`
    /// and `gemv`.
    weights: Array1<T>,
    /// The left matrix of `gemv` and `gemm` (`M x n`).
    a: Array2<T>,
    /// The right matrix of `gemm` (`n x N`), the weights in every column.
    b: Array2<T>,
    /// How many values at the front of `a` the last fill wrote; the rest
    /// are zero.
    written: usize,
}

impl<T: Real> Buffers<T> {
    fn new(kernel: Kernel, n: usize) -> Self {
        let (vector, rows, cols) = match kernel {
            Kernel::Sum | Kernel::Dot => (n, 0, 0),
            Kernel::Gemv { m } => (0, m, 0),
            Kernel::Gemm { m, cols, .. } => (0, m, cols),
        };
        let weights = match kernel {
            Kernel::Dot | Kernel::Gemv { .. } => n,
            _ => 0,
        };
        Buffers {
            kernel,
            n,
            x: Array1::zeros(vector),
            weights: Array1::ones(weights),
            a: Array2::zeros((rows, n)),
            b: Array2::ones((n, cols)),
            written: 0,
        }
    }

    /// Copies the batch into the first rows of `a` and zeroes the others.
    fn fill_rows(&mut self, inputs: &[f64]) {
        let a = self.a.as_slice_mut().expect("a is allocated row-major");
        self.written = fill_front(a, inputs, self.written, T::zero(), T::from_f64);
    }
}

impl<T: Real> Run for Buffers<T> {
    fn set_weights(&mut self, y: &[f64]) {
        for (w, &v) in self.weights.iter_mut().zip(y) {
            *w = T::from_f64(v);
        }
        for (mut row, &v) in self.b.rows_mut().into_iter().zip(y) {
            row.fill(T::from_f64(v));
        }
    }

    fn run(&mut self, inputs: &[f64], out: &mut [f64]) {
        match self.kernel {
            Kernel::Sum | Kernel::Dot => {
                for (row, o) in inputs.chunks_exact(self.n).zip(out.iter_mut()) {
                    for (dst, &src) in self.x.iter_mut().zip(row) {
                        *dst = T::from_f64(src);
                    }
                    let y = if self.kernel == Kernel::Sum {
                        self.x.sum()
                    } else {
                        self.x.dot(&self.weights)
                    };
                    *o = y.into();
                }
            }
            Kernel::Gemv { .. } => {
                self.fill_rows(inputs);
                let y = self.a.dot(&self.weights);
                for (o, &v) in out.iter_mut().zip(&y) {
                    *o = v.into();
                }
            }
            Kernel::Gemm { column, .. } => {
                self.fill_rows(inputs);
                let c = self.a.dot(&self.b);
                for (o, &v) in out.iter_mut().zip(c.column(column)) {
                    *o = v.into();
                }
            }
        }
    }
}
