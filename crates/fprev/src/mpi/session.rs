//! Inside an `mpirun` job: every rank runs `fprev`. Rank 0 runs the command; the
//! others [`join`] and then only serve: each `mpi:` black box rank 0 opens
//! is opened on every rank, each call's inputs are broadcast, every rank
//! sums its block of them, and the ranks combine their sums (by
//! `MPI_Allreduce`, or by the distributed Binary Tree Reduction). When rank
//! 0 is done, its [`Session`] tells them to exit.

use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::environment::Universe;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::Root;

use super::allreduce::{Blocks, Wire, reduce_rows};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::order::Order;
use crate::probe::Batch;

/// The variable naming the file where rank 0 of a job writes its exit
/// status, set by whoever started the job (the `fprev` command's
/// `--ranks`), so that the status survives `mpirun`.
pub const STATUS_VAR: &str = "FPREV_MPI_STATUS";

/// Whether this process is a rank of an MPI job (Open MPI or a PMI launcher).
pub fn in_job() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// The size of the job this process is a rank of, as its launcher says
/// (Open MPI, or a PMI launcher such as MPICH's Hydra); `None` outside one.
pub fn job_size() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// Rank 0's hold on MPI: ends the job's service when dropped.
pub struct Session {
    _universe: Universe,
}

/// Joins the job this process runs in: rank 0 gets the [`Session`] and
/// goes on; every other rank serves rank 0 until it is done, then exits
/// the process. `None` outside a job.
pub fn join() -> Result<Option<Session>> {
    if !in_job() {
        return Ok(None);
    }
    let universe = mpi::initialize()
        .ok_or_else(|| Error::Input("MPI was already initialized in this process".into()))?;
    let world = universe.world();
    if world.rank() == 0 {
        return Ok(Some(Session {
            _universe: universe,
        }));
    }
    serve(&world);
    drop(universe);
    std::process::exit(0);
}

impl Session {
    /// Ranks in the job.
    pub fn ranks(&self) -> usize {
        SimpleCommunicator::world().size() as usize
    }

    /// Records rank 0's exit status for the `fprev` process that started
    /// the job under `mpirun`, if one did (`--ranks`).
    pub fn finish(&self, code: i32) {
        if let Some(path) = std::env::var_os(STATUS_VAR) {
            let _ = std::fs::write(path, code.to_string());
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        send(&SimpleCommunicator::world(), &Header::exit());
    }
}

/// What a black box of the job combines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// Each rank sums its block in `local`, then `MPI_Allreduce(SUM)`.
    Allreduce {
        /// The order each rank sums its own block in.
        local: Order,
    },
    /// The distributed Binary Tree Reduction over all blocks.
    BinaryTree,
    /// Each rank sums its block in `local`, gathers every rank's sum
    /// (`MPI_Allgather`) and adds them left to right from its own round
    /// the ring: an allreduce written by hand whose ranks end with
    /// different bits.
    Allgather {
        /// The order each rank sums its own block in.
        local: Order,
    },
}

/// An `mpi:` black box as every rank of the job sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Setup {
    /// What the ranks combine.
    pub combine: Combine,
    /// Summands in all, over every rank's block.
    pub n: usize,
    /// The format of the summands.
    pub format: Format,
    /// Inputs per call: one per element of the vectors combined.
    pub rows: usize,
}

impl Setup {
    /// How the summands are split over `ranks`.
    pub fn blocks(&self, ranks: usize) -> Blocks {
        match self.combine {
            Combine::Allreduce { .. } | Combine::Allgather { .. } => Blocks::even(self.n, ranks),
            // Starts moved onto aligned indices: fewer messages.
            Combine::BinaryTree => Blocks::aligned(self.n, ranks, 0.2),
        }
    }
}

/// A command from rank 0, broadcast as eight numbers.
#[derive(Clone, Copy, Debug)]
struct Header([u64; 8]);

const OPEN: u64 = 1;
const SUM: u64 = 2;
const CLOSE: u64 = 3;
const EXIT: u64 = 4;

impl Header {
    fn exit() -> Self {
        Header([EXIT, 0, 0, 0, 0, 0, 0, 0])
    }

    fn open(setup: &Setup) -> Self {
        let (kind, order) = match setup.combine {
            Combine::Allreduce { local } => (0, order_code(local)),
            Combine::BinaryTree => (1, [0, 0]),
            Combine::Allgather { local } => (2, order_code(local)),
        };
        Header([
            OPEN,
            kind,
            setup.n as u64,
            Format::ALL
                .iter()
                .position(|f| *f == setup.format)
                .expect("a format of ALL") as u64,
            setup.rows as u64,
            order[0],
            order[1],
            0,
        ])
    }

    fn setup(&self) -> Setup {
        let h = self.0;
        Setup {
            combine: match h[1] {
                0 => Combine::Allreduce {
                    local: order_of([h[5], h[6]]),
                },
                2 => Combine::Allgather {
                    local: order_of([h[5], h[6]]),
                },
                _ => Combine::BinaryTree,
            },
            n: h[2] as usize,
            format: Format::ALL[h[3] as usize],
            rows: h[4] as usize,
        }
    }
}

