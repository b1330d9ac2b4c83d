//! The system BLAS as black boxes: `blas:dot`, `blas:gemv`, `blas:gemm`, in
//! f32 or f64, called through CBLAS (`cblas_sdot`/`cblas_ddot`,
//! `cblas_sgemv`/`cblas_dgemv`, `cblas_sgemm`/`cblas_dgemm`) from the
//! `cblas-sys` bindings, linked against OpenBLAS (`libopenblas`; Debian:
//! `apt-get install libopenblas-dev`).
//!
//! - `dot`: `x . ones` of two vectors of `n`;
//! - `gemv`: `A @ ones` with `A` row-major `M x n` (`CblasRowMajor`,
//!   `CblasNoTrans`, alpha 1, beta 0): one query per row of `A`, the batch
//!   padded with zero rows to `M`; `M` is `--shape`'s first dimension, else
//!   `n`;
//! - `gemm`: `A @ B` with `A` row-major `M x n` and `B` = ones of `n x N`;
//!   column 0 of the product holds one query per row; `M` and `N` default
//!   to `n`.
//!
//! The same semantics as `probes/numpy.py`. OpenBLAS picks its kernels for
//! the CPU at run time and may use several threads (`OPENBLAS_NUM_THREADS`,
//! or `--threads`, which calls `openblas_set_num_threads`);
//! a revealed tree holds for the CPU and thread count it was revealed on.
//! Not every row of its GEMV and GEMM sums alike (edge rows of a block and
//! rows of another thread take other kernels); the engine then batches only
//! the rows that sum like row 0, whose order is the one revealed.
//!
//! OpenBLAS's x86_64 `sdot` sums the first `n & -32` products in its f32
//! kernel but adds the last `n mod 32` in a `double`, rounding once at the
//! end: the revealed order is right, but a replay of it in one format
//! reproduces the bits only when that tail holds at most one value (or there
//! is no kernel part and the tail holds at most two).

use std::ffi::c_int;

use cblas_sys::{CBLAS_LAYOUT, CBLAS_TRANSPOSE};

use crate::error::{Error, Result};
use crate::format::Format;
use crate::probe::ProbeOptions;
use crate::probe::linalg::{Kernel, LinalgProbe, Run};

// cblas-sys declares the CBLAS functions; this names the library that has
// them, and declares OpenBLAS's own thread control.
#[link(name = "openblas")]
unsafe extern "C" {
    fn openblas_set_num_threads(threads: c_int);
}

/// Opens `blas:OP` (`op` is the text after `blas:`).
pub fn open(spec: &str, op: &str, opts: &ProbeOptions) -> Result<LinalgProbe> {
    if let Some(threads) = opts.threads {
        let threads = c_int::try_from(threads)
            .map_err(|_| Error::Input(format!("{spec}: {threads} threads are too many")))?;
        // SAFETY: a plain setter of OpenBLAS's thread count, safe to call
        // between BLAS calls.
        unsafe { openblas_set_num_threads(threads) };
    }
    LinalgProbe::open(
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
                    "{spec}: n = {n} or a dimension of --shape exceeds CBLAS's limit of {}",
                    c_int::MAX
                )))
            }
        },
        |kernel, n, format| -> Box<dyn Run> {
            match format {
                Format::F64 => Box::new(Buffers::<f64>::new(kernel, n)),
                _ => Box::new(Buffers::<f32>::new(kernel, n)),
            }
        },
    )
}

/// The CBLAS routines of one precision.
trait Cblas: Copy + Into<f64> {
    const ZERO: Self;
    const ONE: Self;
    fn from_f64(x: f64) -> Self;
    /// `x . y` over `n` contiguous values.
    fn dot(x: &[Self], y: &[Self]) -> Self;
    /// `y = A x` with `A` row-major `m x k`.
    fn gemv(m: usize, k: usize, a: &[Self], x: &[Self], y: &mut [Self]);
    /// `C = A B` with `A` row-major `m x k`, `B` row-major `k x n`.
    fn gemm(m: usize, n: usize, k: usize, a: &[Self], b: &[Self], c: &mut [Self]);
}

