//! The reproducible allreduce against `MPI_Allreduce` of the ranks' own
//! sums under each of Open MPI's algorithms, in the same job: `cargo bench
//! --features mpi --bench mpi`. Started outside MPI, the bench runs itself
//! under `mpirun` on 2 and 4 ranks (`--oversubscribe`: ranks past the
//! cores share them), or on the rank counts given (`cargo bench --features
//! mpi --bench mpi -- 2 8`), one job for Open MPI's own choice and one for
//! each algorithm it has.
//!
//! Each job times both at 2^20 and 2^24 doubles (medians of 21 alternating
//! runs, each between barriers; the ranks' own sums are left to right, as
//! `iter().sum()` compiles) and reports the bits of both sums at 2^20: the
//! spread of `MPI_Allreduce`'s answers over the settings, against the one
//! answer of the reproducible allreduce. The job of Open MPI's own choice
//! also counts the reduction's messages, with even blocks and with blocks
//! aligned to cut them, against the thesis's bound (P - 1)(log2((n - 1)/P)
//! + 1).

use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

use fprev::mpi::algorithm::Algorithm;
use fprev::mpi::{Blocks, binary_tree_allreduce, reduce_rows};
use fprev::reduce::binary_tree_sum;
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

const RUNS: usize = 21;

/// The variable naming the setting a job runs under, for its lines.
const SETTING_VAR: &str = "FPREV_BENCH_ALGORITHM";

/// The size whose bits every setting reports.
const SPREAD_LOG: u32 = 20;

fn main() {
    if !fprev::mpi::in_job() {
        launch();
        return;
    }
    let universe = mpi::initialize().expect("MPI starts");
    let world = universe.world();
    let (rank, ranks) = (world.rank() as usize, world.size() as usize);
    let setting = std::env::var(SETTING_VAR).unwrap_or_else(|_| "auto".into());
    if rank == 0 {
        println!("\n## {ranks} ranks, {setting}\n");
        println!(
            "| n | MPI_Allreduce of local sums ms | reproducible ms | ratio | same bits as one rank |"
        );
        println!("|---:|---:|---:|---:|---|");
    }
    for log in [20, 24] {
        let n = 1usize << log;
        let local: Vec<f64> = Blocks::even(n, ranks).range(rank).map(summand).collect();
        let plain_sum = || {
            let mine: f64 = local.iter().sum();
            let mut all = 0.0;
            world.all_reduce_into(&mine, &mut all, SystemOperation::sum());
            all
        };
        // Runs alternate, so a noisy neighbour slows both alike.
        let (plain, tree) = medians(&world, plain_sum, || {
            binary_tree_allreduce(&world, black_box(&local))
        });
        let reproducible = binary_tree_allreduce(&world, &local);
        let same = rank == 0 && {
            let whole: Vec<f64> = (0..n).map(summand).collect();
            reproducible.to_bits() == binary_tree_sum(&whole).to_bits()
        };
        if rank == 0 {
            println!(
                "| 2^{log} | {:.3} | {:.3} | {:.2}x | {} |",
                plain * 1e3,
                tree * 1e3,
                tree / plain,
                if same { "yes" } else { "NO" }
            );
            if log == SPREAD_LOG {
                println!(
                    "bits {ranks} {setting} {:016x} {:016x}",
                    plain_sum().to_bits(),
                    reproducible.to_bits()
                );
            }
        } else if log == SPREAD_LOG {
            plain_sum();
        }
    }
    if setting != "auto" {
        return;
    }
    if rank == 0 {
        println!("\n| n | blocks | messages | unbuffered | thesis bound |");
        println!("|---:|---|---:|---:|---:|");
    }
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
    // One job a setting: Open MPI reads its algorithm as the job starts.
    let settings = std::iter::once(None).chain(Algorithm::OPEN_MPI.map(|(a, _)| Some(a)));
    let mut spread: Vec<(String, String, String, String)> = Vec::new();
    for ranks in &counts {
        for algorithm in settings.clone() {
            let mut job = Command::new("mpirun");
            job.args(["--oversubscribe", "-np", ranks])
                .arg(&exe)
                .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
                .env(
                    SETTING_VAR,
                    algorithm.map_or("auto".into(), |a| a.to_string()),
                );
            if let Some(a) = algorithm {
                job.envs(a.env());
            }
            let out = job
                .output()
                .expect("mpirun runs (apt-get install openmpi-bin)");
            assert!(
                out.status.success(),
                "the job on {ranks} ranks failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                match line.strip_prefix("bits ") {
                    Some(bits) => {
                        let mut w = bits.split(' ').map(String::from);
                        let mut next = || w.next().unwrap_or_default();
                        spread.push((next(), next(), next(), next()));
                    }
                    None => println!("{line}"),
                }
            }
        }
    }
    println!("\n## The answers' spread (n = 2^{SPREAD_LOG}, the bits of each sum)\n");
    println!("| P | algorithm | MPI_Allreduce of local sums | reproducible |");
    println!("|---:|---|---|---|");
    for (ranks, algorithm, plain, tree) in &spread {
        println!("| {ranks} | {algorithm} | {plain} | {tree} |");
    }
    let distinct = |pick: fn(&(String, String, String, String)) -> &String| {
        let mut all: Vec<&String> = spread.iter().map(pick).collect();
        all.sort();
        all.dedup();
        all.len()
    };
    let whole: Vec<f64> = (0..1usize << SPREAD_LOG).map(summand).collect();
    let one = format!("{:016x}", binary_tree_sum(&whole).to_bits());
    println!(
        "\n{} settings: MPI_Allreduce of local sums gave {} distinct results; the reproducible \
         allreduce gave {} ({}the one-rank binary tree's {one})",
        spread.len(),
        distinct(|s| &s.2),
        distinct(|s| &s.3),
        if spread.iter().all(|s| s.3 == one) {
            "all "
        } else {
            "NOT all "
        },
    );
}