/// An order as two numbers, for the header.
fn order_code(order: Order) -> [u64; 2] {
    match order {
        Order::Sequential => [0, 0],
        Order::Reverse => [1, 0],
        Order::Pairwise => [2, 0],
        Order::BinaryTree => [3, 0],
        Order::Strided(k) => [4, k as u64],
        Order::Blocked(b) => [5, b as u64],
        Order::Fused(k) => [6, k as u64],
    }
}

fn order_of([kind, arg]: [u64; 2]) -> Order {
    match kind {
        0 => Order::Sequential,
        1 => Order::Reverse,
        2 => Order::Pairwise,
        3 => Order::BinaryTree,
        4 => Order::Strided(arg as usize),
        5 => Order::Blocked(arg as usize),
        _ => Order::Fused(arg as usize),
    }
}

fn send(world: &SimpleCommunicator, header: &Header) {
    let mut h = header.0;
    world.process_at_rank(0).broadcast_into(&mut h[..]);
}

fn receive(world: &SimpleCommunicator) -> Header {
    let mut h = [0u64; 8];
    world.process_at_rank(0).broadcast_into(&mut h[..]);
    Header(h)
}

/// A rank other than 0: does what rank 0 says until it says exit.
fn serve(world: &SimpleCommunicator) {
    let mut open: Option<Setup> = None;
    loop {
        let header = receive(world);
        match header.0[0] {
            OPEN => open = Some(header.setup()),
            SUM => {
                let setup = open.as_ref().expect("a black box is open before a call");
                let batch = Inputs::receive(world, setup.n, header.0[1] as usize);
                work(world, setup, &batch.view());
            }
            CLOSE => open = None,
            _ => return,
        }
    }
}

/// Rank 0: opens `setup` on every rank.
pub(crate) fn open(setup: &Setup) {
    send(&SimpleCommunicator::world(), &Header::open(setup));
}

/// Rank 0: closes the black box on every rank.
pub(crate) fn close() {
    send(
        &SimpleCommunicator::world(),
        &Header([CLOSE, 0, 0, 0, 0, 0, 0, 0]),
    );
}

/// Rank 0: sums the inputs of `batch` (at most `setup.rows`) on every rank.
pub(crate) fn sum(setup: &Setup, batch: &Batch, out: &mut [f64]) -> Result<()> {
    let world = SimpleCommunicator::world();
    send(
        &world,
        &Header([SUM, batch.rows() as u64, 0, 0, 0, 0, 0, 0]),
    );
    Inputs::broadcast(&world, batch);
    let sums = work(&world, setup, batch).expect("rank 0 gets the sums")?;
    out.copy_from_slice(&sums[..out.len()]);
    Ok(())
}

/// A batch as it travels: the base, then the edits.
struct Inputs {
    base: Vec<f64>,
    starts: Vec<usize>,
    positions: Vec<usize>,
    values: Vec<f64>,
}

impl Inputs {
    fn broadcast(world: &SimpleCommunicator, batch: &Batch) {
        let root = world.process_at_rank(0);
        let mut sizes = [batch.positions.len() as u64];
        root.broadcast_into(&mut sizes[..]);
        let mut base = batch.base.to_vec();
        root.broadcast_into(&mut base[..]);
        let mut starts: Vec<u64> = batch.starts.iter().map(|&s| s as u64).collect();
        root.broadcast_into(&mut starts[..]);
        let mut positions: Vec<u64> = batch.positions.iter().map(|&p| p as u64).collect();
        root.broadcast_into(&mut positions[..]);
        let mut values = batch.values.to_vec();
        root.broadcast_into(&mut values[..]);
    }

    fn receive(world: &SimpleCommunicator, n: usize, rows: usize) -> Inputs {
        let root = world.process_at_rank(0);
        let mut sizes = [0u64];
        root.broadcast_into(&mut sizes[..]);
        let edits = sizes[0] as usize;
        let mut base = vec![0.0; n];
        root.broadcast_into(&mut base[..]);
        let mut starts = vec![0u64; rows + 1];
        root.broadcast_into(&mut starts[..]);
        let mut positions = vec![0u64; edits];
        root.broadcast_into(&mut positions[..]);
        let mut values = vec![0.0; edits];
        root.broadcast_into(&mut values[..]);
        Inputs {
            base,
            starts: starts.iter().map(|&s| s as usize).collect(),
            positions: positions.iter().map(|&p| p as usize).collect(),
            values,
        }
    }

    fn view(&self) -> Batch<'_> {
        Batch {
            base: &self.base,
            starts: &self.starts,
            positions: &self.positions,
            values: &self.values,
            continues: false,
        }
    }
}

