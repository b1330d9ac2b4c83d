//! `MPI_Allreduce`'s algorithm, chosen instead of left to the library:
//! `mpi:allreduce[:LOCAL]@ALGORITHM` names one of the linked
//! implementation's ([`Implementation`]), which it reads from the
//! environment as the job starts. Open MPI's are its tuned component's
//! (`coll_tuned_allreduce_algorithm`); MPICH 4.0's are its
//! `MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM` values, spelled with hyphens. A
//! name both know (`recursive-doubling`; `rabenseifner`, which MPICH calls
//! `reduce-scatter-allgather`) is the same algorithm in either.
//!
//! ```
//! use fprev::mpi::Implementation;
//! use fprev::mpi::algorithm::{Algorithm, split_for};
//!
//! let open_mpi = Implementation::OpenMpi;
//! let (rest, algorithm) = split_for("allreduce:pairwise@ring", open_mpi).unwrap();
//! assert_eq!((rest, algorithm), ("allreduce:pairwise", Some(Algorithm::Ring)));
//! assert_eq!(
//!     Algorithm::Ring.env_for(open_mpi)[1],
//!     ("OMPI_MCA_coll_tuned_allreduce_algorithm", "4".into())
//! );
//! let mpich = Implementation::Mpich;
//! let (_, rsa) = split_for("allreduce@rabenseifner", mpich).unwrap();
//! assert_eq!(rsa, Some(Algorithm::Rabenseifner));
//! assert_eq!(
//!     Algorithm::Rabenseifner.env_for(mpich)[1],
//!     ("MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", "reduce_scatter_allgather".into())
//! );
//! assert!(split_for("allreduce@ring", mpich).is_err());
//! assert!(split_for("allreduce@fastest", open_mpi).is_err());
//! ```

use std::fmt;

use super::implementation::Implementation;
use crate::error::{Error, Result};

/// An allreduce algorithm of Open MPI's or MPICH's (or both's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// A linear reduce to rank 0, then a broadcast.
    Linear,
    /// A reduce to rank 0, then a broadcast, not overlapped.
    Nonoverlapping,
    /// Recursive doubling.
    RecursiveDoubling,
    /// A ring: each element's chunk starts at another rank.
    Ring,
    /// A ring over segments of the vector.
    SegmentedRing,
    /// Rabenseifner's: a reduce-scatter by recursive halving, then an
    /// allgather.
    Rabenseifner,
    /// MPICH's `smp`: a reduce within each node, an allreduce of the
    /// nodes' sums, a broadcast within each node.
    Smp,
    /// MPICH's `nb`: the nonblocking `MPI_Iallreduce`, waited for.
    Nonblocking,
}

impl Algorithm {
    /// Open MPI's algorithms, with their names in a spec.
    pub const OPEN_MPI: [(Algorithm, &'static str); 6] = [
        (Algorithm::Linear, "linear"),
        (Algorithm::Nonoverlapping, "nonoverlapping"),
        (Algorithm::RecursiveDoubling, "recursive-doubling"),
        (Algorithm::Ring, "ring"),
        (Algorithm::SegmentedRing, "segmented-ring"),
        (Algorithm::Rabenseifner, "rabenseifner"),
    ];

    /// MPICH 4.0's algorithms, with their names in a spec (its CVAR's
    /// values with hyphens).
    pub const MPICH: [(Algorithm, &'static str); 4] = [
        (Algorithm::RecursiveDoubling, "recursive-doubling"),
        (Algorithm::Rabenseifner, "reduce-scatter-allgather"),
        (Algorithm::Smp, "smp"),
        (Algorithm::Nonblocking, "nb"),
    ];

    /// `implementation`'s algorithms, with their names in a spec.
    pub fn of(implementation: Implementation) -> &'static [(Algorithm, &'static str)] {
        match implementation {
            Implementation::OpenMpi => &Algorithm::OPEN_MPI,
            Implementation::Mpich => &Algorithm::MPICH,
        }
    }

