//! Probe specs: how a string such as `native:strided:8` or `blas:dot@blis`
//! names a black box ([`Spec`], parsed once), and the one table of every
//! family this build knows.
//!
//! A family is one row of [`FAMILIES`]: the prefix before the first `:`,
//! the pattern and help line `fprev probes` prints, how the rest of a spec
//! reads, the dtypes it takes, whether it takes a thread count or runs on
//! MPI ranks, whether it can run on this machine, and how to open it.
//! Adding a library is one probe file and one row here.
//!
//! ```
//! use fprev::probe::ProbeOptions;
//! use fprev::{Format, Spec};
//!
//! let opts = ProbeOptions { n: Some(8), format: Format::Bf16, ..Default::default() };
//! let spec: Spec = "native:pairwise".parse().unwrap();
//! let probe = spec.open(&opts).unwrap();
//! assert_eq!(probe.n(), 8);
//! assert!(fprev::open("native:zigzag", &opts).is_err());
//! assert!("nope:sum".parse::<Spec>().is_err());
//! ```

use std::ops::Range;

use crate::error::{Error, Result};
use crate::format::Format;
use crate::probe::{Native, ReducerProbe, ReplayProbe, blas, dylib, ndarray};
use crate::probe::{Probe, ProbeOptions};

/// How a family opens a spec.
type Open = fn(&Spec, &ProbeOptions) -> Result<Box<dyn Probe>>;

/// How the text after a family's prefix reads.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Grammar {
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
const ARRAY_LIBRARY: &[Format] = &[Format::F64, Format::F32, Format::F16, Format::Bf16];

/// One family of probe specs.
#[derive(Clone, Copy)]
pub struct Family {
    /// The spec's prefix, before the first `:`.
    pub prefix: &'static str,
    /// The spec pattern, e.g. `native:strided:K`.
    pub pattern: &'static str,
    /// What the black box is, in one line.
    pub about: &'static str,
    grammar: Grammar,
    /// The dtypes it takes; `None`: any (a black box of one's own).
    dtypes: Option<&'static [Format]>,
    /// Whether it takes a thread count (`--threads`).
    threads: bool,
    /// Whether it runs on MPI ranks (`--ranks`).
    ranks: bool,
    /// `Err(what to install)` when it cannot run on this machine.
    available: fn() -> std::result::Result<(), String>,
    open: Open,
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
        available: ok,
        open,
    }
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

fn native(spec: &Spec, opts: &ProbeOptions) -> Result<Box<dyn Probe>> {
    Ok(Box::new(Native::new(spec.rest(), opts)?))
}

