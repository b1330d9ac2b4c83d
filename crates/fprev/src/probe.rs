//! The black box, and how a probe spec names one.
//!
//! A [`Probe`] is anything that sums `n` values in some fixed, unknown order.
//! The engine only ever asks it to "sum these inputs"; masks, units and the
//! validation of answers are the engine's job. Implement the trait to reveal
//! your own code:
//!
//! ```
//! use fprev::{Format, Probe, reveal, Options};
//!
//! /// Sums the odd-indexed values first, then the even ones, in f64.
//! struct OddsThenEvens(usize);
//!
//! impl Probe for OddsThenEvens {
//!     fn n(&self) -> usize { self.0 }
//!     fn format(&self) -> Format { Format::F64 }
//!     fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> fprev::Result<()> {
//!         for (x, o) in inputs.chunks(self.0).zip(out) {
//!             let odd: f64 = x.iter().skip(1).step_by(2).fold(0.0, |s, v| s + v);
//!             let even: f64 = x.iter().step_by(2).fold(0.0, |s, v| s + v);
//!             *o = odd + even;
//!         }
//!         Ok(())
//!     }
//! }
//!
//! let tree = reveal(&mut OddsThenEvens(4), &Options::default()).unwrap().tree;
//! assert_eq!(tree.to_text(), "((0+2)+(1+3))");
//! ```

pub(crate) mod batch;
pub mod blas;
pub mod dylib;
mod linalg;
#[cfg(feature = "mpi")]
pub mod mpi;
mod native;
pub mod ndarray;
#[cfg(feature = "python")]
pub mod python;
mod reducer;
mod replay;

pub use batch::Batch;
pub use linalg::LinalgProbe;
pub use native::Native;
pub use reducer::ReducerProbe;
pub use replay::ReplayProbe;

use crate::error::{Error, Result};
use crate::format::Format;

/// A summation black box.
pub trait Probe {
    /// Number of summands `n`.
    fn n(&self) -> usize;

    /// The format of the values the black box takes.
    fn format(&self) -> Format;

    /// The narrowest format its partial sums are rounded to, as far as is
    /// known. The engine counts at most `2^p` units of it in one answer, so
    /// declaring a wider format than the truth can make a reveal fail
    /// validation; narrower only costs queries. Defaults to [`Probe::format`].
    fn accumulator(&self) -> Format {
        self.format()
    }

    /// Whether the black box may add in multi-term fused nodes (tensor-core
    /// style). A fused node keeps a fixed window of bits below its largest
    /// term, so the mask must outweigh the units by more than that window,
    /// which limits `n` in narrow formats (f16: 16,386; e5m2: 66; e4m3: no
    /// fused node can be revealed). Defaults to `true`, the safe answer.
    fn may_fuse(&self) -> bool {
        true
    }

    /// How many inputs one evaluation of the black box sums, as the rows of
    /// one matrix (a GEMV or GEMM answers one per row of `A`). Such rows
    /// may follow different orders, which the engine checks before it
    /// relies on them, and a call counts as one however many rows it has.
    /// Defaults to 1: one input per call.
    fn max_batch(&self) -> usize {
        1
    }

    /// What exactly answers, where the spec leaves it open: the library
    /// file a `blas:` spec loaded and its version. Defaults to `None`.
    fn about(&self) -> Option<String> {
        None
    }

    /// Sums every row of `inputs` (`out.len()` rows of `n` values, each
    /// exactly representable in [`Probe::format`]) into `out`.
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()>;

    /// Sums every input of `batch` into `out`; the engine hands at most
    /// [`Probe::max_batch`] inputs at a time. The default writes the inputs
    /// out for [`Probe::sum`]; override it when edits to a buffer the probe
    /// keeps are cheaper than whole inputs (see [`Batch::continues`]).
    fn sum_batch(&mut self, batch: &Batch, out: &mut [f64]) -> Result<()> {
        batch::sum_batch(self, batch, out)
    }
}

