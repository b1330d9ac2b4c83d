//! The black box, and how a probe spec names one.
//!
//! A [`Probe`] is anything that sums `n` values in some fixed, unknown order;
//! one that multiplies (a dot product, GEMV or GEMM) is also a [`Dot`],
//! which [`Probe::as_dot`] hands out. A type that wraps a probe gets every
//! method forwarded by [`forward_probe!`](crate::forward_probe).
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
//! let tree = reveal(&mut OddsThenEvens(4), &Options::default()).unwrap().revealed().unwrap().tree;
//! assert_eq!(tree.to_text(), "((0+2)+(1+3))");
//! ```

pub(crate) mod batch;
pub mod blas;
pub mod dylib;
pub(crate) mod linalg;
mod native;
pub mod ndarray;
#[cfg(feature = "python")]
pub mod python;
mod rayon;
mod reducer;
mod replay;

pub use self::rayon::RayonProbe;
pub use batch::Batch;
pub use linalg::LinalgProbe;
pub use native::Native;
pub use reducer::ReducerProbe;
pub use replay::ReplayProbe;

use crate::error::{Error, Result};
use crate::format::{Format, Summand};

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

    /// The format of the number it returns: its inputs' by default; the
    /// accumulator's where it hands back its partial sum unrounded (a
    /// tensor core's f32 result of f16 inputs). A replay of its order
    /// rounds its root to this format before it is compared.
    fn result(&self) -> Format {
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

    /// Whether the black box is known to add in fused nodes (its formula or
    /// tree holds one), not only allowed to: insertion, which places
    /// summands on a binary tree's edges, then leaves the reveal to FPRev's
    /// engine from the start. Defaults to `false`.
    fn fuses(&self) -> bool {
        false
    }

    /// Whether its answer to an input is the same on every call by
    /// construction (fprev's own orders, replays and reducers): a reveal
    /// then asks no input again to watch for answers that change from call
    /// to call. Defaults to `false`.
    fn deterministic(&self) -> bool {
        false
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

    /// The order the black box's own description gives output `row`, and
    /// whose description it is (`Open MPI's ring allreduce`), where one is
    /// written down: a reveal then says whether the black box keeps to
    /// it. Defaults to `None`.
    fn described(&self, row: usize) -> Option<(String, crate::formula::Formula)> {
        let _ = row;
        None
    }

    /// Sums every row of `inputs` (`out.len()` rows of `n` values, each
    /// exactly representable in [`Probe::format`]) into `out`.
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()>;

    /// The black box as a [`Dot`], when each summand is a product
    /// `x_i * y_i` that it forms itself (a dot product, GEMV or GEMM): the
    /// arithmetic reveal then asks how the products are rounded, and
    /// [`Probe::sum`] takes `y` as ones. Defaults to `None`: it sums its
    /// inputs.
    fn as_dot(&mut self) -> Option<&mut dyn Dot> {
        None
    }

    /// The formats of the two operands of each summand `x_i * y_i`, where
    /// the black box takes any value that is a product of one of each and
    /// forms it exactly (a tensor core's A and B): [`Probe::sum`] and
    /// [`Dot::dot`] then take such products, which it splits into operands
    /// itself. Masked inputs reach the accumulator's range so where
    /// [`Probe::format`] alone cannot (fp8 into f32: docs/ALGORITHMS.md,
    /// Masked inputs). Defaults to `None`: values of [`Probe::format`] only.
    fn operands(&self) -> Option<(Format, Format)> {
        None
    }

    /// Sums every input of `batch` into `out`; the engine hands at most
    /// [`Probe::max_batch`] inputs at a time. The default writes the inputs
    /// out for [`Probe::sum`]; override it when edits to a buffer the probe
    /// keeps are cheaper than whole inputs (see [`Batch::continues`]).
    fn sum_batch(&mut self, batch: &Batch, out: &mut [f64]) -> Result<()> {
        batch::sum_batch(self, batch, out)
    }
}

/// What one input of `probe` can carry: values of its format or, where
/// those are too narrow to carry a rounding (fp8) and it multiplies
/// operands fprev chooses ([`Probe::operands`]), their products.
pub fn summand(probe: &dyn Probe) -> Summand {
    let format = probe.format();
    match probe.operands() {
        Some((a, b)) if format.precision() < 8 => Summand::Product(a, b),
        _ => Summand::Value(format),
    }
}

/// The format of `y` in a product `x * y` that `probe` forms: its
/// second operand's ([`Probe::operands`]), else its input format.
pub fn second_operand(probe: &dyn Probe) -> Format {
    probe.operands().map_or(probe.format(), |(_, b)| b)
}

/// A black box that multiplies: each summand is a product `x_i * y_i` it
/// forms itself (a dot product, GEMV or GEMM). [`Probe::as_dot`] hands it
/// out.
pub trait Dot: Probe {
    /// Sums `x_i * y_i` over every row `x` of `rows` (`out.len()` rows of
    /// `n`) with the one vector `y` of `n` (a GEMV's vector, column 0 of a
    /// GEMM's `B`).
    fn dot(&mut self, rows: &[f64], y: &[f64], out: &mut [f64]) -> Result<()>;
}

/// Implements [`Probe`] for a type that holds another probe, forwarding
/// every method to it, so that no wrapper forgets one.
///
/// `forward_probe!([GENERICS] TYPE, |w| INNER)` names the inner probe as an
/// expression of `w`, the wrapper; its multiplying side is the inner
/// probe's own. `forward_probe!([GENERICS] TYPE, |w| INNER, through CALL)`
/// makes every call of the black box (`sum`, `sum_batch`, `dot`) through
/// the wrapper's method `fn CALL<T>(&mut self, f: impl FnOnce(&mut Inner)
/// -> Result<T>) -> Result<T>` (a watchdog, an error kept aside), and
/// implements [`Dot`] for the wrapper too: [`Probe::as_dot`] hands it out
/// where the inner probe multiplies (its `dot` refuses, as an input error,
/// where it does not).
///
/// ```
/// use fprev::probe::{Probe, ProbeOptions};
///
/// /// Counts the calls of the black box it holds.
/// struct Counted<P> {
///     inner: P,
///     calls: usize,
/// }
///
/// impl<P: Probe> Counted<P> {
///     fn call<T>(&mut self, f: impl FnOnce(&mut P) -> fprev::Result<T>) -> fprev::Result<T> {
///         self.calls += 1;
///         f(&mut self.inner)
///     }
/// }
///
/// fprev::forward_probe!([P: Probe] Counted<P>, |w| w.inner, through call);
///
/// let opts = ProbeOptions { n: Some(8), ..Default::default() };
/// let mut counted = Counted { inner: fprev::open("ndarray:dot", &opts).unwrap(), calls: 0 };
/// let mut out = [0.0];
/// counted.as_dot().unwrap().dot(&[1.0; 8], &[2.0; 8], &mut out).unwrap();
/// counted.sum(&[1.0; 8], &mut out).unwrap();
/// assert_eq!((out[0], counted.calls), (8.0, 2));
/// ```
#[macro_export]
macro_rules! forward_probe {
    ([$($generics:tt)*] $wrapper:ty, |$w:ident| $inner:expr) => {
        impl<$($generics)*> $crate::probe::Probe for $wrapper {
            $crate::forward_probe!(@questions |$w| $inner);
            fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> $crate::Result<()> {
                let $w = self;
                $crate::probe::Probe::sum(&mut $inner, inputs, out)
            }
            fn sum_batch(
                &mut self,
                batch: &$crate::probe::Batch,
                out: &mut [f64],
            ) -> $crate::Result<()> {
                let $w = self;
                $crate::probe::Probe::sum_batch(&mut $inner, batch, out)
            }
            fn as_dot(&mut self) -> Option<&mut dyn $crate::probe::Dot> {
                let $w = self;
                $crate::probe::Probe::as_dot(&mut $inner)
            }
        }
    };
    ([$($generics:tt)*] $wrapper:ty, |$w:ident| $inner:expr, through $call:ident) => {
        impl<$($generics)*> $crate::probe::Probe for $wrapper {
            $crate::forward_probe!(@questions |$w| $inner);
            fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> $crate::Result<()> {
                self.$call(|p| $crate::probe::Probe::sum(p, inputs, out))
            }
            fn sum_batch(
                &mut self,
                batch: &$crate::probe::Batch,
                out: &mut [f64],
            ) -> $crate::Result<()> {
                self.$call(|p| $crate::probe::Probe::sum_batch(p, batch, out))
            }
            fn as_dot(&mut self) -> Option<&mut dyn $crate::probe::Dot> {
                let multiplies = {
                    let $w = &mut *self;
                    $crate::probe::Probe::as_dot(&mut $inner).is_some()
                };
                if multiplies { Some(self) } else { None }
            }
        }
        impl<$($generics)*> $crate::probe::Dot for $wrapper {
            fn dot(&mut self, rows: &[f64], y: &[f64], out: &mut [f64]) -> $crate::Result<()> {
                self.$call(|p| match $crate::probe::Probe::as_dot(p) {
                    Some(d) => $crate::probe::Dot::dot(d, rows, y, out),
                    // Reached only by calling `dot` on the wrapper itself:
                    // `as_dot` hands it out where the inner probe multiplies.
                    None => Err($crate::error::Error::Input(
                        "this black box sums its inputs; it does not multiply them".into(),
                    )),
                })
            }
        }
    };
    (@questions |$w:ident| $inner:expr) => {
        fn n(&self) -> usize {
            let $w = self;
            $crate::probe::Probe::n(&$inner)
        }
        fn format(&self) -> $crate::Format {
            let $w = self;
            $crate::probe::Probe::format(&$inner)
        }
        fn accumulator(&self) -> $crate::Format {
            let $w = self;
            $crate::probe::Probe::accumulator(&$inner)
        }
        fn result(&self) -> $crate::Format {
            let $w = self;
            $crate::probe::Probe::result(&$inner)
        }
        fn may_fuse(&self) -> bool {
            let $w = self;
            $crate::probe::Probe::may_fuse(&$inner)
        }
        fn fuses(&self) -> bool {
            let $w = self;
            $crate::probe::Probe::fuses(&$inner)
        }
        fn deterministic(&self) -> bool {
            let $w = self;
            $crate::probe::Probe::deterministic(&$inner)
        }
        fn operands(&self) -> Option<($crate::Format, $crate::Format)> {
            let $w = self;
            $crate::probe::Probe::operands(&$inner)
        }
        fn max_batch(&self) -> usize {
            let $w = self;
            $crate::probe::Probe::max_batch(&$inner)
        }
        fn about(&self) -> Option<String> {
            let $w = self;
            $crate::probe::Probe::about(&$inner)
        }
        fn described(&self, row: usize) -> Option<(String, $crate::formula::Formula)> {
            let $w = self;
            $crate::probe::Probe::described(&$inner, row)
        }
    };
}

forward_probe!([P: Probe + ?Sized] Box<P>, |b| (**b));

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
    /// The output column of a GEMM whose order is revealed (every column
    /// of `B` holds the same weights; where the column falls in the
    /// kernel's tiles may change its order); `None` is column 0.
    pub column: Option<usize>,
    /// Where the input array a black box of the Python bridge (`numpy:`,
    /// `python:`, …) gets starts: this far past a 64-byte boundary (a
    /// library may sum an unaligned array in another order); `None`
    /// where NumPy's own allocation puts it (aligned to its values).
    pub offset: Option<Offset>,
}

