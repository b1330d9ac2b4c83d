//! BLAS libraries as black boxes: `blas:dot`, `blas:gemv`, `blas:gemm`, in
//! f32 or f64, called through CBLAS (`cblas_sdot`/`cblas_ddot`,
//! `cblas_sgemv`/`cblas_dgemv`, `cblas_sgemm`/`cblas_dgemm`) of a library
//! loaded at run time ([`library`]): `blas:OP` takes the first one found,
//! `blas:OP@LIB` names one (`openblas`, `blis`, `refblas`, `mkl`, `atlas`,
//! or a path to a shared library).
//!
//! - `dot`: `x . y` of two vectors of `n`;
//! - `gemv`: `A @ y` with `A` row-major `M x n` (`CblasRowMajor`,
//!   `CblasNoTrans`, alpha 1, beta 0): one query per row of `A`, the batch
//!   padded with zero rows to `M`; `M` is `--shape`'s first dimension, else
//!   `n`;
//! - `gemm`: `A @ B` with `A` row-major `M x n` and `B` of `n x N` holding
//!   `y` in every column; column 0 of the product holds one query per row;
//!   `M` and `N` default to `n`.
//!
//! `y` is ones, so that each query is a plain sum, except in
//! [`Dot::dot`](crate::Dot::dot), which supplies it.
//!
//! The same semantics as `crates/fprev/src/probe/python/numpy.py`. OpenBLAS and BLIS pick their
//! kernels for the CPU at run time and may use several threads (their
//! environment variables, or `--threads`, which calls the library's own
//! setter); a revealed tree holds for the library, CPU and thread count it
//! was revealed on. Not every row of a GEMV and GEMM sums alike (edge rows
//! of a block and rows of another thread take other kernels); the engine
//! then batches only the rows that sum like row 0, whose order is the one
//! revealed.
//!
//! OpenBLAS's x86_64 `sdot` sums the first `n & -32` products in its f32
//! kernel but adds the last `n mod 32` in a `double`, rounding once at the
//! end: the revealed order is right, but a replay of it in one format
//! reproduces the bits only when that tail holds at most one value (or there
//! is no kernel part and the tail holds at most two).

pub mod library;

use std::ffi::c_int;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::format::Format;
use crate::probe::ProbeOptions;
use crate::probe::linalg::{Kernel, LinalgProbe, Run, fill_front};
use library::{Cblas, NO_TRANS, ROW_MAJOR, Routines};

