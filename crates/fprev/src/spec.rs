//! Probe specs: how a string such as `native:strided:8` or `blas:dot@blis`
//! names a black box, and the one table of every family this build knows.
//!
//! A family is one row of [`FAMILIES`]: the prefix before the first `:`,
//! the pattern and help line `fprev probes` prints, whether it can run on
//! this machine, and how to open it. Adding a library is one probe file and
//! one row here.
//!
//! ```
//! use fprev::probe::ProbeOptions;
//! use fprev::Format;
//!
//! let opts = ProbeOptions { n: Some(8), format: Format::Bf16, ..Default::default() };
//! let probe = fprev::open("native:pairwise", &opts).unwrap();
//! assert_eq!(probe.n(), 8);
//! assert!(fprev::open("native:zigzag", &opts).is_err());
//! ```

use crate::error::{Error, Result};
use crate::format::Format;
use crate::probe::{Native, ReducerProbe, ReplayProbe, blas, dylib, ndarray};
use crate::probe::{Probe, ProbeOptions};

/// How a family opens a spec: `(spec, rest after the prefix, options)`.
pub type Opener = fn(&str, &str, &ProbeOptions) -> Result<Box<dyn Probe>>;

/// One family of probe specs.
#[derive(Clone, Copy)]
pub struct Family {
    /// The spec's prefix, before the first `:`.
    pub prefix: &'static str,
    /// The spec pattern, e.g. `native:strided:K`.
    pub pattern: &'static str,
    /// What the black box is, in one line.
    pub about: &'static str,
    /// `Err(what to install)` when it cannot run on this machine.
    available: fn() -> std::result::Result<(), String>,
    open: Opener,
}

impl Family {
    /// Whether this family can run here; `Err` says what it needs.
    pub fn available(&self) -> std::result::Result<(), String> {
        (self.available)()
    }
}

impl std::fmt::Debug for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Family")
            .field("pattern", &self.pattern)
            .finish_non_exhaustive()
    }
}

fn ok() -> std::result::Result<(), String> {
    Ok(())
}

fn native(_: &str, rest: &str, opts: &ProbeOptions) -> Result<Box<dyn Probe>> {
    Ok(Box::new(Native::new(rest, opts)?))
}

const fn native_row(pattern: &'static str, about: &'static str) -> Family {
    Family {
        prefix: "native",
        pattern,
        about,
        available: ok,
        open: native,
    }
}

#[cfg(feature = "python")]
fn python(spec: &str, _: &str, opts: &ProbeOptions) -> Result<Box<dyn Probe>> {
    Ok(Box::new(crate::probe::python::PythonProbe::open(
        spec, opts,
    )?))
}

#[cfg(feature = "python")]
macro_rules! python_row {
    ($prefix:literal, $pattern:literal, $about:literal, $module:literal) => {
        Family {
            prefix: $prefix,
            pattern: $pattern,
            about: $about,
            available: || crate::probe::python::available($module),
            open: python,
        }
    };
}

#[cfg(any(not(feature = "mpi"), not(feature = "python")))]
fn unbuilt(feature: &'static str) -> std::result::Result<(), String> {
    Err(format!(
        "this fprev was built without the '{feature}' feature"
    ))
}

