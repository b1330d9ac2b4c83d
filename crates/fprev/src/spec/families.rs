//! The families of probe specs: one row of [`FAMILIES`] each, saying
//! what its specs look like, what they take and how to open them.

use std::path::Path;

use crate::document::TreeDocument;
use crate::error::Error;
use crate::error::Result;
use crate::format::Format;
use crate::probe::{Native, RayonProbe, ReducerProbe, ReplayProbe, blas, dylib, ndarray};
use crate::probe::{Probe, ProbeOptions};

use super::Spec;

/// How a family opens a spec.
pub(super) type Open = fn(&Spec, &ProbeOptions) -> Result<Box<dyn Probe>>;

/// How the text after a family's prefix reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Grammar {
    /// One whole: a formula (`native:`), a path (`replay:`).
    Whole,
    /// `OP[:ARG]`: `reduce:binary-tree:4`, `torch:gemm:cuda`.
    Op,
    /// `OP[@LIB]`: `blas:dot@blis`.
    OpAtLibrary,
    /// `PATH:SYMBOL`, split at the last `:`: `dylib:./libsum.so:sum`.
    PathSymbol,
}

/// The dtypes a CBLAS and ndarray take.
const IEEE: &[Format] = &[Format::F64, Format::F32];
/// The dtypes of NumPy's, JAX's and PyTorch's sums (the 8-bit formats are
/// no dtype of theirs).
#[cfg(feature = "python")]
const ARRAY_LIBRARY: &[Format] = &[Format::F64, Format::F32, Format::F16, Format::Bf16];
/// The dtypes fprev gives a simulated matrix instruction: an array
/// library's and TF32 (the instruction says which one it takes).
#[cfg(feature = "python")]
const MMA_INPUTS: &[Format] = &[
    Format::F64,
    Format::F32,
    Format::Tf32,
    Format::F16,
    Format::Bf16,
];

/// One family of probe specs.
#[derive(Clone, Copy)]
pub struct Family {
    /// The spec's prefix, before the first `:`.
    pub prefix: &'static str,
    /// The spec pattern, e.g. `native:strided:K`.
    pub pattern: &'static str,
    /// What the black box is, in one line.
    pub about: &'static str,
    pub(super) grammar: Grammar,
    /// The dtypes it takes; `None`: any (a black box of one's own).
    pub(super) dtypes: Option<&'static [Format]>,
    /// Whether it takes a thread count (`--threads`).
    pub(super) threads: bool,
    /// Whether it runs on MPI ranks (`--ranks`).
    pub(super) ranks: bool,
    /// The input format it takes when none is given; `None`: f32.
    pub(super) default_dtype: fn(&Spec) -> Option<Format>,
    /// `Err(what to install)` when it cannot run on this machine.
    available: fn() -> std::result::Result<(), String>,
    pub(super) open: Open,
}

/// A row of [`FAMILIES`] with the common defaults: any dtype, no thread
/// count, no ranks, available.
const fn row(
    prefix: &'static str,
    pattern: &'static str,
    about: &'static str,
    grammar: Grammar,
    open: Open,
) -> Family {
    Family {
        prefix,
        pattern,
        about,
        grammar,
        dtypes: None,
        threads: false,
        ranks: false,
        default_dtype: |_| None,
        available: ok,
        open,
    }
}

impl Family {
    /// Whether this family can run here; `Err` says what it needs.
    pub fn available(&self) -> std::result::Result<(), String> {
        (self.available)()
    }