/// Where an input array starts past a 64-byte boundary: `1B` (bytes) or
/// `1` (elements).
///
/// ```
/// use fprev::Format;
/// use fprev::probe::Offset;
///
/// let byte: Offset = "1B".parse().unwrap();
/// assert_eq!(byte.bytes(Format::F32), 1);
/// assert_eq!("3".parse::<Offset>().unwrap().bytes(Format::F64), 24);
/// assert_eq!(byte.to_string(), "1B");
/// assert!("5000B".parse::<Offset>().is_err());
/// assert!("-1".parse::<Offset>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Offset {
    /// Bytes.
    Bytes(usize),
    /// Elements of the input's format.
    Elements(usize),
}

/// The farthest an [`Offset`] goes, in bytes or elements: a page.
pub const MAX_OFFSET: usize = 4096;

impl Offset {
    /// The offset in bytes, for values of `format`.
    pub fn bytes(self, format: Format) -> usize {
        let size = match format {
            Format::F64 => 8,
            Format::F32 | Format::Tf32 | Format::E8m13 => 4,
            Format::F16 | Format::Bf16 => 2,
            Format::E4m3 | Format::E5m2 => 1,
            // Not an input's format; its 80 bits are stored in 16.
            Format::X87 => 16,
        };
        match self {
            Offset::Bytes(b) => b,
            Offset::Elements(e) => e * size,
        }
    }
}

