//! What a survey is asked to do: the plan (black boxes, dtypes, sizes,
//! shape, thread counts), the work it makes (each black box in the dtypes
//! its library has), the check that every black box opens before any is
//! surveyed, and what a spec says of itself (its op, its library, whether
//! it takes a thread count).

use serde::{Deserialize, Serialize};

use super::Survey;
use super::library::PYTHON_LIBRARIES;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::formula::infer::EXPLAIN_SIZES;
use crate::probe::ProbeOptions;
use crate::sweep::{Opener, Sizes};

/// Sizes revealed past [`EXPLAIN_SIZES`] for sums, dots and GEMVs, where
/// libraries switch to blocked or threaded kernels; each is checked
/// against the formula found below it.
pub const LARGE_SIZES: &str = "16384";

/// Sizes at which thread counts are compared: one below and one above
/// the size where OpenBLAS starts threading its dot (10,000).
pub const THREAD_SIZES: &str = "1024,16384";

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
    pub shape: [usize; 2],
    /// Thread counts compared, for black boxes that take one (`blas:`);
    /// fewer than two: none compared.
    pub threads: Vec<usize>,
    /// The sizes at which they are compared.
    #[serde(with = "sizes")]
    pub thread_sizes: Sizes,
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
        }
    }
}

/// The ops a survey knows, in the order it lists them.
pub const OPS: [&str; 4] = ["sum", "dot", "gemv", "gemm"];

impl Survey {
    /// The `(black box, dtype)` pairs of the plan, in order: each black box
    /// in the plan's dtypes it supports ([`supports`]).
    pub fn work(&self) -> Vec<(String, Format)> {
        let mut out = Vec::new();
        for spec in &self.plan.black_boxes {
            for &dtype in self.plan.dtypes.iter().filter(|&&d| supports(spec, d)) {
                out.push((spec.clone(), dtype));
            }
        }
        out
    }

    /// Opens each black box of `specs` in each dtype of the plan it is
    /// surveyed in, at the plan's smallest size, and returns the first
    /// [`Error::Input`] (a malformed spec, a missing file): every entry of
    /// it would fail with that error, and no rerun could mend it, so it is
    /// a usage error found before surveying. Other errors are left to the
    /// survey, which records them.
    pub fn preflight(&self, specs: &[String], open: &mut Opener) -> Result<()> {
        let Some(&n) = self.plan.sizes.0.iter().min() else {
            return Ok(());
        };
        for (spec, dtype) in self.work().iter().filter(|(s, _)| specs.contains(s)) {
            let opts = options_for(spec, *dtype, &self.plan);
            // As the sweep opens it: K of a GEMV or GEMM is the size.
            let opts = ProbeOptions {
                n: Some(n),
                shape: opts.shape.map(|[m, cols, _]| [m, cols, n]),
                ..opts
            };
            match open(spec, &opts) {
                Err(e @ Error::Input(_)) => return Err(e),
                _ => continue,
            }
        }
        Ok(())
    }
}

/// The library a black box belongs to, as surveys label it: `numpy` of
/// `numpy:sum`, `blas@blis` of `blas:dot@blis`, `blas` of `blas:dot`.
pub fn label_of(spec: &str) -> String {
    let (family, rest) = spec.split_once(':').unwrap_or((spec, ""));
    match rest.split_once('@') {
        Some((_, lib)) if family == "blas" => format!("blas@{lib}"),
        _ => family.to_string(),
    }
}

/// The op of a spec: `gemv` of `blas:gemv@blis`.
pub fn op_of(spec: &str) -> &str {
    let rest = spec.split_once(':').map_or(spec, |(_, r)| r);
    rest.split([':', '@']).next().unwrap_or(rest)
}

/// Whether a survey asks `spec` in `dtype`: a CBLAS and ndarray know f32
/// and f64 only; NumPy, JAX and PyTorch also f16 and bf16 (the 8-bit
/// formats are no dtype of their sums); a black box of one's own, any.
pub fn supports(spec: &str, dtype: Format) -> bool {
    let wide = [Format::F64, Format::F32];
    match spec.split(':').next().unwrap_or(spec) {
        "blas" | "ndarray" => wide.contains(&dtype),
        family if PYTHON_LIBRARIES.contains(&family) => {
            wide.contains(&dtype) || [Format::F16, Format::Bf16].contains(&dtype)
        }
        _ => true,
    }
}

/// Whether the black box takes a thread count (`--threads`): a BLAS whose
/// count fprev can set, or fprev's own reducers.
pub(super) fn takes_threads(spec: &str) -> bool {
    use crate::probe::blas::library::Cblas;
    let label = label_of(spec);
    match label.split_once('@') {
        _ if label == "blas" => Cblas::open(None).is_ok_and(|c| c.controls_threads()),
        Some(("blas", lib)) => Cblas::open(Some(lib)).is_ok_and(|c| c.controls_threads()),
        _ => label == "reduce",
    }
}

/// The probe options of `spec` in `dtype`: a GEMV or GEMM gets the plan's
/// `M` and `N` (the sweep sets `K`).
pub(super) fn options_for(spec: &str, dtype: Format, plan: &Plan) -> ProbeOptions {
    let [m, cols] = plan.shape;
    ProbeOptions {
        format: dtype,
        shape: match op_of(spec) {
            "gemv" => Some([m, 1, 1]),
            "gemm" => Some([m, cols, 1]),
            _ => None,
        },
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

    use crate::sweep::Sizes;

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
        let s = Survey::new(Plan {
            black_boxes: vec![
                "blas:dot@blis".into(),
                "numpy:sum".into(),
                "dylib:x.so:f".into(),
            ],
            dtypes: vec![Format::F32, Format::Bf16, Format::E4m3],
            ..Plan::default()
        });
        let work: Vec<String> = s.work().iter().map(|(b, d)| format!("{b} {d}")).collect();
        assert_eq!(
            work,
            [
                "blas:dot@blis f32",
                "numpy:sum f32",
                "numpy:sum bf16",
                "dylib:x.so:f f32",
                "dylib:x.so:f bf16",
                "dylib:x.so:f e4m3"
            ]
        );
    }

    #[test]
    fn labels_and_ops_of_specs() {
        assert_eq!(label_of("blas:gemv@blis"), "blas@blis");
        assert_eq!(label_of("blas:gemv"), "blas");
        assert_eq!(label_of("numpy:sum"), "numpy");
        assert_eq!(op_of("blas:gemv@blis"), "gemv");
        assert_eq!(op_of("torch:gemm:cuda"), "gemm");
    }
}
