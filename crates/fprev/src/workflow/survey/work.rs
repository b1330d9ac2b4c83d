//! The work a survey's plan makes: each black box in the dtypes its
//! library has, with its probe options; the check that every black box
//! opens before any is surveyed; and whether a black box's thread count
//! can be set.

use super::{Scope, Survey};
use crate::error::{Kind, Result};
use crate::format::Format;
use crate::probe::ProbeOptions;
use crate::spec::Spec;

/// Opens each black box of a survey ([`OpenSpec`](crate::workflow::OpenSpec)).
pub type Opener = crate::workflow::OpenSpec<'static>;

impl Survey {
    /// The `(black box, dtype)` pairs of the plan, in order: each black box
    /// in the plan's dtypes it supports ([`Spec::supports`]). Fails on a
    /// black box no family names.
    pub fn work(&self) -> Result<Vec<(Spec, Format)>> {
        let mut out = Vec::new();
        for spec in &self.scope.black_boxes {
            let spec: Spec = spec.parse()?;
            for &dtype in self.scope.dtypes.iter().filter(|&&d| spec.supports(d)) {
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
        if self.scope.gpu.is_some() {
            return Ok(());
        }
        let Some(&n) = self.scope.sizes.0.iter().min() else {
            return Ok(());
        };
        for (spec, dtype) in self.work()?.iter().filter(|(s, _)| specs.contains(s)) {
            let opts = options_for(spec, *dtype, &self.scope);
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
pub(super) fn options_for(spec: &Spec, dtype: Format, plan: &Scope) -> ProbeOptions {
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
        let s = Survey::new(Scope {
            black_boxes,
            dtypes: vec![Format::F32, Format::Bf16, Format::E4m3],
            ..Scope::default()
        });
        let work = s.work().unwrap();
        let work: Vec<String> = work.iter().map(|(b, d)| format!("{b} {d}")).collect();
        assert_eq!(work, expected);
    }

    #[test]
    fn a_plan_naming_no_family_is_refused() {
        let s = Survey::new(Scope {
            black_boxes: vec!["nope:sum".into()],
            ..Scope::default()
        });
        assert!(s.work().is_err());
    }
}
