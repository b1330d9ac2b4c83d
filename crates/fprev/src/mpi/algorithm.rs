//! `MPI_Allreduce`'s algorithm, chosen instead of left to the library:
//! `mpi:allreduce[:LOCAL]@ALGORITHM` names one of Open MPI's tuned
//! component (`coll_tuned_allreduce_algorithm`), which it reads from the
//! environment as the job starts.
//!
//! ```
//! use fprev::mpi::algorithm::{Algorithm, split};
//!
//! let (rest, algorithm) = split("allreduce:pairwise@ring").unwrap();
//! assert_eq!((rest, algorithm), ("allreduce:pairwise", Some(Algorithm::Ring)));
//! assert_eq!(Algorithm::Ring.env()[1], ("OMPI_MCA_coll_tuned_allreduce_algorithm", "4".into()));
//! assert!(split("allreduce@fastest").is_err());
//! ```

use std::fmt;

use crate::error::{Error, Result};

/// One of Open MPI's allreduce algorithms (its tuned component's numbers).
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
}

impl Algorithm {
    /// Every algorithm, with its name in a spec.
    pub const ALL: [(Algorithm, &'static str); 6] = [
        (Algorithm::Linear, "linear"),
        (Algorithm::Nonoverlapping, "nonoverlapping"),
        (Algorithm::RecursiveDoubling, "recursive-doubling"),
        (Algorithm::Ring, "ring"),
        (Algorithm::SegmentedRing, "segmented-ring"),
        (Algorithm::Rabenseifner, "rabenseifner"),
    ];

    /// Open MPI's number for it (`coll_tuned_allreduce_algorithm`).
    pub fn number(self) -> u32 {
        match self {
            Algorithm::Linear => 1,
            Algorithm::Nonoverlapping => 2,
            Algorithm::RecursiveDoubling => 3,
            Algorithm::Ring => 4,
            Algorithm::SegmentedRing => 5,
            Algorithm::Rabenseifner => 6,
        }
    }

    /// The environment that makes Open MPI use it, set before `mpirun`.
    pub fn env(self) -> [(&'static str, String); 2] {
        [
            (DYNAMIC_RULES, "1".into()),
            (ALGORITHM_VAR, self.number().to_string()),
        ]
    }

    /// Whether this process's environment selects it (inside the job).
    pub fn in_effect(self) -> bool {
        let var = |name| std::env::var(name).ok();
        var(DYNAMIC_RULES).as_deref() == Some("1")
            && var(ALGORITHM_VAR) == Some(self.number().to_string())
    }
}

const DYNAMIC_RULES: &str = "OMPI_MCA_coll_tuned_use_dynamic_rules";
const ALGORITHM_VAR: &str = "OMPI_MCA_coll_tuned_allreduce_algorithm";

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = Algorithm::ALL
            .iter()
            .find(|(a, _)| a == self)
            .map_or("?", |(_, name)| name);
        f.write_str(name)
    }
}

/// The text of an `mpi:` spec after `mpi:` split at its `@ALGORITHM`,
/// where it names one.
pub fn split(rest: &str) -> Result<(&str, Option<Algorithm>)> {
    let Some((rest, name)) = rest.rsplit_once('@') else {
        return Ok((rest, None));
    };
    match Algorithm::ALL.iter().find(|(_, n)| *n == name) {
        Some((a, _)) => Ok((rest, Some(*a))),
        None => Err(Error::Input(format!(
            "mpi:{rest}@{name}: no such allreduce algorithm; Open MPI's are {}",
            Algorithm::ALL.map(|(_, n)| n).join(", ")
        ))),
    }
}