const fn native_row(pattern: &'static str, about: &'static str) -> Family {
    row("native", pattern, about, Grammar::Whole, native)
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

#[cfg(feature = "python")]
fn python(spec: &Spec, opts: &ProbeOptions) -> Result<Box<dyn Probe>> {
    Ok(Box::new(crate::probe::python::PythonProbe::open_library(
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
    row(
        "replay",
        "replay:PATH.json",
        "a saved tree evaluated as a black box",
        Grammar::Whole,
        |spec, opts| Ok(Box::new(ReplayProbe::open(spec.rest(), opts)?)),
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
        #[cfg(not(feature = "mpi"))]
        available: || unbuilt("mpi"),
        ..row(
            "mpi",
            "mpi:allreduce[:LOCAL]|binary-tree",
            "MPI_Allreduce(SUM) of each rank's block summed in LOCAL order; the \
             distributed Binary Tree Reduction (--ranks P)",
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
        available: || crate::probe::python::available("numpy"),
        ..row(
            "python",
            "python:PATH.py:FUNC",
            "any FUNC(x: numpy.ndarray) -> float",
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
fn family(prefix: &str) -> Option<&'static Family> {
    if let Some(f) = FAMILIES.iter().find(|f| f.prefix == prefix) {
        return Some(f);
    }
    #[cfg(feature = "python")]
    if crate::probe::python::serves(prefix) {
        return Some(&PROBES_LIBRARY);
    }
    None
}

/// A probe spec, parsed: its family and the parts the family's pattern
/// has (an op, an argument, a library, a path and a symbol). It reads back
/// as written.
///
/// ```
/// use fprev::{Format, Spec};
///
/// let spec: Spec = "blas:gemv@blis".parse().unwrap();
/// assert_eq!(spec.to_string(), "blas:gemv@blis");
/// assert_eq!((spec.prefix(), spec.op(), spec.library()), ("blas", Some("gemv"), Some("blis")));
/// assert_eq!(spec.label(), "blas@blis");
/// assert!(spec.takes_threads() && !spec.supports(Format::Bf16));
///
/// let spec: Spec = "reduce:binary-tree:4".parse().unwrap();
/// assert_eq!((spec.op(), spec.argument()), (Some("binary-tree"), Some("4")));
/// let spec: Spec = "dylib:./libsum.so:sum".parse().unwrap();
/// assert_eq!(spec.path_symbol(), Some(("./libsum.so", "sum")));
/// assert!(spec.supports(Format::E4m3) && spec.op().is_none());
/// ```
#[derive(Clone, Debug)]
pub struct Spec {
    text: String,
    family: &'static Family,
    /// Where the text before the first `:` ends.
    prefix_end: usize,
    parts: Parts,
}

/// Where the parts of a spec's text lie, as its family's grammar splits it.
#[derive(Clone, Debug)]
enum Parts {
    Whole,
    Op {
        op: Range<usize>,
        argument: Option<Range<usize>>,
    },
    OpAtLibrary {
        op: Range<usize>,
        library: Option<Range<usize>>,
    },
    PathSymbol(Option<(Range<usize>, Range<usize>)>),
}

impl std::str::FromStr for Spec {
    type Err = Error;

    /// Parses a spec; only a prefix no family has is refused here: what
    /// follows it is checked as the black box opens.
    fn from_str(text: &str) -> Result<Self> {
        let (prefix, rest) = text.split_once(':').unwrap_or((text, ""));
        let Some(family) = family(prefix) else {
            return Err(Error::Input(format!(
                "unknown probe spec '{text}': run `fprev probes` for the list"
            )));
        };
        let start = text.len() - rest.len();
        let at = |i: usize| start + i;
        let parts = match family.grammar {
            Grammar::Whole => Parts::Whole,
            Grammar::Op => match rest.find(':') {
                Some(i) => Parts::Op {
                    op: start..at(i),
                    argument: Some(at(i + 1)..text.len()),
                },
                None => Parts::Op {
                    op: start..text.len(),
                    argument: None,
                },
            },
            Grammar::OpAtLibrary => match rest.find('@') {
                Some(i) => Parts::OpAtLibrary {
                    op: start..at(i),
                    library: Some(at(i + 1)..text.len()),
                },
                None => Parts::OpAtLibrary {
                    op: start..text.len(),
                    library: None,
                },
            },
            Grammar::PathSymbol => Parts::PathSymbol(
                rest.rfind(':')
                    .map(|i| (start..at(i), at(i + 1)..text.len())),
            ),
        };
        Ok(Spec {
            text: text.to_string(),
            family,
            prefix_end: prefix.len(),
            parts,
        })
    }
}

impl std::fmt::Display for Spec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq for Spec {
    /// Specs are equal as written: the text decides every part.
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Spec {
    /// The spec as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Its row of [`FAMILIES`] (a Python library of `FPREV_PROBES` has a
    /// row of its own, outside the table).
    pub fn family(&self) -> &'static Family {
        self.family
    }

    /// The text before the first `:`: `blas` of `blas:dot@blis`, `mylib`
    /// of a `FPREV_PROBES` library's `mylib:sum`.
    pub fn prefix(&self) -> &str {
        &self.text[..self.prefix_end]
    }

    /// The text after the prefix's `:` (empty when there is none).
    pub fn rest(&self) -> &str {
        self.text.get(self.prefix_end + 1..).unwrap_or_default()
    }

    /// The operation, where the family names one: `gemv` of
    /// `blas:gemv@blis`, `binary-tree` of `reduce:binary-tree:4`; empty
    /// when the spec names none.
    pub fn op(&self) -> Option<&str> {
        match &self.parts {
            Parts::Op { op, .. } | Parts::OpAtLibrary { op, .. } => Some(&self.text[op.clone()]),
            _ => None,
        }
    }

    /// The argument after the operation's `:`: `4` of
    /// `reduce:binary-tree:4`, `cuda` of `torch:gemm:cuda`.
    pub fn argument(&self) -> Option<&str> {
        match &self.parts {
            Parts::Op { argument, .. } => argument.clone().map(|r| &self.text[r]),
            _ => None,
        }
    }

    /// The library after `@`: `blis` of `blas:dot@blis`.
    pub fn library(&self) -> Option<&str> {
        match &self.parts {
            Parts::OpAtLibrary { library, .. } => library.clone().map(|r| &self.text[r]),
            _ => None,
        }
    }

    /// The path and symbol of `dylib:PATH.so:SYMBOL` or
    /// `python:PATH.py:FUNC`, split at the last `:`; `None` where the spec
    /// has no `:` after the path.
    pub fn path_symbol(&self) -> Option<(&str, &str)> {
        match &self.parts {
            Parts::PathSymbol(Some((path, symbol))) => {
                Some((&self.text[path.clone()], &self.text[symbol.clone()]))
            }
            _ => None,
        }
    }

    /// The library a black box belongs to, as surveys label it: `numpy`
    /// of `numpy:sum`, `blas@blis` of `blas:dot@blis`, `blas` of
    /// `blas:dot`.
    pub fn label(&self) -> String {
        match self.library() {
            Some(lib) => format!("{}@{lib}", self.prefix()),
            None => self.prefix().to_string(),
        }
    }

    /// Whether the black box takes `dtype`: a CBLAS and ndarray know f32
    /// and f64 only; NumPy, JAX and PyTorch also f16 and bf16; a black box
    /// of one's own, any.
    pub fn supports(&self, dtype: Format) -> bool {
        self.family.dtypes.is_none_or(|d| d.contains(&dtype))
    }

    /// Whether it takes a thread count (`--threads`): `reduce:…` and
    /// `blas:…`.
    pub fn takes_threads(&self) -> bool {
        self.family.threads
    }

    /// Whether it runs on MPI ranks (`--ranks`): `mpi:…`.
    pub fn runs_on_ranks(&self) -> bool {
        self.family.ranks
    }

    /// Opens the black box it names.
    pub fn open(&self, opts: &ProbeOptions) -> Result<Box<dyn Probe>> {
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
        let probe = (self.family.open)(self, opts)?;
        if probe.n() == 0 {
            return Err(Error::Input("n must be at least 1".into()));
        }
        if opts.ranks.is_some() && !self.runs_on_ranks() {
            return Err(Error::Input(format!(
                "{self}: this black box does not run on MPI ranks: --ranks applies to mpi:…"
            )));
        }
        if opts.threads.is_some() && !self.takes_threads() {
            return Err(Error::Input(format!(
                "{self}: this black box does not take a thread count: --threads applies to \
                 reduce:… and blas:…"
            )));
        }
        Ok(probe)
    }
}

/// Opens the black box a spec names, e.g. `native:strided:8` or
/// `replay:tree.json` (also `fprev::open`): [`Spec::open`] of the parsed
/// spec.
pub fn open(spec: &str, opts: &ProbeOptions) -> Result<Box<dyn Probe>> {
    spec.parse::<Spec>()?.open(opts)
}
