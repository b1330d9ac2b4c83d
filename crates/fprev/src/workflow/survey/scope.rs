//! What a survey is asked to do: the plan (black boxes, dtypes, sizes,
//! shape, thread counts), saved in the survey's file.

use serde::{Deserialize, Serialize};

use crate::format::Format;
use crate::formula::infer::EXPLAIN_SIZES;
use crate::sizes::Sizes;

/// Sizes revealed past [`EXPLAIN_SIZES`] for sums, dots and GEMVs, where
/// libraries switch to blocked or threaded kernels; each is checked
/// against the formula found below it.
pub const LARGE_SIZES: &str = "16384";

/// Sizes at which thread counts are compared: one below and one above
/// the size where OpenBLAS starts threading its dot (10,000).
pub const THREAD_SIZES: &str = "1024,16384";

/// Calls of each random input, at most, with which a survey looks for
/// answers that vary from call to call at each entry's largest size and at
/// each thread count compared.
pub const SURVEY_RUNS: usize = 100;

/// What to survey.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scope {
    /// The black boxes, op included (`numpy:sum`, `blas:dot@blis`).
    pub black_boxes: Vec<String>,
    /// The dtypes each is surveyed in.
    #[serde(with = "formats")]
    pub dtypes: Vec<Format>,
    /// The sizes the formula is inferred from.
    #[serde(with = "sizes")]
    pub sizes: Sizes,
    /// Sizes past those revealed for sums, dots and GEMVs, each checked
    /// against the formula.
    #[serde(with = "sizes")]
    pub large: Sizes,
    /// `M` and `N` of GEMV (`M` rows) and GEMM; the reduced `K` is the size.
    /// `M` is also the elements of an `mpi:` black box's vector.
    pub shape: [usize; 2],
    /// Thread counts compared, for black boxes that take one (`blas:`);
    /// fewer than two: none compared.
    pub threads: Vec<usize>,
    /// The sizes at which they are compared.
    #[serde(with = "sizes")]
    pub thread_sizes: Sizes,
    /// Calls of each of 8 random inputs, at most, looking for answers that
    /// vary from call to call: at each entry's largest size revealed (up to
    /// the first call that differs) and at each thread count compared (0:
    /// only where a reveal fails or its replay differs, as in a layout 1
    /// survey, which has none).
    #[serde(default)]
    pub runs: usize,
    /// Whether each black box's knobs are tried ([`knobs_for`](super::knobs_for)): a
    /// process per value (absent in files made before knobs were: no).
    #[serde(default)]
    pub knobs: bool,
    /// MPI ranks the `mpi:` black boxes run on (the survey runs as rank 0
    /// of a job of that size); `None`: no MPI job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<usize>,
    /// The simulated GPU architecture whose matrix instructions the black
    /// boxes are (`fprev survey --gpu`, [`gpu::scope`](super::gpu::scope)); `None`: this
    /// machine's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// Random trials each entry's model is checked on at its largest size
    /// with one, against the black box, then told from its nearest
    /// alternatives by inputs built for each ([`Entry::check`](super::Entry::check)); 0: none
    /// beyond each reveal's own confirmation.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub check: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Default for Scope {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Scope {
            black_boxes: Vec::new(),
            dtypes: vec![Format::F32, Format::F64, Format::F16, Format::Bf16],
            sizes: EXPLAIN_SIZES.parse().expect("EXPLAIN_SIZES parses"),
            large: Sizes(Vec::new()),
            shape: [64, 64],
            threads: if cores > 1 {
                vec![1, cores]
            } else {
                Vec::new()
            },
            thread_sizes: THREAD_SIZES.parse().expect("THREAD_SIZES parses"),
            runs: SURVEY_RUNS,
            knobs: false,
            ranks: None,
            gpu: None,
            check: 0,
        }
    }
}

/// The ops a survey knows, in the order it lists them.
pub use crate::spec::OPS;

/// `Vec<Format>` as names.
mod formats {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::format::Format;

    pub fn serialize<S: Serializer>(f: &[Format], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(f.iter().map(|f| f.name()))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Format>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|n| n.parse().map_err(serde::de::Error::custom))
            .collect()
    }
}

/// [`Sizes`] as a list.
mod sizes {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::sizes::Sizes;

    pub fn serialize<S: Serializer>(v: &Sizes, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.0.iter())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Sizes, D::Error> {
        Ok(Sizes(Vec::<usize>::deserialize(d)?))
    }
}