/// Opens `blas:OP[@LIB]` (`choice` is its `LIB`).
pub fn open(
    spec: &str,
    op: &str,
    choice: Option<&str>,
    opts: &ProbeOptions,
) -> Result<LinalgProbe> {
    let choice = match choice {
        Some("") => {
            return Err(Error::Input(format!(
                "'{spec}': name a library after '@': one of {}, or a path",
                library::KNOWN
                    .iter()
                    .map(|k| k.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        choice => choice,
    };
    let mut about = None;
    let mut probe = LinalgProbe::open(
        "blas",
        spec,
        op,
        opts,
        &["dot", "gemv", "gemm"],
        |kernel, n| {
            // CBLAS takes C ints for dimensions and leading dimensions.
            let (m, cols) = kernel.dims();
            if [n, m, cols].into_iter().all(|d| c_int::try_from(d).is_ok()) {
                Ok(())
            } else {
                Err(Error::Input(format!(
                    "{spec}: n = {n} or a dimension of the shape exceeds CBLAS's limit of {}",
                    c_int::MAX
                )))
            }
        },
        // The library loads once the operation, format and sizes are valid.
        |kernel, n, format| -> Result<Box<dyn Run>> {
            let in_spec = |e: Error| Error::InSpec {
                spec: spec.to_string(),
                error: Box::new(e),
            };
            let cblas = Arc::new(Cblas::open(choice).map_err(in_spec)?);
            if let Some(threads) = opts.threads {
                cblas.set_threads(threads).map_err(in_spec)?;
            }
            about = Some(cblas.describe());
            Ok(match format {
                Format::F64 => Box::new(Buffers::new(kernel, n, cblas.double, cblas.clone())),
                _ => Box::new(Buffers::new(kernel, n, cblas.single, cblas.clone())),
            })
        },
    )?;
    probe.set_about(about);
    Ok(probe)
}

/// A value type CBLAS has routines for.
trait Real: Copy + Into<f64> {
    const ZERO: Self;
    const ONE: Self;
    fn from_f64(x: f64) -> Self;
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    fn from_f64(x: f64) -> Self {
        x
    }
}

/// The routine's operands, allocated once.
struct Buffers<T> {
    routines: Routines<T>,
    /// Keeps the library loaded while `routines` may be called.
    _library: Arc<Cblas>,
    kernel: Kernel,
    n: usize,
    /// `x` of `dot`, `A` of `gemv` and `gemm` (`M x n`).
    a: Vec<T>,
    /// The weights (ones unless a dot set them): `y` of `dot`, `x` of
    /// `gemv`, `B` of `gemm` (`n x N`, the weights in every column).
    weights: Vec<T>,
    /// The result of `gemv` (`M`) and `gemm` (`M x N`).
    c: Vec<T>,
    /// How many values at the front of `a` the last fill wrote; the rest
    /// are zero.
    written: usize,
}

impl<T: Real> Buffers<T> {
    fn new(kernel: Kernel, n: usize, routines: Routines<T>, library: Arc<Cblas>) -> Self {
        let (a, weights, c) = match kernel {
            Kernel::Sum | Kernel::Dot => (n, n, 0),
            Kernel::Gemv { m } => (m * n, n, m),
            Kernel::Gemm { m, cols, .. } => (m * n, n * cols, m * cols),
        };
        Buffers {
            routines,
            _library: library,
            kernel,
            n,
            a: vec![T::ZERO; a],
            weights: vec![T::ONE; weights],
            c: vec![T::ZERO; c],
            written: 0,
        }
    }

    /// Copies `inputs` to the front of `a` and zeroes the rest.
    fn fill(&mut self, inputs: &[f64]) {
        self.written = fill_front(&mut self.a, inputs, self.written, T::ZERO, T::from_f64);
    }
}

impl<T: Real> Run for Buffers<T> {
    fn set_weights(&mut self, y: &[f64]) {
        // Row-major `B` of `gemm` repeats each weight along its row; the
        // vectors hold each once.
        match self.kernel {
            Kernel::Gemm { cols, .. } => {
                for (row, &v) in self.weights.chunks_exact_mut(cols).zip(y) {
                    row.fill(T::from_f64(v));
                }
            }
            // Once a trial of a confirmation on random x and y: a plain loop.
            _ => {
                for (w, &v) in self.weights.iter_mut().zip(y) {
                    *w = T::from_f64(v);
                }
            }
        }
    }

    fn run(&mut self, inputs: &[f64], out: &mut [f64]) {
        let n = self.n;
        match self.kernel {
            Kernel::Sum | Kernel::Dot => {
                for (row, o) in inputs.chunks_exact(n).zip(out.iter_mut()) {
                    self.fill(row);
                    // SAFETY: both vectors hold `n` values read with stride
                    // 1; `n` fits a C int (checked at open).
                    *o = unsafe {
                        (self.routines.dot)(
                            n as c_int,
                            self.a.as_ptr(),
                            1,
                            self.weights.as_ptr(),
                            1,
                        )
                    }
                    .into();
                }
            }
            Kernel::Gemv { m } => {
                self.fill(inputs);
                // SAFETY: A is m x n row-major with lda = n, x has n values
                // and y has m; the dimensions fit a C int (checked at open).
                unsafe {
                    (self.routines.gemv)(
                        ROW_MAJOR,
                        NO_TRANS,
                        m as c_int,
                        n as c_int,
                        T::ONE,
                        self.a.as_ptr(),
                        n as c_int,
                        self.weights.as_ptr(),
                        1,
                        T::ZERO,
                        self.c.as_mut_ptr(),
                        1,
                    )
                };
                for (o, &v) in out.iter_mut().zip(&self.c) {
                    *o = v.into();
                }
            }
            Kernel::Gemm { m, cols, column } => {
                self.fill(inputs);
                // SAFETY: A is m x n (lda = n), B is n x cols (ldb = cols),
                // C is m x cols (ldc = cols), all row-major and contiguous;
                // the dimensions fit a C int (checked at open).
                unsafe {
                    (self.routines.gemm)(
                        ROW_MAJOR,
                        NO_TRANS,
                        NO_TRANS,
                        m as c_int,
                        cols as c_int,
                        n as c_int,
                        T::ONE,
                        self.a.as_ptr(),
                        n as c_int,
                        self.weights.as_ptr(),
                        cols as c_int,
                        T::ZERO,
                        self.c.as_mut_ptr(),
                        cols as c_int,
                    )
                };
                for (o, &v) in out.iter_mut().zip(self.c.iter().skip(column).step_by(cols)) {
                    *o = v.into();
                }
            }
        }
    }
}
