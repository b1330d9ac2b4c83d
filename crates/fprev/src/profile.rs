//! What fprev knows of each library a spec's prefix names, in any build
//! (a survey read from a file may name a library this build cannot open):
//! the operations a survey asks of it, the environment variables that
//! steer it, whether its thread count can change within a process, and,
//! for a Python library, the package `pip install` names.

/// One library's profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The spec prefix that names it: `numpy`, `blas`.
    pub prefix: &'static str,
    /// The operations it offers of `sum`, `dot`, `gemv`, `gemm`.
    pub ops: &'static [&'static str],
    /// The prefixes of the environment variables it reads (`""`: any, a
    /// black box of the user's own).
    pub steering: &'static [&'static str],
    /// Whether it is a Python library the embedded bridge opens, which a
    /// survey visits.
    pub python: bool,
    /// The package `pip install` names for it, where it is a Python
    /// library (`mmasim` for `mma`); empty otherwise.
    pub package: &'static str,
    /// Whether its thread count is fixed once a process (Polars reads it
    /// when it is imported), so that one process cannot compare two.
    pub threads_fixed_at_import: bool,
}

/// The ops fprev knows, in the order a survey lists them.
pub const OPS: [&str; 4] = ["sum", "dot", "gemv", "gemm"];

const fn library(prefix: &'static str, steering: &'static [&'static str]) -> Profile {
    Profile {
        prefix,
        ops: &OPS,
        steering,
        python: false,
        package: "",
        threads_fixed_at_import: false,
    }
}

const fn python(prefix: &'static str, steering: &'static [&'static str]) -> Profile {
    Profile {
        python: true,
        package: prefix,
        ..library(prefix, steering)
    }
}

/// Every library fprev knows by its prefix.
pub static PROFILES: &[Profile] = &[
    library(
        "blas",
        &["OPENBLAS_", "GOTO_", "OMP_", "BLIS_", "MKL_", "FPREV_BLAS"],
    ),
    python("numpy", &["NPY_", "OPENBLAS_", "OMP_"]),
    python("jax", &["XLA_", "TF_"]),
    python("torch", &["OMP_", "MKL_", "CUBLAS_", "NVIDIA_"]),
    Profile {
        ops: &["sum"],
        threads_fixed_at_import: true,
        // Not studied: any variable may steer them.
        ..python("polars", &[""])
    },
    Profile {
        ops: &["sum"],
        ..python("duckdb", &[""])
    },
    Profile {
        // Matrix instructions are surveyed with `fprev survey --gpu`.
        python: false,
        package: "mmasim",
        ..python("mma", &[])
    },
    Profile {
        ops: &["sum", "dot"],
        ..library("rayon", &["RAYON_"])
    },
    Profile {
        ops: &["sum"],
        ..library("mpi", &["OMPI_MCA_", "MPIR_CVAR_"])
    },
    library("ndarray", &[]),
    library("native", &[]),
    library("reduce", &[]),
    library("replay", &[]),
];

/// The profile of the library `prefix` names; a prefix of none (a black
/// box of the user's own: `python:`, `dylib:`) offers every op and may
/// read any variable.
///
/// ```
/// use fprev::profile::profile;
///
/// assert_eq!(profile("polars").ops, ["sum"]);
/// assert!(profile("numpy").steering.contains(&"OPENBLAS_"));
/// assert_eq!(profile("dylib").steering, [""]);
/// assert_eq!(profile("mma").package, "mmasim");
/// ```
pub fn profile(prefix: &str) -> Profile {
    PROFILES
        .iter()
        .copied()
        .find(|p| p.prefix == prefix)
        .unwrap_or(library("", &[""]))
}
