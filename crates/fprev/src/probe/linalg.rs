//! What the linear-algebra library black boxes (`ndarray:`, `blas:`) share:
//! the operation and its sizes ([`Kernel`], the semantics of
//! `crates/fprev/src/probe/python/numpy.py`), the size limits, and the [`Probe`] implementation;
//! each library supplies only the code that runs its kernel ([`Run`]).

use crate::error::{Error, Param, Remedy, Result};
use crate::format::Format;
use crate::probe::{Dot, Probe, ProbeOptions, resolve_n};

/// Elements one black box may allocate (all its matrices together).
pub(crate) const MOST_ELEMENTS: usize = 1 << 30;

/// What a linear-algebra library black box (`ndarray:`, `blas:`) computes,
/// with the sizes it runs at; the semantics of
/// `crates/fprev/src/probe/python/numpy.py`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// The sum of one vector of `n`.
    Sum,
    /// `x . y` for one vector `x` of `n`; `y` defaults to ones and
    /// [`Dot::dot`](crate::Dot::dot) supplies it.
    Dot,
    /// `A @ y` with `A` of `m x n`: one query per row; `y` as for `Dot`.
    Gemv { m: usize },
    /// `A @ B` with `A` of `m x n` and `B` of `n x cols` holding `y` in
    /// every column (`y` as for `Dot`); column `column` (of `cols`) holds
    /// one query per row.
    Gemm {
        m: usize,
        cols: usize,
        column: usize,
    },
}

impl Kernel {
    /// Parses the operation `op` of `spec`, a spec of `library`, among
    /// `offered` (some of `sum`, `dot`, `gemv`, `gemm`): `M` and `N` come
    /// from `--shape`, else `n`.
    pub(crate) fn parse(
        library: &str,
        spec: &str,
        op: &str,
        n: usize,
        opts: &ProbeOptions,
        offered: &[&str],
    ) -> Result<Self> {
        let unknown = || {
            let ops: Vec<String> = offered.iter().map(|o| format!("{library}:{o}")).collect();
            Error::Input(if op.is_empty() {
                format!("'{spec}': name an operation: {}", ops.join(", "))
            } else {
                format!(
                    "'{spec}': unknown operation '{op}': expected {}",
                    ops.join(", ")
                )
            })
        };
        if !offered.contains(&op) {
            return Err(unknown());
        }
        let (m, cols) = opts.shape.map_or((n, n), |[m, cols, _]| (m, cols));
        let kernel = match op {
            "sum" => Kernel::Sum,
            "dot" => Kernel::Dot,
            "gemv" => Kernel::Gemv { m },
            "gemm" => Kernel::Gemm {
                m,
                cols,
                column: opts.column.unwrap_or(0),
            },
            _ => return Err(unknown()),
        };
        if m == 0 || cols == 0 {
            return Err(Error::Input(format!(
                "{spec}: the shape's dimensions must be at least 1"
            )));
        }
        check_column(spec, opts.column, cols)?;
        Ok(kernel)
    }

    /// Refuses matrices of more than [`MOST_ELEMENTS`] values together,
    /// before any library allocates them (a Python library's own
    /// `MemoryError` comes after gigabytes).
    pub(crate) fn check_size(self, spec: &str, n: usize) -> Result<()> {
        let (m, cols) = self.dims();
        let elements = m
            .checked_mul(n)
            .zip(n.checked_mul(cols))
            .zip(m.checked_mul(cols))
            .and_then(|((a, b), c)| a.checked_add(b)?.checked_add(c));
        if elements.is_none_or(|e| e > MOST_ELEMENTS) {
            return Err(Error::Input(format!(
                "{spec}: the matrices of n = {n} and this shape are too large (over \
                 {MOST_ELEMENTS} values)"
            ))
            .advise(Remedy::Smaller(Param::Shape)));
        }
        Ok(())
    }

    /// `(M, N)`: rows of `A` and columns of `B` (1 for vectors).
    pub(crate) fn dims(self) -> (usize, usize) {
        match self {
            Kernel::Sum | Kernel::Dot => (1, 1),
            Kernel::Gemv { m } => (m, 1),
            Kernel::Gemm { m, cols, .. } => (m, cols),
        }
    }

    /// Rows per call: `M` for GEMV and GEMM, else 1.
    pub(crate) fn batch(self) -> usize {
        match self {
            Kernel::Sum | Kernel::Dot => 1,
            Kernel::Gemv { m } | Kernel::Gemm { m, .. } => m,
        }
    }
}

/// Refuses an output column past the `cols` columns of a GEMM's product.
pub(crate) fn check_column(spec: &str, column: Option<usize>, cols: usize) -> Result<()> {
    match column {
        Some(c) if c >= cols => Err(Error::Input(format!(
            "{spec}: column {c} of a product of {cols} columns: give a column below {cols} \
             (the N of the shape M,N,K)"
        ))),
        _ => Ok(()),
    }
}

/// The input format of a black box that only has f32 and f64 kernels, or a
/// clear error for any other `--dtype`.
pub(crate) fn ieee_format(spec: &str, format: Format) -> Result<Format> {
    match format {
        Format::F32 | Format::F64 => Ok(format),
        other => Err(Error::Input(format!(
            "{spec} does not take {other} inputs: this probe supports f32 and f64 only"
        ))
        .advise(Remedy::Give(Param::Dtype, &["f32", "f64"]))),
    }
}

