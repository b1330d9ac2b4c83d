//! Which MPI implementation this fprev links. A binary links one (Open
//! MPI's and MPICH's ABIs differ), chosen when it is built: `mpicc`
//! (Debian's default, Open MPI) or the one `MPICC` names
//! (`MPICC=mpicc.mpich cargo build --features mpi`; `mpicc.openmpi` for
//! Open MPI). The linked library
//! says which it is, before `MPI_Init` too (`MPI_Get_library_version`),
//! and decides the launcher `--ranks` starts and the allreduce algorithms
//! a spec may choose ([`super::algorithm`]).
//!
//! ```
//! use fprev::mpi::Implementation;
//!
//! let linked = Implementation::linked();
//! assert!(Implementation::version().starts_with(&linked.to_string()));
//! assert_eq!("mpich".parse::<Implementation>().unwrap(), Implementation::Mpich);
//! assert!("lam".parse::<Implementation>().is_err());
//! ```

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::error::Error;

/// An MPI implementation fprev can be built against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Implementation {
    /// Open MPI, started by its `mpirun`.
    OpenMpi,
    /// MPICH, started by its Hydra launcher (`mpiexec.mpich` on Debian).
    Mpich,
}

impl Implementation {
    /// Every implementation, with its name on the command line (`--mpi`).
    pub const ALL: [(Implementation, &'static str); 2] = [
        (Implementation::OpenMpi, "openmpi"),
        (Implementation::Mpich, "mpich"),
    ];

    /// The implementation this process links.
    pub fn linked() -> Implementation {
        if library_version().starts_with("MPICH") {
            Implementation::Mpich
        } else {
            Implementation::OpenMpi
        }
    }

    /// The linked library's name and version in a few words, e.g. `Open
    /// MPI v4.1.4` or `MPICH 4.0.2`.
    pub fn version() -> String {
        let text = library_version();
        let first = text.lines().next().unwrap_or_default();
        match first.strip_prefix("MPICH Version:") {
            Some(version) => format!("MPICH {}", version.trim()),
            None => first
                .split(',')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string(),
        }
    }

    /// What a survey records of the MPI: the implementation linked, its
    /// version, and the ranks of the job this process runs in.
    pub fn facts() -> std::collections::BTreeMap<String, String> {
        let mut facts = std::collections::BTreeMap::from([
            ("implementation".to_string(), Self::linked().to_string()),
            ("version".to_string(), Self::version()),
        ]);
        if let Some(ranks) = super::session::job_size() {
            facts.insert("ranks".to_string(), ranks.to_string());
        }
        facts
    }

    /// The program that starts a job of this implementation's ranks.
    pub fn launcher(self) -> &'static str {
        match self {
            Implementation::OpenMpi => "mpirun",
            Implementation::Mpich => "mpiexec.mpich",
        }
    }

    /// The Debian packages that install its launcher.
    pub fn package(self) -> &'static str {
        match self {
            Implementation::OpenMpi => "openmpi-bin",
            Implementation::Mpich => "mpich",
        }
    }

    /// How to build an fprev that links it.
    pub fn build(self) -> &'static str {
        match self {
            Implementation::OpenMpi => "MPICC=mpicc.openmpi cargo build --features mpi",
            Implementation::Mpich => "MPICC=mpicc.mpich cargo build --features mpi",
        }
    }

    /// Whether `implementation`, asked for on the command line (`--mpi`),
    /// is the one this fprev links; the error says how to build for it.
    pub fn require(implementation: Implementation) -> crate::Result<()> {
        let linked = Implementation::linked();
        if implementation == linked {
            return Ok(());
        }
        Err(Error::Input(format!(
            "the MPI implementation {}: this fprev links {}; an fprev for {implementation} is \
             built with `{}`",
            implementation.name(),
            Implementation::version(),
            implementation.build()
        )))
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        Implementation::ALL
            .iter()
            .find(|(i, _)| *i == self)
            .map_or("?", |(_, name)| name)
    }
}

/// `MPI_Get_library_version`, which MPI allows before `MPI_Init`.
fn library_version() -> &'static str {
    static VERSION: OnceLock<String> = OnceLock::new();
    VERSION.get_or_init(|| mpi::environment::library_version().unwrap_or_default())
}

impl fmt::Display for Implementation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Implementation::OpenMpi => "Open MPI",
            Implementation::Mpich => "MPICH",
        })
    }
}

impl FromStr for Implementation {
    type Err = Error;

    fn from_str(s: &str) -> crate::Result<Self> {
        Implementation::ALL
            .iter()
            .find(|(_, name)| *name == s)
            .map(|(i, _)| *i)
            .ok_or_else(|| {
                Error::Input(format!(
                    "{s}: no such MPI implementation; fprev knows {}",
                    Implementation::ALL.map(|(_, name)| name).join(" and ")
                ))
            })
    }
}