impl std::str::FromStr for Offset {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        let (count, bytes) = match t.strip_suffix(['B', 'b']) {
            Some(count) => (count, true),
            None => (t, false),
        };
        match count.parse::<usize>() {
            Ok(c) if c <= MAX_OFFSET && bytes => Ok(Offset::Bytes(c)),
            Ok(c) if c <= MAX_OFFSET => Ok(Offset::Elements(c)),
            _ => Err(Error::Input(format!(
                "'{s}' is not an offset: give bytes (1B, 4B) or elements (1), from 0 to \
                 {MAX_OFFSET}"
            ))),
        }
    }
}

impl std::fmt::Display for Offset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Offset::Bytes(b) => write!(f, "{b}B"),
            Offset::Elements(e) => write!(f, "{e}"),
        }
    }
}

impl ProbeOptions {
    /// The same options at `n` summands: a GEMV or GEMM keeps its `M` and
    /// `N`, and `K` is `n`.
    ///
    /// ```
    /// use fprev::probe::ProbeOptions;
    ///
    /// let gemm = ProbeOptions { shape: Some([4, 8, 16]), ..Default::default() };
    /// assert_eq!(gemm.at(32).shape, Some([4, 8, 32]));
    /// assert_eq!(gemm.at(32).n, Some(32));
    /// ```
    pub fn at(&self, n: usize) -> ProbeOptions {
        ProbeOptions {
            n: Some(n),
            shape: self.shape.map(|[m, cols, _]| [m, cols, n]),
            ..self.clone()
        }
    }

    /// These options on the input an order was `found` on: its offset and
    /// its shape, K taking this size (emitted code is checked so).
    ///
    /// ```
    /// use fprev::probe::ProbeOptions;
    ///
    /// let found = ProbeOptions { shape: Some([16, 1, 1]), ..Default::default() };
    /// let check = ProbeOptions { n: Some(4099), ..Default::default() };
    /// assert_eq!(check.where_found(&found).shape, Some([16, 1, 4099]));
    /// ```
    pub fn where_found(&self, found: &ProbeOptions) -> ProbeOptions {
        let on = ProbeOptions {
            offset: found.offset,
            shape: found.shape,
            ..self.clone()
        };
        match self.n {
            Some(n) => on.at(n),
            None => on,
        }
    }
}

/// Summand count used when none is given.
pub const DEFAULT_N: usize = 32;

/// Elements of the vectors an `mpi:` black box's call combines when no
/// shape gives them: each element is one input of a batch.
pub const MPI_ELEMENTS: usize = 64;

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
            "{spec}: n = {n} disagrees with the shape's K = {k} (the reduced dimension)"
        ))),
        (Some(n), _) => Ok(n),
        (None, Some([_, _, k])) => Ok(k),
        (None, None) => Ok(DEFAULT_N),
    }
}