/// Copies `inputs` to the front of `dst`, as `convert` makes them, and
/// zeroes the rest: only the values past them that the last fill wrote
/// (`written`), so that one row of a GEMV of 64 rows of 2^20 costs one
/// row. Returns how many values this fill wrote.
pub(crate) fn fill_front<T: Copy>(
    dst: &mut [T],
    inputs: &[f64],
    written: usize,
    zero: T,
    convert: impl Fn(f64) -> T,
) -> usize {
    let len = inputs.len().min(dst.len());
    for (d, &v) in dst.iter_mut().zip(&inputs[..len]) {
        *d = convert(v);
    }
    if written > len {
        dst[len..written].fill(zero);
    }
    len
}

/// Runs one library's kernel on a batch of rows (`inputs` holds
/// `out.len()` rows of `n`).
pub(crate) trait Run {
    fn run(&mut self, inputs: &[f64], out: &mut [f64]);

    /// Makes `y` (`n` values) the vector the rows are multiplied by: `dot`'s
    /// second vector, `gemv`'s vector, every column of `gemm`'s `B`. The
    /// weights start as ones; `sum` takes no weights.
    fn set_weights(&mut self, y: &[f64]);
}

/// A linear-algebra library's sum, dot, GEMV or GEMM as a black box.
pub struct LinalgProbe {
    library: &'static str,
    n: usize,
    format: Format,
    accumulator: Format,
    kernel: Kernel,
    run: Box<dyn Run>,
    about: Option<String>,
    /// The runner's weights may differ from ones (a `dot` set them), so a
    /// plain sum must restore the ones first.
    weighted: bool,
}

impl std::fmt::Debug for LinalgProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinalgProbe")
            .field("library", &self.library)
            .field("n", &self.n)
            .field("format", &self.format)
            .field("kernel", &self.kernel)
            .finish()
    }
}

impl LinalgProbe {
    /// Opens operation `op` of `spec` among the `offered` operations of
    /// `library`; `check` may refuse sizes the library cannot take, `make`
    /// builds the kernel's runner (and may fail, as loading a library can).
    pub(crate) fn open(
        library: &'static str,
        spec: &str,
        op: &str,
        opts: &ProbeOptions,
        offered: &[&str],
        check: impl FnOnce(Kernel, usize) -> Result<()>,
        make: impl FnOnce(Kernel, usize, Format) -> Result<Box<dyn Run>>,
    ) -> Result<Self> {
        let n = resolve_n(spec, opts)?;
        let kernel = Kernel::parse(library, spec, op, n, opts, offered)?;
        let format = ieee_format(spec, opts.format)?;
        kernel.check_size(spec, n)?;
        check(kernel, n)?;
        Ok(LinalgProbe {
            library,
            n,
            format,
            accumulator: opts.accumulator.unwrap_or(format),
            kernel,
            run: make(kernel, n, format)?,
            about: None,
            weighted: false,
        })
    }

    /// Says what exactly answers (see [`Probe::about`]).
    pub(crate) fn set_about(&mut self, about: Option<String>) {
        self.about = about;
    }

    /// Refuses a batch `inputs` that is not `out.len()` rows of `n`, or
    /// holds more rows than one call takes.
    fn check_rows(&self, inputs: &[f64], out: &[f64]) -> Result<()> {
        if inputs.len() != out.len() * self.n || out.len() > self.max_batch() {
            return Err(Error::Input(format!(
                "{} probe: {} values for {} rows of n = {} (at most {} rows a call)",
                self.library,
                inputs.len(),
                out.len(),
                self.n,
                self.max_batch()
            )));
        }
        Ok(())
    }
}

impl Probe for LinalgProbe {
    fn n(&self) -> usize {
        self.n
    }
    fn format(&self) -> Format {
        self.format
    }
    fn accumulator(&self) -> Format {
        self.accumulator
    }
    fn may_fuse(&self) -> bool {
        false
    }
    fn max_batch(&self) -> usize {
        self.kernel.batch()
    }
    fn about(&self) -> Option<String> {
        self.about.clone()
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()> {
        self.check_rows(inputs, out)?;
        // Restored only after a dot, so plain sums cost what they did.
        if self.weighted {
            self.run.set_weights(&vec![1.0; self.n]);
            self.weighted = false;
        }
        self.run.run(inputs, out);
        Ok(())
    }
    fn as_dot(&mut self) -> Option<&mut dyn Dot> {
        if self.kernel != Kernel::Sum {
            Some(self)
        } else {
            None
        }
    }
}

impl Dot for LinalgProbe {
    fn dot(&mut self, rows: &[f64], y: &[f64], out: &mut [f64]) -> Result<()> {
        if self.kernel == Kernel::Sum {
            return Err(Error::Input(format!(
                "{} probe: its sum does not multiply; only dot, gemv and gemm do",
                self.library
            )));
        }
        self.check_rows(rows, out)?;
        if y.len() != self.n {
            return Err(Error::Input(format!(
                "{} probe: a vector y of {} values for n = {}",
                self.library,
                y.len(),
                self.n
            )));
        }
        self.run.set_weights(y);
        self.weighted = true;
        self.run.run(rows, out);
        Ok(())
    }
}
