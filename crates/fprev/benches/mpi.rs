//! The reproducible allreduce against `MPI_Allreduce` of the ranks' own
//! sums, in the same job: `cargo bench --features mpi --bench mpi`. Started
//! outside MPI, the bench runs itself under `mpirun` on 2 and 4 ranks
//! (`--oversubscribe`: ranks past the cores share them), or on the rank
//! counts given: `cargo bench --features mpi --bench mpi -- 2 8`.
//!
//! Each job times both at 2^20 and 2^24 doubles (medians of 21 alternating runs,
//! each between barriers; the ranks' own sums are left to right, as
//! `iter().sum()` compiles) and counts the reduction's messages, with even blocks
//! and with blocks aligned to cut them, against the thesis's bound
//! (P - 1)(log2((n - 1)/P) + 1).

use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

use fprev::mpi::{Blocks, binary_tree_allreduce, reduce_rows};
use fprev::reduce::binary_tree_sum;
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

const RUNS: usize = 21;

fn main() {
    if !fprev::mpi::in_job() {
        launch();
        return;
    }
    let universe = mpi::initialize().expect("MPI starts");
    let world = universe.world();
    let (rank, ranks) = (world.rank() as usize, world.size() as usize);
    if rank == 0 {
        println!("\n## {ranks} ranks\n");
        println!(
            "| n | MPI_Allreduce of local sums ms | reproducible ms | ratio | same bits as one rank |"
        );
        println!("|---:|---:|---:|---:|---|");
    }
    for log in [20, 24] {
        let n = 1usize << log;
        let local: Vec<f64> = Blocks::even(n, ranks).range(rank).map(summand).collect();
        // Runs alternate, so a noisy neighbour slows both alike.
        let (plain, tree) = medians(
            &world,
            || {
                let mine: f64 = local.iter().sum();
                let mut all = 0.0;
                world.all_reduce_into(&mine, &mut all, SystemOperation::sum());
                all
            },
            || binary_tree_allreduce(&world, black_box(&local)),
        );
        let same = if rank == 0 {
            let whole: Vec<f64> = (0..n).map(summand).collect();
            binary_tree_allreduce(&world, &local).to_bits() == binary_tree_sum(&whole).to_bits()
        } else {
            binary_tree_allreduce(&world, &local);
            false
        };
        if rank == 0 {
            println!(
                "| 2^{log} | {:.3} | {:.3} | {:.2}x | {} |",
                plain * 1e3,
                tree * 1e3,
                tree / plain,
                if same { "yes" } else { "NO" }
            );
        }
    }
    if rank == 0 {
        println!("\n| n | blocks | messages | unbuffered | thesis bound |");
        println!("|---:|---|---:|---:|---:|");
    }
    // Powers of two split evenly into aligned blocks; the others show what
    // alignment saves.
    for n in [1usize << 20, 1 << 24, 1_000_003, 504_850] {
        for (name, blocks) in [
            ("even", Blocks::even(n, ranks)),
            ("aligned 0.2", Blocks::aligned(n, ranks, 0.2)),
        ] {
            let messages = messages(&world, &blocks);
            if rank == 0 {
                let bound = (ranks - 1) as f64 * (((n - 1) as f64 / ranks as f64).log2() + 1.0);
                println!(
                    "| {n} | {name} | {messages} | {} | {bound:.0} |",
                    blocks.crossings()
                );
            }
        }
    }
}

/// Messages sent by all ranks in one reduction over `blocks`.
fn messages(world: &SimpleCommunicator, blocks: &Blocks) -> u64 {
    let rank = world.rank() as usize;
    let local: Vec<f64> = blocks.range(rank).map(summand).collect();
    let (_, sent) = reduce_rows(world, blocks, &local, 1);
    let mut all = 0u64;
    world.all_reduce_into(&(sent as u64), &mut all, SystemOperation::sum());
    all
}

/// Median seconds of `a` and of `b` over [`RUNS`] alternating runs, each
/// between barriers, so the slowest rank counts.
fn medians(
    world: &SimpleCommunicator,
    mut a: impl FnMut() -> f64,
    mut b: impl FnMut() -> f64,
) -> (f64, f64) {
    let time = |f: &mut dyn FnMut() -> f64| {
        world.barrier();
        let started = Instant::now();
        black_box(f());
        world.barrier();
        started.elapsed().as_secs_f64()
    };
    let (mut ta, mut tb): (Vec<f64>, Vec<f64>) =
        (0..RUNS).map(|_| (time(&mut a), time(&mut b))).unzip();
    let median = |t: &mut Vec<f64>| {
        t.sort_by(f64::total_cmp);
        t[RUNS / 2]
    };
    (median(&mut ta), median(&mut tb))
}

/// Summand `i`: wide-ranged and of both signs, so the order shows in the
/// bits.
fn summand(i: usize) -> f64 {
    let x = (i as f64 * 0.618_033_988_749_894_9).fract();
    (x - 0.5) * 2f64.powi((i % 40) as i32 - 20)
}

/// Runs this bench under `mpirun` on each rank count asked for.
fn launch() {
    let counts: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a.parse::<usize>().is_ok())
        .collect();
    let counts = if counts.is_empty() {
        vec!["2".to_string(), "4".to_string()]
    } else {
        counts
    };
    let exe = std::env::current_exe().expect("the bench's own path");
    println!("# Reproducible allreduce against MPI_Allreduce");
    for ranks in counts {
        let status = Command::new("mpirun")
            .args(["--oversubscribe", "-np", &ranks])
            .arg(&exe)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .status()
            .expect("mpirun runs (apt-get install openmpi-bin)");
        assert!(
            status.success(),
            "the job on {ranks} ranks failed: {status}"
        );
    }
}