macro_rules! cblas {
    ($t:ty, $dot:ident, $gemv:ident, $gemm:ident) => {
        impl Cblas for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn dot(x: &[Self], y: &[Self]) -> Self {
                assert_eq!(x.len(), y.len());
                // SAFETY: both slices hold `len` values read with stride 1;
                // the length fits a C int (checked at open).
                unsafe { cblas_sys::$dot(x.len() as c_int, x.as_ptr(), 1, y.as_ptr(), 1) }
            }
            fn gemv(m: usize, k: usize, a: &[Self], x: &[Self], y: &mut [Self]) {
                assert!(a.len() == m * k && x.len() == k && y.len() == m);
                // SAFETY: A is m x k row-major with lda = k, x has k values
                // and y has m, all dimensions fit a C int (checked at open).
                unsafe {
                    cblas_sys::$gemv(
                        CBLAS_LAYOUT::CblasRowMajor,
                        CBLAS_TRANSPOSE::CblasNoTrans,
                        m as c_int,
                        k as c_int,
                        1.0,
                        a.as_ptr(),
                        k as c_int,
                        x.as_ptr(),
                        1,
                        0.0,
                        y.as_mut_ptr(),
                        1,
                    )
                }
            }
            fn gemm(m: usize, n: usize, k: usize, a: &[Self], b: &[Self], c: &mut [Self]) {
                assert!(a.len() == m * k && b.len() == k * n && c.len() == m * n);
                // SAFETY: A is m x k (lda = k), B is k x n (ldb = n), C is
                // m x n (ldc = n), all row-major and contiguous; the
                // dimensions fit a C int (checked at open).
                unsafe {
                    cblas_sys::$gemm(
                        CBLAS_LAYOUT::CblasRowMajor,
                        CBLAS_TRANSPOSE::CblasNoTrans,
                        CBLAS_TRANSPOSE::CblasNoTrans,
                        m as c_int,
                        n as c_int,
                        k as c_int,
                        1.0,
                        a.as_ptr(),
                        k as c_int,
                        b.as_ptr(),
                        n as c_int,
                        0.0,
                        c.as_mut_ptr(),
                        n as c_int,
                    )
                }
            }
        }
    };
}

cblas!(f32, cblas_sdot, cblas_sgemv, cblas_sgemm);
cblas!(f64, cblas_ddot, cblas_dgemv, cblas_dgemm);

/// The routine's operands, allocated once.
struct Buffers<T> {
    kernel: Kernel,
    n: usize,
    /// `x` of `dot`, `A` of `gemv` and `gemm` (`M x n`).
    a: Vec<T>,
    /// Ones: `y` of `dot`, `x` of `gemv`, `B` of `gemm` (`n x N`).
    ones: Vec<T>,
    /// The result of `gemv` (`M`) and `gemm` (`M x N`).
    c: Vec<T>,
}

impl<T: Cblas> Buffers<T> {
    fn new(kernel: Kernel, n: usize) -> Self {
        let (a, ones, c) = match kernel {
            Kernel::Sum | Kernel::Dot => (n, n, 0),
            Kernel::Gemv { m } => (m * n, n, m),
            Kernel::Gemm { m, cols } => (m * n, n * cols, m * cols),
        };
        Buffers {
            kernel,
            n,
            a: vec![T::ZERO; a],
            ones: vec![T::ONE; ones],
            c: vec![T::ZERO; c],
        }
    }

    /// Copies `inputs` to the front of `a` and zeroes the rest.
    fn fill(&mut self, inputs: &[f64]) {
        let mut src = inputs.iter();
        for dst in &mut self.a {
            *dst = src.next().map_or(T::ZERO, |&v| T::from_f64(v));
        }
    }
}

impl<T: Cblas> Run for Buffers<T> {
    fn run(&mut self, inputs: &[f64], out: &mut [f64]) {
        let n = self.n;
        match self.kernel {
            Kernel::Sum | Kernel::Dot => {
                for (row, o) in inputs.chunks_exact(n).zip(out.iter_mut()) {
                    self.fill(row);
                    *o = T::dot(&self.a, &self.ones).into();
                }
            }
            Kernel::Gemv { m } => {
                self.fill(inputs);
                T::gemv(m, n, &self.a, &self.ones, &mut self.c);
                for (o, &v) in out.iter_mut().zip(&self.c) {
                    *o = v.into();
                }
            }
            Kernel::Gemm { m, cols } => {
                self.fill(inputs);
                T::gemm(m, cols, n, &self.a, &self.ones, &mut self.c);
                for (o, &v) in out.iter_mut().zip(self.c.iter().step_by(cols)) {
                    *o = v.into();
                }
            }
        }
    }
}
