//! fprev and MPI, in one place (the `mpi` feature):
//!
//! - [`session`]: inside an `mpirun` job. Every rank runs `fprev`; rank 0
//!   runs the command, the others [`join`] and serve it: each call's
//!   inputs are broadcast, every rank sums its block, and the ranks
//!   combine their sums.
//! - [`probe`]: the `mpi:` black boxes rank 0 reveals (`MPI_Allreduce`
//!   after a local order, or the distributed Binary Tree Reduction).
//! - [`algorithm`]: `MPI_Allreduce`'s algorithm, chosen in the spec.
//! - [`orders`]: the order each algorithm gives an element, from its
//!   description.
//! - [`implementation`]: which MPI this fprev links (Open MPI or MPICH),
//!   and so which launcher starts its jobs.
//! - [`allreduce`]: the distributed Binary Tree Reduction itself, a
//!   reproducible reducer: the same bits on any number of ranks.
//!
//! Starting a job (`fprev --ranks P`) is the command line's business: it
//! runs the linked MPI's launcher (`mpirun`, `mpiexec.mpich`) and reads rank 0's status from [`STATUS_VAR`].

pub mod algorithm;
pub mod allreduce;
pub mod implementation;
pub mod orders;
pub mod probe;
pub mod session;

pub use allreduce::{Blocks, Wire, binary_tree_allreduce, reduce_rows};
pub use implementation::Implementation;
pub use probe::MpiProbe;
pub use session::{Combine, STATUS_VAR, Session, Setup, in_job, join};