/// Every probe family this build knows, in the order `fprev probes` lists
/// them. Families of a feature left out of the build are listed as
/// unavailable, saying so.
pub static FAMILIES: &[Family] = &[
    native_row("native:sequential", "left to right"),
    native_row("native:reverse", "right to left"),
    native_row("native:pairwise", "recursive halving at floor(n/2)"),
    native_row(
        "native:strided:K",
        "K interleaved lanes, combined pairwise (NumPy style)",
    ),
    native_row(
        "native:blocked:B",
        "blocks of B left to right, block sums left to right",
    ),
    native_row(
        "native:binary-tree",
        "Binary Tree Reduction: S[0,n) = S[0,P) + S[P,n)",
    ),
    native_row("native:fused:K", "K-term fused nodes, tensor-core style"),
    Family {
        prefix: "reduce",
        pattern: "reduce:binary-tree[:THREADS]",
        about: "fprev's Binary Tree Reduction, same bits on any thread count",
        available: ok,
        open: |spec, rest, opts| Ok(Box::new(ReducerProbe::open(spec, rest, opts)?)),
    },
    Family {
        prefix: "reduce",
        pattern: "reduce:prerounded[:THREADS]",
        about: "pre-rounded order-independent sum, same bits in any order and on any \
                thread count",
        available: ok,
        open: |spec, rest, opts| Ok(Box::new(ReducerProbe::open(spec, rest, opts)?)),
    },
    Family {
        prefix: "replay",
        pattern: "replay:PATH.json",
        about: "a saved tree evaluated as a black box",
        available: ok,
        open: |_, rest, opts| Ok(Box::new(ReplayProbe::open(rest, opts)?)),
    },
    Family {
        prefix: "ndarray",
        pattern: "ndarray:sum|dot|gemv|gemm",
        about: "the ndarray crate (matrixmultiply for GEMM), f32 and f64",
        available: ok,
        open: |spec, rest, opts| Ok(Box::new(ndarray::open(spec, rest, opts)?)),
    },
    Family {
        prefix: "blas",
        pattern: "blas:dot|gemv|gemm[@LIB]",
        about: "a CBLAS loaded at run time (LIB: openblas, blis, refblas, mkl, atlas, or a \
                path), f32 and f64",
        available: || {
            blas::library::Cblas::open(None)
                .map(|_| ())
                .map_err(|e| e.to_string())
        },
        open: |spec, rest, opts| Ok(Box::new(blas::open(spec, rest, opts)?)),
    },
    Family {
        prefix: "dylib",
        pattern: "dylib:PATH.so:SYMBOL",
        about: "a C function T SYMBOL(const T *x, size_t n), T = float (f32) or double (f64)",
        available: ok,
        open: |spec, rest, opts| Ok(Box::new(dylib::DylibProbe::open(spec, rest, opts)?)),
    },
    Family {
        prefix: "dylib-dot",
        pattern: "dylib-dot:PATH.so:SYMBOL",
        about: "a C dot product T SYMBOL(const T *x, const T *y, size_t n), y = ones for a \
                sum",
        available: ok,
        open: |spec, rest, opts| Ok(Box::new(dylib::DylibProbe::open_dot(spec, rest, opts)?)),
    },
    Family {
        prefix: "mpi",
        pattern: "mpi:allreduce[:LOCAL]|binary-tree",
        about: "MPI_Allreduce(SUM) of each rank's block summed in LOCAL order; the \
                distributed Binary Tree Reduction (--ranks P)",
        #[cfg(feature = "mpi")]
        available: || {
            let mpirun = std::process::Command::new("mpirun")
                .arg("--version")
                .output()
                .is_ok();
            if mpirun || crate::mpi::in_job() {
                Ok(())
            } else {
                Err("mpirun is not installed (Debian: apt-get install openmpi-bin)".into())
            }
        },
        #[cfg(feature = "mpi")]
        open: |spec, rest, opts| Ok(Box::new(crate::mpi::MpiProbe::open(spec, rest, opts)?)),
        #[cfg(not(feature = "mpi"))]
        available: || unbuilt("mpi"),
        #[cfg(not(feature = "mpi"))]
        open: |spec, _, _| {
            Err(Error::Input(format!(
                "{spec}: this fprev was built without the 'mpi' feature: rebuild with \
                 `cargo build --features mpi` (needs libopenmpi-dev)"
            )))
        },
    },
    #[cfg(feature = "python")]
    python_row!(
        "numpy",
        "numpy:sum|dot|gemv|gemm",
        "NumPy (bf16 and fp8 through ml_dtypes)",
        "numpy"
    ),
    #[cfg(feature = "python")]
    python_row!("jax", "jax:sum|dot|gemv|gemm", "JAX on the CPU", "jax"),
    #[cfg(feature = "python")]
    python_row!(
        "torch",
        "torch:sum|dot|gemv|gemm[:cuda]",
        "PyTorch, CPU or CUDA",
        "torch"
    ),
    #[cfg(feature = "python")]
    python_row!(
        "python",
        "python:PATH.py:FUNC",
        "any FUNC(x: numpy.ndarray) -> float",
        "numpy"
    ),
    #[cfg(not(feature = "python"))]
    Family {
        prefix: "python",
        pattern: "numpy: jax: torch: python:",
        about: "Python libraries through the embedded bridge",
        available: || unbuilt("python"),
        open: |spec, _, _| {
            Err(Error::Input(format!(
                "{spec}: this fprev was built without the 'python' feature: rebuild with \
                 `cargo build --features python`"
            )))
        },
    },
];

/// The family a spec's prefix names. A prefix no row has may still be a
/// Python library of `FPREV_PROBES` (a `LIBRARY.py` there).
fn family(prefix: &str) -> Option<Opener> {
    if let Some(f) = FAMILIES.iter().find(|f| f.prefix == prefix) {
        return Some(f.open);
    }
    #[cfg(feature = "python")]
    if crate::probe::python::serves(prefix) {
        return Some(python);
    }
    None
}

/// Opens the black box a spec names, e.g. `native:strided:8` or
/// `replay:tree.json` (also `fprev::open`).
pub fn open(spec: &str, opts: &ProbeOptions) -> Result<Box<dyn Probe>> {
    if let Some(n) = opts.n {
        crate::memory::check_reveal(n)?;
    }
    if opts.format == Format::X87 || opts.accumulator == Some(Format::X87) {
        return Err(Error::Input(
            "x87 is not a format to give: inputs come as f64 (or narrower), and an x87 \
             accumulator is what `reveal` finds in a black box's arithmetic; use --dtype f64"
                .into(),
        ));
    }
    let (prefix, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let Some(open) = family(prefix) else {
        return Err(Error::Input(format!(
            "unknown probe spec '{spec}': run `fprev probes` for the list"
        )));
    };
    let probe = open(spec, rest, opts)?;
    if probe.n() == 0 {
        return Err(Error::Input("n must be at least 1".into()));
    }
    if opts.ranks.is_some() && prefix != "mpi" {
        return Err(Error::Input(format!(
            "{spec}: this black box does not run on MPI ranks: --ranks applies to mpi:…"
        )));
    }
    if opts.threads.is_some() && !matches!(prefix, "reduce" | "blas") {
        return Err(Error::Input(format!(
            "{spec}: this black box does not take a thread count: --threads applies to \
             reduce:… and blas:…"
        )));
    }
    Ok(probe)
}