/// Every rank's part of one call: its block of each input, summed and
/// combined with the other ranks'. The sums on rank 0 (an error where
/// another rank ended with other bits), `None` elsewhere.
/// Every call combines vectors of `setup.rows` elements, the inputs padded
/// with zeros: MPI picks its algorithm by the vectors' length.
fn work(world: &SimpleCommunicator, setup: &Setup, batch: &Batch) -> Option<Result<Vec<f64>>> {
    let blocks = setup.blocks(world.size() as usize);
    let range = blocks.range(world.rank() as usize);
    let rows = setup.rows;
    // This rank's block of each input, row after row.
    let mut current = batch.base[range.clone()].to_vec();
    let mut local = Vec::with_capacity(current.len() * rows);
    for r in 0..batch.rows() {
        for (p, v) in batch.edits(r) {
            if range.contains(&p) {
                current[p - range.start] = v;
            }
        }
        local.extend_from_slice(&current);
    }
    local.resize(current.len() * rows, 0.0);
    match setup.format {
        Format::F64 => combine::<f64>(world, setup, &blocks, &local, rows),
        _ => {
            let local: Vec<f32> = local.iter().map(|&x| x as f32).collect();
            combine::<f32>(world, setup, &blocks, &local, rows)
        }
    }
}

fn combine<T>(
    world: &SimpleCommunicator,
    setup: &Setup,
    blocks: &Blocks,
    local: &[T],
    rows: usize,
) -> Option<Result<Vec<f64>>>
where
    T: Wire + mpi::datatype::Equivalence,
{
    let sums: Vec<T> = match setup.combine {
        Combine::Allgather { local: order } => {
            let mine = block_sums(setup, order, local, rows);
            let ranks = world.size() as usize;
            let mut all = vec![T::default(); rows * ranks];
            world.all_gather_into(&mine[..], &mut all[..]);
            let me = world.rank() as usize;
            (0..rows)
                .map(|r| {
                    let round: Vec<f64> = (0..ranks)
                        .map(|k| all[((me + k) % ranks) * rows + r].into())
                        .collect();
                    T::from_wire(Order::Sequential.sum(&round, setup.format))
                })
                .collect()
        }
        Combine::Allreduce { local: order } => {
            let mine = block_sums(setup, order, local, rows);
            let mut all = vec![T::default(); rows];
            world.all_reduce_into(&mine[..], &mut all[..], SystemOperation::sum());
            all
        }
        // Only rank 0 ends with the sums: there is nothing to compare.
        Combine::BinaryTree => {
            let sums = reduce_rows(world, blocks, local, rows).0?;
            return Some(Ok(sums.into_iter().map(Into::into).collect()));
        }
    };
    agree(world, sums.into_iter().map(Into::into).collect())
}

/// This rank's block of each of `rows` inputs summed in `order`.
fn block_sums<T: Wire>(setup: &Setup, order: Order, local: &[T], rows: usize) -> Vec<T> {
    let len = local.len() / rows.max(1);
    (0..rows)
        .map(|r| {
            let block: Vec<f64> = local[r * len..(r + 1) * len]
                .iter()
                .map(|&x| x.into())
                .collect();
            // An empty block adds nothing.
            let s = if block.is_empty() {
                0.0
            } else {
                order.sum(&block, setup.format)
            };
            T::from_wire(s)
        })
        .collect()
}

/// Every rank's sums, compared on rank 0 bit for bit: rank 0's, or which
/// ranks ended with other bits and where; `None` on the other ranks.
fn agree(world: &SimpleCommunicator, sums: Vec<f64>) -> Option<Result<Vec<f64>>> {
    let root = world.process_at_rank(0);
    if world.rank() != 0 {
        root.gather_into(&sums[..]);
        return None;
    }
    let rows = sums.len();
    let mut all = vec![0.0; rows * world.size() as usize];
    root.gather_into_root(&sums[..], &mut all[..]);
    let same = |a: &f64, b: &f64| a.to_bits() == b.to_bits();
    let differ: Vec<(usize, usize)> = all
        .chunks(rows.max(1))
        .enumerate()
        .skip(1)
        .filter_map(|(rank, theirs)| {
            let e = (0..rows).find(|&e| !same(&theirs[e], &sums[e]))?;
            Some((rank, e))
        })
        .collect();
    Some(match differ.first() {
        None => Ok(sums),
        Some(&(rank, e)) => {
            let ranks: Vec<String> = differ.iter().map(|(r, _)| r.to_string()).collect();
            Err(Error::Disagree(format!(
                "the ranks end with different bits: rank{} {} differ from rank 0 (element {e}: \
                 rank 0 has {:e}, rank {rank} {:e}); no one order is every rank's",
                if ranks.len() == 1 { "" } else { "s" },
                ranks.join(", "),
                sums[e],
                all[rank * rows + e],
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_order_crosses_the_header_unchanged() {
        for order in [
            Order::Sequential,
            Order::Reverse,
            Order::Pairwise,
            Order::BinaryTree,
            Order::Strided(8),
            Order::Blocked(64),
            Order::Fused(17),
        ] {
            assert_eq!(order_of(order_code(order)), order);
        }
    }
}
