//! What a survey is asked to do: the plan (black boxes, dtypes, sizes,
//! shape, thread counts), the work it makes (each black box in the dtypes
//! its library has), the check that every black box opens before any is
//! surveyed, and whether a black box's thread count can be set.

use serde::{Deserialize, Serialize};

use super::Opener;
use super::Survey;
#[cfg(doc)]
use super::{Entry, gpu, knobs_for};
use crate::error::{Kind, Result};
use crate::format::Format;
use crate::formula::infer::EXPLAIN_SIZES;
use crate::probe::ProbeOptions;
use crate::sizes::Sizes;
use crate::spec::Spec;

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
pub struct Plan {
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
    /// Whether each black box's knobs are tried ([`knobs_for`]): a
    /// process per value (absent in files made before knobs were: no).
    #[serde(default)]
    pub knobs: bool,
    /// MPI ranks the `mpi:` black boxes run on (the survey runs as rank 0
    /// of a job of that size); `None`: no MPI job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<usize>,
    /// The simulated GPU architecture whose matrix instructions the black
    /// boxes are (`fprev survey --gpu`, [`gpu::plan`]); `None`: this
    /// machine's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// Random trials each entry's model is checked on at its largest size
    /// with one, against the black box, then told from its nearest
    /// alternatives by inputs built for each ([`Entry::check`]); 0: none
    /// beyond each reveal's own confirmation.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub check: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Default for Plan {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Plan {
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

impl Survey {
    /// The `(black box, dtype)` pairs of the plan, in order: each black box
    /// in the plan's dtypes it supports ([`Spec::supports`]). Fails on a
    /// black box no family names.
    pub fn work(&self) -> Result<Vec<(Spec, Format)>> {
        let mut out = Vec::new();
        for spec in &self.plan.black_boxes {
            let spec: Spec = spec.parse()?;
            for &dtype in self.plan.dtypes.iter().filter(|&&d| spec.supports(d)) {
                out.push((spec.clone(), dtype));
            }
        }
        Ok(out)
    }

    /// Opens each black box of `specs` in each dtype of the plan it is
    /// surveyed in, at the plan's smallest size, and returns the first
    /// usage error ([`Kind::Input`]: a malformed spec, a missing file): every entry of
    /// it would fail with that error, and no rerun could mend it, so it is
    /// a usage error found before surveying. Other errors, and every error
    /// of a GPU survey's instructions, are left to the survey, which
    /// records them.
    pub fn preflight(&self, specs: &[Spec], open: &mut Opener) -> Result<()> {
        // A GPU survey's instructions are fprev's choice from the
        // simulator's own list: one it cannot give inputs (AMD's FNUZ fp8)
        // is an entry that says so, not a usage error.
        if self.plan.gpu.is_some() {
            return Ok(());
        }
        let Some(&n) = self.plan.sizes.0.iter().min() else {
            return Ok(());
        };
        for (spec, dtype) in self.work()?.iter().filter(|(s, _)| specs.contains(s)) {
            let opts = options_for(spec, *dtype, &self.plan);
            // As the sweep opens it: K of a GEMV or GEMM is the size.
            let opts = ProbeOptions {
                n: Some(n),
                shape: opts.shape.map(|[m, cols, _]| [m, cols, n]),
                ..opts
            };
            match open(spec, &opts) {
                Err(e) if e.kind() == Kind::Input => return Err(e),
                _ => continue,
            }
        }
        Ok(())
    }
}

/// Whether the survey compares thread counts of `spec`: one that takes
/// a thread count ([`Spec::takes_threads`]) and does not fix it itself
/// (`rayon:sum:4`) and, a BLAS, only where fprev can set the library's
/// count. Polars fixes its count when it is imported, once a process, so a
/// survey cannot compare two.
pub(super) fn threads_settable(spec: &Spec) -> bool {
    use crate::probe::blas::library::Cblas;
    match spec.prefix() {
        _ if !spec.takes_threads() || spec.argument().is_some() => false,
        prefix if crate::spec::profile(prefix).threads_fixed_at_import => false,
        "blas" => Cblas::open(spec.library()).is_ok_and(|c| c.controls_threads()),
        _ => true,
    }
}

/// The probe options of `spec` in `dtype`: a GEMV or GEMM gets the plan's
/// `M` and `N` (the sweep sets `K`), an `mpi:` black box the plan's ranks
/// and `M` elements in its vector (its first revealed).
pub(super) fn options_for(spec: &Spec, dtype: Format, plan: &Plan) -> ProbeOptions {
    let [m, cols] = plan.shape;
    ProbeOptions {
        format: dtype,
        shape: match spec.op() {
            Some("gemv") => Some([m, 1, 1]),
            Some("gemm") => Some([m, cols, 1]),
            _ if spec.runs_on_ranks() => Some([m, 1, 1]),
            _ => None,
        },
        ranks: plan.ranks.filter(|_| spec.runs_on_ranks()),
        ..ProbeOptions::default()
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_black_box_is_surveyed_in_the_dtypes_its_library_has() {
        let mut black_boxes = vec!["blas:dot@blis".to_string(), "dylib:x.so:f".into()];
        let mut expected = vec![
            "blas:dot@blis f32",
            "dylib:x.so:f f32",
            "dylib:x.so:f bf16",
            "dylib:x.so:f e4m3",
        ];
        if cfg!(feature = "python") {
            black_boxes.insert(1, "numpy:sum".into());
            expected.splice(1..1, ["numpy:sum f32", "numpy:sum bf16"]);
        }
        let s = Survey::new(Plan {
            black_boxes,
            dtypes: vec![Format::F32, Format::Bf16, Format::E4m3],
            ..Plan::default()
        });
        let work = s.work().unwrap();
        let work: Vec<String> = work.iter().map(|(b, d)| format!("{b} {d}")).collect();
        assert_eq!(work, expected);
    }

    #[test]
    fn a_plan_naming_no_family_is_refused() {
        let s = Survey::new(Plan {
            black_boxes: vec!["nope:sum".into()],
            ..Plan::default()
        });
        assert!(s.work().is_err());
    }
}
