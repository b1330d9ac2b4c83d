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

mod families;
mod mma;

use std::ops::Range;

pub use crate::profile::{OPS, PROFILES, Profile, profile};
pub use families::{FAMILIES, Family};
use families::{Grammar, family};
pub use mma::Instruction;

use crate::error::{Error, Param, Remedy, Result};
use crate::format::Format;
use crate::probe::{MPI_ELEMENTS, Probe, ProbeOptions};

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
    /// and f64 only; NumPy, JAX and PyTorch also f16 and bf16; a simulated
    /// GPU instruction (`mma:`) its own input format only; a black box of
    /// one's own, any.
    pub fn supports(&self, dtype: Format) -> bool {
        match self.default_dtype() {
            Some(own) => own == dtype,
            None => self.family.dtypes.is_none_or(|d| d.contains(&dtype)),
        }
    }

    /// The input format it takes when none is given, where its spec names
    /// one: an `mma:` instruction's own ([`Instruction::format`]), the only
    /// one it takes; `None` (f32) for the others.
    pub fn default_dtype(&self) -> Option<Format> {
        (self.family.default_dtype)(self)
    }

    /// Whether it takes a thread count (`--threads`): `reduce:…`,
    /// `rayon:…`, `blas:…`, `polars:…` and `duckdb:…`.
    pub fn takes_threads(&self) -> bool {
        self.family.threads
    }

    /// Whether its input is a NumPy array the Python bridge hands it,
    /// which can start at any offset ([`ProbeOptions::offset`]).
    pub fn takes_offset(&self) -> bool {
        // MMA-Sim copies its operands into tensors: no array of the
        // caller's reaches the simulated instruction.
        #[cfg(feature = "python")]
        return crate::probe::python::serves(self.prefix()) && self.prefix() != "mma";
        #[cfg(not(feature = "python"))]
        false
    }

    /// Whether it runs on MPI ranks (`--ranks`): `mpi:…`.
    pub fn runs_on_ranks(&self) -> bool {
        self.family.ranks
    }

    /// The shape it is opened with at `n` summands when none is given: an
    /// `mpi:` black box's vector of [`MPI_ELEMENTS`] (`M,1,n`); `None`, one
    /// row, for the others.
    pub fn default_shape(&self, n: usize) -> Option<[usize; 3]> {
        self.runs_on_ranks().then_some([MPI_ELEMENTS, 1, n])
    }

    /// Opens the black box it names.
    pub fn open(&self, opts: &ProbeOptions) -> Result<Box<dyn Probe>> {
        // A reveal checks its own memory; a black box opened for a replay
        // streamed from a formula needs only its inputs'.
        if let Some(n) = opts.n {
            crate::memory::check_replay(n)?;
        }
        if opts.format == Format::E8m13 {
            return Err(Error::Input(
                "e8m13 is not a format to give: it is the format a tensor core's fp8 \
                 instructions round their results to, which a reveal finds"
                    .into(),
            )
            .advise(Remedy::Give(Param::Dtype, &["e4m3", "e5m2"])));
        }
        if opts.format == Format::X87 || opts.accumulator == Some(Format::X87) {
            return Err(Error::Input(
                "x87 is not a format to give: inputs come as f64 (or narrower), and an x87 \
                 accumulator is what a reveal finds in a black box's arithmetic"
                    .into(),
            )
            .advise(Remedy::Give(Param::Dtype, &["f64"])));
        }
        if opts.column.is_some() && self.op() != Some("gemm") {
            return Err(Error::Input(format!(
                "{self}: only a GEMM has output columns to pick (blas:gemm, numpy:gemm, …)"
            )));
        }
        if opts.offset.is_some() && !self.takes_offset() {
            return Err(Error::Input(format!(
                "{self}: an input at an offset is for black boxes handed a NumPy array \
                 (numpy:…, python:…, jax:…)"
            )));
        }
        let probe = (self.family.open)(self, opts)?;
        if probe.n() == 0 {
            return Err(Error::Input("n must be at least 1".into()));
        }
        if opts.ranks.is_some() && !self.runs_on_ranks() {
            return Err(
                Error::Input(format!("{self}: this black box does not run on MPI ranks"))
                    .advise(Remedy::AppliesTo(Param::Ranks, "mpi:…")),
            );
        }
        if opts.threads.is_some() && !self.takes_threads() {
            return Err(Error::Input(format!(
                "{self}: this black box does not take a thread count"
            ))
            .advise(Remedy::AppliesTo(
                Param::Threads,
                "reduce:…, rayon:…, blas:…, polars:… and duckdb:…",
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