    /// Its name in `implementation`'s spelling, if it has it.
    pub fn name_in(self, implementation: Implementation) -> Option<&'static str> {
        Algorithm::of(implementation)
            .iter()
            .find(|(a, _)| *a == self)
            .map(|(_, name)| *name)
    }

    /// The environment that makes `implementation` use it, set before the
    /// job starts; empty where `implementation` lacks it.
    pub fn env_for(self, implementation: Implementation) -> Vec<(&'static str, String)> {
        let Some(name) = self.name_in(implementation) else {
            return Vec::new();
        };
        match implementation {
            Implementation::OpenMpi => {
                let number = Algorithm::OPEN_MPI
                    .iter()
                    .position(|(a, _)| *a == self)
                    .map_or(0, |i| i + 1);
                vec![
                    (DYNAMIC_RULES, "1".into()),
                    (ALGORITHM_VAR, number.to_string()),
                ]
            }
            // MPICH's ch4 device may take the allreduce over (its own shared
            // memory one) before the CVAR's algorithm is looked at.
            Implementation::Mpich => vec![
                (DEVICE_COLLECTIVES, "none".into()),
                (CVAR, name.replace('-', "_")),
            ],
        }
    }

    /// The environment that makes the linked implementation use it.
    pub fn env(self) -> Vec<(&'static str, String)> {
        self.env_for(Implementation::linked())
    }

    /// Whether this process's environment selects it (inside the job).
    pub fn in_effect(self) -> bool {
        let env = self.env();
        !env.is_empty()
            && env
                .iter()
                .all(|(name, value)| std::env::var(name).ok().as_ref() == Some(value))
    }
}

const DYNAMIC_RULES: &str = "OMPI_MCA_coll_tuned_use_dynamic_rules";
const ALGORITHM_VAR: &str = "OMPI_MCA_coll_tuned_allreduce_algorithm";
const DEVICE_COLLECTIVES: &str = "MPIR_CVAR_DEVICE_COLLECTIVES";
const CVAR: &str = "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM";

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = spellings()
            .find(|(a, _)| a == self)
            .map_or("?", |(_, name)| name);
        f.write_str(name)
    }
}

/// Every algorithm with its name in a spec, Open MPI's spellings first.
fn spellings() -> impl Iterator<Item = &'static (Algorithm, &'static str)> {
    Algorithm::OPEN_MPI.iter().chain(&Algorithm::MPICH)
}

/// The text of an `mpi:` spec after `mpi:` split at its `@ALGORITHM`,
/// where it names one of the linked implementation's.
pub fn split(rest: &str) -> Result<(&str, Option<Algorithm>)> {
    split_for(rest, Implementation::linked())
}

/// [`split`] for `implementation`: a name either implementation spells
/// is that algorithm, if `implementation` has it.
pub fn split_for(rest: &str, implementation: Implementation) -> Result<(&str, Option<Algorithm>)> {
    let Some((rest, name)) = rest.rsplit_once('@') else {
        return Ok((rest, None));
    };
    let named = spellings().find(|(_, n)| *n == name).map(|(a, _)| *a);
    if let Some(a) = named.filter(|a| a.name_in(implementation).is_some()) {
        return Ok((rest, Some(a)));
    }
    let others = Implementation::ALL
        .iter()
        .map(|(i, _)| *i)
        .find(|&other| other != implementation && named.is_some_and(|a| a.name_in(other).is_some()))
        .map(|other| {
            format!(
                "; {name} is {other}'s (an fprev for it is built with `{}`)",
                other.build()
            )
        })
        .unwrap_or_default();
    Err(Error::Input(format!(
        "mpi:{rest}@{name}: no such allreduce algorithm in {implementation}, which this fprev \
         links: it has {}{others}",
        Algorithm::of(implementation)
            .iter()
            .map(|(_, n)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    )))
}