    /// Every spec of this family, where it can list them (`mma:` lists each
    /// simulated instruction); `None` where its pattern says all there is.
    pub fn members(&self) -> crate::Result<Option<Vec<String>>> {
        #[cfg(feature = "python")]
        if self.grammar == Grammar::Op && crate::probe::python::serves(self.prefix) {
            self.available().map_err(crate::Error::Input)?;
            return crate::probe::python::members(self.prefix);
        }
        Ok(None)
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

fn native(spec: &Spec, opts: &ProbeOptions) -> Result<Box<dyn Probe>> {
    Ok(Box::new(Native::new(spec.rest(), opts)?))
}

const fn native_row(pattern: &'static str, about: &'static str) -> Family {
    row("native", pattern, about, Grammar::Whole, native)
}

fn rayon(spec: &Spec, opts: &ProbeOptions) -> Result<Box<dyn Probe>> {
    let op = spec.op().unwrap_or_default();
    Ok(Box::new(RayonProbe::open(
        spec.as_str(),
        op,
        spec.argument(),
        opts,
    )?))
}

fn reducer(spec: &Spec, opts: &ProbeOptions) -> Result<Box<dyn Probe>> {
    let name = spec.op().unwrap_or_default();
    Ok(Box::new(ReducerProbe::open(
        spec.as_str(),
        name,
        spec.argument(),
        opts,
    )?))
}

/// A Python library's spec; one that takes a thread count (`polars:`,
/// `duckdb:`) has its `ARG` read as one.
#[cfg(feature = "python")]
fn python(spec: &Spec, opts: &ProbeOptions) -> Result<Box<dyn Probe>> {
    use crate::probe::python::PythonProbe;
    let open = if spec.takes_threads() {
        PythonProbe::open_threaded
    } else {
        PythonProbe::open_library
    };
    Ok(Box::new(open(
        spec.as_str(),
        spec.prefix(),
        spec.op().unwrap_or_default(),
        spec.argument(),
        opts,
    )?))
}

#[cfg(feature = "python")]
macro_rules! python_row {
    ($prefix:literal, $pattern:literal, $about:literal, $module:literal) => {
        Family {
            dtypes: Some(ARRAY_LIBRARY),
            available: || crate::probe::python::available($module),
            ..row($prefix, $pattern, $about, Grammar::Op, python)
        }
    };
}

/// The family of a Python library of `FPREV_PROBES` (a `LIBRARY.py`
/// there), which no row of [`FAMILIES`] names.
#[cfg(feature = "python")]
static PROBES_LIBRARY: Family = Family {
    available: || crate::probe::python::available("numpy"),
    ..row(
        "LIBRARY",
        "LIBRARY:OP[:ARG]",
        "a Python library of FPREV_PROBES",
        Grammar::Op,
        python,
    )
};

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
        threads: true,
        ..row(
            "reduce",
            "reduce:binary-tree[:THREADS]",
            "fprev's Binary Tree Reduction, same bits on any thread count",
            Grammar::Op,
            reducer,
        )
    },
    Family {
        threads: true,
        ..row(
            "reduce",
            "reduce:prerounded[:THREADS]",
            "pre-rounded order-independent sum, same bits in any order and on any \
             thread count",
            Grammar::Op,
            reducer,
        )
    },
    Family {
        threads: true,
        dtypes: Some(IEEE),
        ..row(
            "rayon",
            "rayon:sum|dot[:THREADS]",
            "Rayon's par_iter().sum() (and of products), f32 and f64; work stealing \
             regroups it from call to call on two threads or more",
            Grammar::Op,
            rayon,
        )
    },
    row(
        "replay",
        "replay:PATH.json",
        "a saved tree evaluated as a black box",
        Grammar::Whole,
        |spec, opts| Ok(Box::new(replay(spec.rest(), opts)?)),
    ),
    Family {
        dtypes: Some(IEEE),
        ..row(
            "ndarray",
            "ndarray:sum|dot|gemv|gemm",
            "the ndarray crate (matrixmultiply for GEMM), f32 and f64",
            Grammar::Op,
            // The whole rest, so that `ndarray:sum:x` is an unknown operation.
            |spec, opts| Ok(Box::new(ndarray::open(spec.as_str(), spec.rest(), opts)?)),
        )
    },
    Family {
        dtypes: Some(IEEE),
        threads: true,
        available: || {
            blas::library::Cblas::open(None)
                .map(|_| ())
                .map_err(|e| e.to_string())
        },
        ..row(
            "blas",
            "blas:dot|gemv|gemm[@LIB]",
            "a CBLAS loaded at run time (LIB: openblas, blis, refblas, mkl, atlas, or a \
             path), f32 and f64",
            Grammar::OpAtLibrary,
            |spec, opts| {
                let op = spec.op().unwrap_or_default();
                Ok(Box::new(blas::open(
                    spec.as_str(),
                    op,
                    spec.library(),
                    opts,
                )?))
            },
        )
    },
    row(
        "dylib",
        "dylib:PATH.so:SYMBOL",
        "a C function T SYMBOL(const T *x, size_t n), T = float (f32) or double (f64)",
        Grammar::PathSymbol,
        |spec, opts| {
            Ok(Box::new(dylib::DylibProbe::open(
                spec.as_str(),
                spec.path_symbol(),
                opts,
            )?))
        },
    ),
    row(
        "dylib-dot",
        "dylib-dot:PATH.so:SYMBOL",
        "a C dot product T SYMBOL(const T *x, const T *y, size_t n), y = ones for a \
         sum",
        Grammar::PathSymbol,
        |spec, opts| {
            Ok(Box::new(dylib::DylibProbe::open_dot(
                spec.as_str(),
                spec.path_symbol(),
                opts,
            )?))
        },
    ),
    Family {
        ranks: true,
        dtypes: Some(IEEE),
        #[cfg(feature = "mpi")]
        available: || {
            let linked = crate::mpi::Implementation::linked();
            let launcher = std::process::Command::new(linked.launcher())
                .arg("--version")
                .output()
                .is_ok();
            if launcher || crate::mpi::in_job() {
                Ok(())
            } else {
                Err(format!(
                    "{} is not installed (this fprev links {linked}; Debian: apt-get install {})",
                    linked.launcher(),
                    linked.package()
                ))
            }
        },
        #[cfg(not(feature = "mpi"))]
        available: || unbuilt("mpi"),
        ..row(
            "mpi",
            "mpi:allreduce[:LOCAL][@ALGO]|binary-tree",
            "MPI_Allreduce(SUM) of each rank's block summed in LOCAL order; the \
             distributed Binary Tree Reduction (on P MPI ranks)",
            Grammar::Op,
            #[cfg(feature = "mpi")]
            |spec, opts| {
                let op = spec.op().unwrap_or_default();
                Ok(Box::new(crate::mpi::MpiProbe::open(
                    spec.as_str(),
                    op,
                    spec.argument(),
                    opts,
                )?))
            },
            #[cfg(not(feature = "mpi"))]
            |spec, _| {
                Err(Error::Input(format!(
                    "{spec}: this fprev was built without the 'mpi' feature: rebuild with \
                     `cargo build --features mpi` (needs libopenmpi-dev)"
                )))
            },
        )
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
    Family {
        // An instruction takes one input format: it is the default.
        default_dtype: |spec| super::Instruction::parse(spec.as_str())?.format(),
        dtypes: Some(MMA_INPUTS),
        ..python_row!(
            "mma",
            "mma:ARCH:INSTRUCTION",
            "a GPU matrix instruction simulated bit for bit by MMA-Sim, chained along K (ARCH: \
             volta turing ampere ada hopper blackwell rtx_blackwell cdna1 cdna2 cdna3; \
             INSTRUCTION as MMA-Sim spells it, wgmma. and tcgen05. prefixed: `fprev reveal \
             mma:ARCH` lists them; the input format defaults to the instruction's)",
            "mmasim"
        )
    },
    #[cfg(feature = "python")]
    Family {
        dtypes: Some(IEEE),
        threads: true,
        ..python_row!(
            "polars",
            "polars:sum[:THREADS]",
            "Polars' Series.sum() of a float column, f32 and f64 (THREADS: \
             POLARS_MAX_THREADS, fixed when polars is imported)",
            "polars"
        )
    },
    #[cfg(feature = "python")]
    Family {
        dtypes: Some(IEEE),
        threads: true,
        ..python_row!(
            "duckdb",
            "duckdb:sum[:THREADS]",
            "DuckDB's SELECT sum(x) over a DOUBLE or FLOAT column (THREADS: the \
             connection's threads)",
            "duckdb"
        )
    },
    #[cfg(feature = "python")]
    Family {
        available: || crate::probe::python::available("numpy"),
        ..row(
            "python",
            "python:PATH.py:FUNC",
            "any FUNC(x: numpy.ndarray) -> float, or FUNC(x, y) -> float: a dot product",
            Grammar::PathSymbol,
            |spec, opts| {
                Ok(Box::new(crate::probe::python::PythonProbe::open_user(
                    spec.as_str(),
                    spec.path_symbol(),
                    opts,
                )?))
            },
        )
    },
    #[cfg(not(feature = "python"))]
    Family {
        available: || unbuilt("python"),
        ..row(
            "python",
            "numpy: jax: torch: python:",
            "Python libraries through the embedded bridge",
            Grammar::PathSymbol,
            |spec, _| {
                Err(Error::Input(format!(
                    "{spec}: this fprev was built without the 'python' feature: rebuild with \
                     `cargo build --features python`"
                )))
            },
        )
    },
];

/// The family a spec's prefix names. A prefix no row has may still be a
/// Python library of `FPREV_PROBES` (a `LIBRARY.py` there).
pub(super) fn family(prefix: &str) -> Option<&'static Family> {
    if let Some(f) = FAMILIES.iter().find(|f| f.prefix == prefix) {
        return Some(f);
    }
    #[cfg(feature = "python")]
    if crate::probe::python::serves(prefix) {
        return Some(&PROBES_LIBRARY);
    }
    None
}

/// Opens `replay:PATH` (`path` is the text after `replay:`): a tree file
/// of one order, not a varying black box's skeleton.
fn replay(path: &str, opts: &ProbeOptions) -> Result<ReplayProbe> {
    if path.is_empty() {
        return Err(Error::Input(
            "replay needs a tree file: replay:PATH.json".into(),
        ));
    }
    let doc = TreeDocument::read(Path::new(path))?;
    doc.one_order(path)?;
    if let Some(n) = opts.n.filter(|n| *n != doc.n()) {
        return Err(Error::Input(format!(
            "{path} holds a tree of {} summands, but n = {n} was asked for",
            doc.n()
        )));
    }
    Ok(ReplayProbe::of(doc.tree(), doc.arithmetic.as_ref(), opts))
}
