//! The reproducible allreduce: the same bits on any number of ranks, where
//! `MPI_Allreduce` of the ranks' own sums changes with the rank count.
//!
//! ```text
//! cargo build --release --features mpi --example mpi_allreduce
//! mpirun -np 4 target/release/examples/mpi_allreduce 1000000
//! ```
//!
//! Every rank takes its block of one vector (the same vector whatever the
//! rank count), then rank 0 prints both sums with their bits.

use fprev::mpi::{Blocks, binary_tree_allreduce};
use mpi::collective::SystemOperation;
use mpi::traits::*;

/// Summand `i` of the vector, wide-ranged and of both signs, so that the
/// order of the additions shows in the last bits.
fn summand(i: usize) -> f64 {
    let x = (i as f64 * 0.618_033_988_749_894_9).fract();
    (x - 0.5) * 2f64.powi((i % 40) as i32 - 20)
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let universe = mpi::initialize().expect("MPI starts");
    let world = universe.world();
    let (rank, ranks) = (world.rank() as usize, world.size() as usize);
    let local: Vec<f64> = Blocks::even(n, ranks).range(rank).map(summand).collect();

    let reproducible = binary_tree_allreduce(&world, &local);
    let mine: f64 = local.iter().sum();
    let mut plain = 0.0f64;
    world.all_reduce_into(&mine, &mut plain, SystemOperation::sum());

    if rank == 0 {
        println!(
            "{n} summands on {ranks} rank{}: binary tree {reproducible:e} ({:016x}), \
             MPI_Allreduce of the ranks' sums {plain:e} ({:016x})",
            if ranks == 1 { "" } else { "s" },
            reproducible.to_bits(),
            plain.to_bits()
        );
    }
}
