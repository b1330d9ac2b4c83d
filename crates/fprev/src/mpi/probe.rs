//! MPI black boxes, on rank 0 of an `mpirun` job (see [`super::session`]):
//!
//! - `mpi:allreduce[:LOCAL]`: each rank sums its block of the `n` summands
//!   (blocks as even as can be, in rank order) in the order `LOCAL`
//!   (`sequential`, the default, `reverse`, `pairwise`, `binary-tree`,
//!   `strided:K`, `blocked:B`), then `MPI_Allreduce(SUM)` combines the
//!   ranks' sums;
//! - `mpi:allreduce[:LOCAL]@ALGORITHM`: the same with the linked MPI's
//!   algorithm chosen ([`super::algorithm`]; Open MPI: `linear`,
//!   `nonoverlapping`, `recursive-doubling`, `ring`, `segmented-ring`,
//!   `rabenseifner`; MPICH: `recursive-doubling`,
//!   `reduce-scatter-allgather`, `smp`, `nb`);
//! - `mpi:binary-tree`: the distributed Binary Tree Reduction
//!   ([`super::binary_tree_allreduce`]) over blocks aligned to cut
//!   messages.
//!
//! One call combines vectors of `M` elements (`--shape M,1,N`, default
//! [`DEFAULT_ROWS`]), each element one input: the row check then names the
//! positions whose order differs from position 0's, as MPI's segmented
//! algorithms can combine parts of a vector differently.

use mpi::topology::{Communicator, SimpleCommunicator};

use super::session::{self, Combine, Setup};
use super::{algorithm, orders};
use crate::error::{Error, Param, Remedy, Result};
use crate::format::Format;
use crate::order::Order;
use crate::probe::linalg::ieee_format;
use crate::probe::{Batch, Probe, ProbeOptions, batch, resolve_n};

/// Elements of the vectors one call combines when `--shape` gives none.
pub const DEFAULT_ROWS: usize = crate::probe::MPI_ELEMENTS;

/// An `mpi:` black box, driven from rank 0.
#[derive(Debug)]
pub struct MpiProbe {
    setup: Setup,
    /// The allreduce algorithm the spec chose, and the job's ranks.
    algorithm: Option<(algorithm::Algorithm, usize)>,
}

impl MpiProbe {
    /// Opens `mpi:OP[:ARG]` on every rank of the job this process is rank
    /// 0 of.
    pub fn open(spec: &str, op: &str, arg: Option<&str>, opts: &ProbeOptions) -> Result<Self> {
        let rest = spec.strip_prefix("mpi:").unwrap_or(spec);
        let (_, algorithm) = algorithm::split(rest)?;
        let (op, arg) = match (algorithm, arg) {
            (Some(_), Some(a)) => (op, Some(without_algorithm(a))),
            (Some(_), None) => (without_algorithm(op), None),
            (None, arg) => (op, arg),
        };
        if let Some(a) = algorithm {
            if op != "allreduce" {
                return Err(Error::Input(format!(
                    "{spec}: an algorithm is MPI_Allreduce's to choose: mpi:allreduce[:LOCAL]@{a}"
                )));
            }
            if session::in_job() && !a.in_effect() {
                let env: Vec<String> = a.env().iter().map(|(k, v)| format!("{k}={v}")).collect();
                let implementation = super::Implementation::linked();
                return Err(Error::Input(format!(
                    "{spec}: {implementation} reads its algorithm as the job starts: fprev sets \
                     it where it starts the job, or set {} before {}",
                    env.join(" "),
                    implementation.launcher()
                ))
                .advise(Remedy::Give(Param::Ranks, &["P"])));
            }
        }
        let combine = match (op, arg) {
            ("allreduce", local) => Combine::Allreduce {
                local: local_order(spec, local)?,
            },
            ("binary-tree", None) => Combine::BinaryTree,
            ("allgather", local) => Combine::Allgather {
                local: local_order(spec, local)?,
            },
            _ => {
                return Err(Error::Input(format!(
                    "unknown probe spec '{spec}': expected mpi:allreduce[:LOCAL][@ALGORITHM], \
                     mpi:allgather[:LOCAL] or mpi:binary-tree"
                )));
            }
        };
        if !session::in_job() {
            return Err(
                Error::Input(format!("{spec} runs in an MPI job")).advise(Remedy::Or(
                    Box::new(Remedy::Give(Param::Ranks, &["P"])),
                    "run fprev under mpirun",
                )),
            );
        }
        let ranks = SimpleCommunicator::world().size() as usize;
        if let Some(p) = opts.ranks.filter(|&p| p != ranks) {
            return Err(Error::Input(format!(
                "{spec}: {p} ranks asked for, but this MPI job has {ranks}"
            )));
        }
        let setup = Setup {
            combine,
            n: resolve_n(spec, opts)?,
            format: ieee_format(spec, opts.format)?,
            rows: opts.shape.map_or(DEFAULT_ROWS, |[m, _, _]| m),
        };
        session::open(&setup);
        Ok(MpiProbe {
            setup,
            algorithm: algorithm.map(|a| (a, ranks)),
        })
    }
}

/// The order a rank sums its own block in, `sequential` unless `local`
/// names another IEEE order.
fn local_order(spec: &str, local: Option<&str>) -> Result<Order> {
    let local: Order = local
        .unwrap_or("sequential")
        .parse()
        .map_err(|e| Error::Input(format!("{spec}: the local order: {e}")))?;
    if matches!(local, Order::Fused(_)) {
        return Err(Error::Input(format!(
            "{spec}: a rank sums its block in an IEEE order: sequential, reverse, pairwise, \
             binary-tree, strided:K or blocked:B"
        )));
    }
    Ok(local)
}

/// `s` without its `@ALGORITHM`.
fn without_algorithm(s: &str) -> &str {
    s.rsplit_once('@').map_or(s, |(s, _)| s)
}

impl Drop for MpiProbe {
    fn drop(&mut self) {
        session::close();
    }
}

impl Probe for MpiProbe {
    fn n(&self) -> usize {
        self.setup.n
    }
    fn format(&self) -> Format {
        self.setup.format
    }
    fn may_fuse(&self) -> bool {
        false
    }
    fn max_batch(&self) -> usize {
        self.setup.rows
    }
    fn described(&self, row: usize) -> Option<(String, crate::formula::Formula)> {
        let (algorithm, ranks) = self.algorithm?;
        let Combine::Allreduce { local } = self.setup.combine else {
            return None;
        };
        let implementation = super::Implementation::linked();
        let formula = orders::formula(
            implementation,
            algorithm,
            ranks,
            self.setup.rows,
            row,
            local,
        )?;
        let name = algorithm.name_in(implementation)?;
        Some((format!("{implementation}'s {name} allreduce"), formula))
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()> {
        batch::sum_whole(self, inputs, out)
    }
    fn sum_batch(&mut self, batch: &Batch, out: &mut [f64]) -> Result<()> {
        // More inputs than one call takes: each call starts from the last
        // input of the one before.
        let mut base = batch.base.to_vec();
        for (k, chunk) in out.chunks_mut(self.setup.rows).enumerate() {
            let first = k * self.setup.rows;
            if k > 0 {
                for r in first - self.setup.rows..first {
                    batch.apply(r, &mut base);
                }
            }
            let part = Batch {
                base: &base,
                starts: &batch.starts[first..=first + chunk.len()],
                continues: false,
                ..*batch
            };
            session::sum(&self.setup, &part, chunk)?;
        }
        Ok(())
    }
}
