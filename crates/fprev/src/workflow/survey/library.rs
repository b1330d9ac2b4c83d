//! The libraries a survey can visit on this machine: the Python ones the
//! embedded bridge reaches (NumPy, JAX, PyTorch, Polars, DuckDB), the BLAS
//! `blas:` loads and each other BLAS found at run time, ndarray, Rayon; each
//! with its black boxes, and what it says of itself.

use std::collections::BTreeMap;

use crate::error::{Error, Param, Remedy, Result};

/// A library a survey can visit: its label (`numpy`, `blas@blis`), the
/// specs of its ops, and what it says of itself.
#[derive(Clone, Debug)]
pub struct Library {
    /// `numpy`, `jax`, `torch`, `polars`, `duckdb`, `ndarray`, `rayon`,
    /// `blas` (the BLAS `blas:` loads), `blas@NAME` (another one found).
    pub label: String,
    /// Its black boxes, one per op it offers.
    pub black_boxes: Vec<String>,
    /// What it said of itself (version, build).
    pub facts: BTreeMap<String, String>,
}

/// The libraries on this machine that `only` selects (every one when
/// empty; see [`selects`]), each with its black boxes of `ops`; the ones
/// not found are returned apart, with why. MPI (`mpi:allreduce` and the
/// Binary Tree Reduction, `mpi:binary-tree`) is among them when the survey
/// runs on `ranks` MPI ranks. Naming a library in `only` that is not here
/// is an error that says what is.
pub fn libraries(ops: &[&str], only: &[String], ranks: Option<usize>) -> Result<Libraries> {
    let wanted = |label: &str| only.is_empty() || only.iter().any(|o| selects(o, label));
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for family in crate::spec::FAMILIES {
        let profile = crate::spec::profile(family.prefix);
        if !profile.python || !wanted(family.prefix) {
            continue;
        }
        match family.available() {
            Ok(()) => found.push(Library {
                label: family.prefix.to_string(),
                black_boxes: specs(family.prefix, profile.ops, "", ops),
                facts: facts_of(family.prefix),
            }),
            Err(why) => missing.push((family.prefix.to_string(), why)),
        }
    }
    blas_libraries(ops, &mut found, &mut missing);
    found.push(Library {
        label: "ndarray".into(),
        black_boxes: specs("ndarray", crate::spec::profile("ndarray").ops, "", ops),
        facts: facts_of("ndarray"),
    });
    // Rayon's global pool, one thread a core: on two cores or more its sum
    // regroups from call to call.
    found.push(Library {
        label: "rayon".into(),
        black_boxes: specs("rayon", crate::spec::profile("rayon").ops, "", ops),
        facts: facts_of("rayon"),
    });
    let mpi = "mpi:allreduce"
        .parse::<crate::spec::Spec>()
        .map_err(|e| e.to_string())
        .and_then(|s| s.family().available());
    // Available, but not surveyed: no number of ranks was given.
    let needs_ranks = mpi.is_ok() && ranks.is_none();
    match (mpi, ranks) {
        (Ok(()), Some(_)) => found.push(Library {
            label: "mpi".into(),
            black_boxes: ["mpi:allreduce", "mpi:binary-tree"]
                .into_iter()
                .filter(|_| ops.contains(&"sum"))
                .map(str::to_string)
                .collect(),
            facts: facts_of("mpi"),
        }),
        (Ok(()), None) => missing.push((
            "mpi".into(),
            "MPI_Allreduce is surveyed on a number of ranks given".into(),
        )),
        (Err(why), _) => missing.push(("mpi".into(), why)),
    }
    let here: Vec<String> = found.iter().map(|l| l.label.clone()).collect();
    found.retain(|l| wanted(&l.label));
    missing.retain(|(label, _)| wanted(label));
    for o in only {
        if found.iter().any(|l| selects(o, &l.label)) {
            continue;
        }
        return Err(match missing.iter().find(|(label, _)| label == o) {
            Some((_, why)) if o == "mpi" && needs_ranks => {
                Error::Input(format!("library {o}: not surveyed: {why}"))
                    .advise(Remedy::Give(Param::Ranks, &["P"]))
            }
            Some((_, why)) => Error::Input(format!("library {o}: not usable here: {why}")),
            None => Error::Input(format!(
                "library {o}: none such here (name numpy, jax, torch, polars, duckdb, \
                 ndarray, rayon, mpi, or a BLAS found: {})",
                here.iter()
                    .filter(|l| l.starts_with("blas"))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        });
    }
    Ok(Libraries { found, missing })
}

/// What [`libraries`] found.
#[derive(Clone, Debug)]
pub struct Libraries {
    /// The libraries found.
    pub found: Vec<Library>,
    /// Those not usable here: `(label, what to install)`.
    pub missing: Vec<(String, String)>,
}

/// Whether the selection `only` (`numpy`, `blas@blis`) names the library
/// labelled `label`; `blas` names every BLAS.
pub fn selects(only: &str, label: &str) -> bool {
    only == label || (only == "blas" && label.starts_with("blas@"))
}

/// `PREFIX:OP SUFFIX` for each op of `offers` that `ops` asks for.
fn specs(prefix: &str, offers: &[&str], suffix: &str, ops: &[&str]) -> Vec<String> {
    offers
        .iter()
        .filter(|op| ops.contains(op))
        .map(|op| format!("{prefix}:{op}{suffix}"))
        .collect()
}

/// What the library labelled `label` says of itself (version, build,
/// file); empty for a library that says nothing.
pub fn facts_of(label: &str) -> BTreeMap<String, String> {
    use crate::probe::blas::library::Cblas;
    let blas = |c: Cblas| blas_facts(&c);
    match label.split_once('@') {
        _ if label == "blas" => Cblas::open(None).map(blas).unwrap_or_default(),
        Some(("blas", lib)) => Cblas::open(Some(lib)).map(blas).unwrap_or_default(),
        _ if label == "ndarray" => BTreeMap::from([(
            "built into".to_string(),
            format!("fprev {}", env!("CARGO_PKG_VERSION")),
        )]),
        _ if label == "rayon" => BTreeMap::from([
            (
                "built into".to_string(),
                format!("fprev {}", env!("CARGO_PKG_VERSION")),
            ),
            (
                "threads".to_string(),
                rayon::current_num_threads().to_string(),
            ),
        ]),
        #[cfg(feature = "mpi")]
        _ if label == "mpi" => crate::mpi::Implementation::facts(),
        #[cfg(feature = "python")]
        // A Python package's version decides its bits (MMA-Sim's, every
        // simulated instruction's).
        _ if !crate::spec::profile(label).package.is_empty() => crate::probe::python::facts(label)
            .unwrap_or_else(|e| BTreeMap::from([("facts".to_string(), format!("unknown: {e}"))])),
        _ => BTreeMap::new(),
    }
}

/// What a loaded BLAS says of itself: its file, and its version where it
/// has one.
fn blas_facts(c: &crate::probe::blas::library::Cblas) -> BTreeMap<String, String> {
    let mut f = BTreeMap::from([("path".to_string(), c.path.display().to_string())]);
    if let Some(v) = &c.version {
        f.insert("version".to_string(), v.clone());
    }
    f
}

/// The BLAS `blas:OP` loads (labelled `blas`), then every other known one
/// found, as `blas@NAME`.
fn blas_libraries(ops: &[&str], found: &mut Vec<Library>, missing: &mut Vec<(String, String)>) {
    use crate::probe::blas::library::{Cblas, KNOWN};
    let offers = ["dot", "gemv", "gemm"];
    let default = match Cblas::open(None) {
        Ok(c) => {
            found.push(Library {
                label: "blas".into(),
                black_boxes: specs("blas", &offers, "", ops),
                facts: blas_facts(&c),
            });
            Some(c.path)
        }
        Err(e) => {
            missing.push(("blas".into(), e.to_string()));
            None
        }
    };
    for known in KNOWN {
        match Cblas::open(Some(known.name)) {
            Ok(c) if Some(&c.path) != default.as_ref() => found.push(Library {
                label: format!("blas@{}", known.name),
                black_boxes: specs("blas", &offers, &format!("@{}", known.name), ops),
                facts: blas_facts(&c),
            }),
            Ok(_) => {}
            Err(e) => missing.push((format!("blas@{}", known.name), e.to_string())),
        }
    }
}