impl<P: Probe + ?Sized> Probe for Box<P> {
    fn n(&self) -> usize {
        (**self).n()
    }
    fn format(&self) -> Format {
        (**self).format()
    }
    fn accumulator(&self) -> Format {
        (**self).accumulator()
    }
    fn may_fuse(&self) -> bool {
        (**self).may_fuse()
    }
    fn max_batch(&self) -> usize {
        (**self).max_batch()
    }
    fn about(&self) -> Option<String> {
        (**self).about()
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()> {
        (**self).sum(inputs, out)
    }
    fn sum_batch(&mut self, batch: &Batch, out: &mut [f64]) -> Result<()> {
        (**self).sum_batch(batch, out)
    }
}

/// The options that shape a black box besides its spec.
#[derive(Clone, Debug, Default)]
pub struct ProbeOptions {
    /// Number of summands; `None` takes the probe's own default (a replayed
    /// tree's size, or [`DEFAULT_N`]).
    pub n: Option<usize>,
    /// Input format.
    pub format: Format,
    /// Accumulator format, where the probe lets it be chosen.
    pub accumulator: Option<Format>,
    /// Matrix shape `[M, N, K]` of GEMV/GEMM black boxes; `K` is the reduced
    /// dimension (`n`), each of the `M` rows carries one query.
    pub shape: Option<[usize; 3]>,
    /// Worker threads, for black boxes that take a thread count
    /// (`reduce:…`, `blas:…`); `None` keeps the black box's own default.
    pub threads: Option<usize>,
    /// MPI ranks an `mpi:` black box must run on (the job's size).
    pub ranks: Option<usize>,
}

/// Summand count used when none is given.
pub const DEFAULT_N: usize = 32;

/// One family of probe specs, as `fprev probes` lists it.
#[derive(Clone, Debug)]
pub struct SpecInfo {
    /// The spec pattern, e.g. `native:strided:K`.
    pub pattern: &'static str,
    /// What the black box is.
    pub about: &'static str,
    /// `Err(reason)` when it cannot be used on this machine.
    pub available: std::result::Result<(), String>,
}

/// Every probe spec family this build knows.
pub fn catalog() -> Vec<SpecInfo> {
    let ok = || Ok(());
    let mut out = vec![
        SpecInfo {
            pattern: "native:sequential",
            about: "left to right",
            available: ok(),
        },
        SpecInfo {
            pattern: "native:reverse",
            about: "right to left",
            available: ok(),
        },
        SpecInfo {
            pattern: "native:pairwise",
            about: "recursive halving at floor(n/2)",
            available: ok(),
        },
        SpecInfo {
            pattern: "native:strided:K",
            about: "K interleaved lanes, combined pairwise (NumPy style)",
            available: ok(),
        },
        SpecInfo {
            pattern: "native:blocked:B",
            about: "blocks of B left to right, block sums left to right",
            available: ok(),
        },
        SpecInfo {
            pattern: "native:binary-tree",
            about: "Binary Tree Reduction: S[0,n) = S[0,P) + S[P,n)",
            available: ok(),
        },
        SpecInfo {
            pattern: "native:fused:K",
            about: "K-term fused nodes, tensor-core style",
            available: ok(),
        },
        SpecInfo {
            pattern: "reduce:binary-tree[:THREADS]",
            about: "fprev's Binary Tree Reduction, same bits on any thread count",
            available: ok(),
        },
        SpecInfo {
            pattern: "reduce:prerounded[:THREADS]",
            about: "pre-rounded order-independent sum, same bits in any order and on any thread count",
            available: ok(),
        },
        SpecInfo {
            pattern: "replay:PATH.json",
            about: "a saved tree evaluated as a black box",
            available: ok(),
        },
        SpecInfo {
            pattern: "ndarray:sum|dot|gemv|gemm",
            about: "the ndarray crate (matrixmultiply for GEMM), f32 and f64",
            available: ok(),
        },
        SpecInfo {
            pattern: "blas:dot|gemv|gemm[@LIB]",
            about: "a CBLAS loaded at run time (LIB: openblas, blis, refblas, mkl, atlas, or a path), f32 and f64",
            available: blas::library::Cblas::open(None)
                .map(|_| ())
                .map_err(|e| e.to_string()),
        },
        SpecInfo {
            pattern: "dylib:PATH.so:SYMBOL",
            about: "a C function T SYMBOL(const T *x, size_t n), T = float (f32) or double (f64)",
            available: ok(),
        },
    ];
    out.push(SpecInfo {
        pattern: "mpi:allreduce[:LOCAL]|binary-tree",
        about: "MPI_Allreduce(SUM) of each rank's block summed in LOCAL order; the distributed Binary Tree Reduction (--ranks P)",
        #[cfg(feature = "mpi")]
        available: if std::process::Command::new("mpirun")
            .arg("--version")
            .output()
            .is_ok()
            || crate::mpi::in_job()
        {
            ok()
        } else {
            Err("mpirun is not installed (Debian: apt-get install openmpi-bin)".into())
        },
        #[cfg(not(feature = "mpi"))]
        available: Err("this fprev was built without the 'mpi' feature".into()),
    });
    #[cfg(feature = "python")]
    out.extend(python::catalog());
    #[cfg(not(feature = "python"))]
    out.push(SpecInfo {
        pattern: "numpy: jax: torch: python:",
        about: "Python libraries through the embedded bridge",
        available: Err("this fprev was built without the 'python' feature".into()),
    });
    out
}

/// Opens the black box a spec names, e.g. `native:strided:8` or
/// `replay:tree.json`.
///
/// ```
/// use fprev::probe::{open, ProbeOptions};
/// use fprev::Format;
///
/// let opts = ProbeOptions { n: Some(8), format: Format::Bf16, ..Default::default() };
/// let probe = open("native:pairwise", &opts).unwrap();
/// assert_eq!(probe.n(), 8);
/// assert!(open("native:zigzag", &opts).is_err());
/// ```
pub fn open(spec: &str, opts: &ProbeOptions) -> Result<Box<dyn Probe>> {
    if let Some(n) = opts.n {
        crate::memory::check_reveal(n)?;
    }
    let (library, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let probe: Box<dyn Probe> = match library {
        "native" => Box::new(Native::new(rest, opts)?),
        "replay" => Box::new(ReplayProbe::open(rest, opts)?),
        "reduce" => Box::new(ReducerProbe::open(spec, rest, opts)?),
        "ndarray" => Box::new(ndarray::open(spec, rest, opts)?),
        "blas" => Box::new(blas::open(spec, rest, opts)?),
        "dylib" => Box::new(dylib::DylibProbe::open(spec, rest, opts)?),
        #[cfg(feature = "mpi")]
        "mpi" => Box::new(mpi::MpiProbe::open(spec, rest, opts)?),
        #[cfg(not(feature = "mpi"))]
        "mpi" => {
            return Err(Error::Input(format!(
                "{spec}: this fprev was built without the 'mpi' feature: rebuild with \
                 `cargo build --features mpi` (needs libopenmpi-dev)"
            )));
        }
        #[cfg(feature = "python")]
        lib if python::serves(lib) => Box::new(python::PythonProbe::open(spec, opts)?),
        _ => {
            return Err(Error::Input(format!(
                "unknown probe spec '{spec}': run `fprev probes` for the list"
            )));
        }
    };
    if probe.n() == 0 {
        return Err(Error::Input("n must be at least 1".into()));
    }
    if opts.ranks.is_some() && library != "mpi" {
        return Err(Error::Input(format!(
            "{spec}: this black box does not run on MPI ranks: --ranks applies to mpi:…"
        )));
    }
    if opts.threads.is_some() && !matches!(library, "reduce" | "blas") {
        return Err(Error::Input(format!(
            "{spec}: this black box does not take a thread count: --threads applies to \
             reduce:… and blas:…"
        )));
    }
    Ok(probe)
}

/// `n` from `-n`, or `K` of `--shape`, which must agree; [`DEFAULT_N`]
/// when neither is given.
///
/// ```
/// use fprev::probe::{resolve_n, ProbeOptions};
///
/// let opts = ProbeOptions { shape: Some([4, 1, 9]), ..Default::default() };
/// assert_eq!(resolve_n("ndarray:gemv", &opts).unwrap(), 9);
/// let clash = ProbeOptions { n: Some(8), ..opts };
/// assert!(resolve_n("ndarray:gemv", &clash).is_err());
/// ```
pub fn resolve_n(spec: &str, opts: &ProbeOptions) -> Result<usize> {
    match (opts.n, opts.shape) {
        (Some(n), Some([_, _, k])) if n != k => Err(Error::Input(format!(
            "{spec}: -n {n} disagrees with --shape's K = {k} (the reduced dimension)"
        ))),
        (Some(n), _) => Ok(n),
        (None, Some([_, _, k])) => Ok(k),
        (None, None) => Ok(DEFAULT_N),
    }
}
