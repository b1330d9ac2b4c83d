//! What a prediction at a large `n` costs, and that it stays a formula.
//!
//! For NumPy's pairwise sum as a formula black box
//! (`native:halves(128, 8, body(8, interleave(8, sequential, pairwise), then))`,
//! f32) and XLA's windows of 32, at `n` = 2^20 and 2^24 (and 2^27 with
//! `full`), this bench runs `reveal --infer` as the library runs it with a
//! warm cache: the formula known, nothing revealed at smaller sizes, the
//! prediction confirmed by 48 replays streamed from the formula at `n`,
//! the arithmetic asked at 65,536. It reports the median wall time of 3
//! runs (one at 2^27), the process's peak resident memory after each size
//! (`VmHWM`, which only grows, so each row is an upper bound of its own),
//! the black-box calls, and the size of the tree file written; and it
//! checks that the document holds the formula, that the replay confirmed
//! it, and that the file holds no leaves.
//!
//! Targets (issue 39): 2^24 in at most 10 s and 1 GiB, 2^27 in at most
//! 90 s and 3 GiB, a tree file of at most 4 KB. A wrong or unconfirmed
//! document, or a missed target, makes the bench exit non-zero after the
//! table.
//!
//! ```text
//! cargo bench --bench scale          # 2^20 and 2^24 (a minute)
//! cargo bench --bench scale -- full  # and 2^27 (two more minutes, 2.5 GiB)
//! ```
//!
//! The black boxes here are fprev's own formula probes: the cost measured
//! is fprev's. `outputs/scale/run.sh` measures the same with NumPy's own
//! `sum` as the black box, whole process, beside the FPRev reference.

use std::process::ExitCode;
use std::time::Instant;

use fprev::formula::Formula;
use fprev::probe::{Probe, ProbeOptions};
use fprev::reveal::Silent;
use fprev::workflow::{self, Infer, Outcome, Request};

const FORMULAS: [(&str, &str); 2] = [
    (
        "numpy:sum",
        "halves(128, 8, body(8, interleave(8, sequential, pairwise), then))",
    ),
    ("jnp.sum below 4,096", "windows(32, sequential)"),
];

/// Seconds and bytes a size may take: (n, seconds, peak bytes).
const TARGETS: [(usize, f64, u64); 2] = [(1 << 24, 10.0, 1 << 30), (1 << 27, 90.0, 3 << 30)];

/// The largest tree file allowed, in bytes.
const FILE_TARGET: usize = 4096;

fn main() -> ExitCode {
    let full = std::env::args().any(|a| a == "full");
    let sizes: Vec<usize> = match full {
        true => vec![1 << 20, 1 << 24, 1 << 27],
        false => vec![1 << 20, 1 << 24],
    };
    println!("| black box | n | wall (median) | peak memory | calls | file | confirmed |");
    println!("|---|---|---|---|---|---|---|");
    let mut failed = Vec::new();
    for &n in &sizes {
        for (name, formula) in FORMULAS {
            let formula: Formula = formula.parse().expect("a formula");
            let spec = format!("native:{formula}");
            let repeats = if n >= 1 << 27 { 1 } else { 3 };
            let mut times = Vec::new();
            let mut row = None;
            for _ in 0..repeats {
                let started = Instant::now();
                let found = predict(&spec, &formula, n);
                times.push(started.elapsed().as_secs_f64());
                row = Some(found);
            }
            times.sort_by(f64::total_cmp);
            let seconds = times[times.len() / 2];
            let peak = peak_bytes();
            let (calls, file, confirmed, holds_formula) = row.expect("one run at least");
            println!(
                "| {name} | 2^{} | {seconds:.2} s | {} MiB | {calls} | {file} B | {confirmed} |",
                n.ilog2(),
                peak >> 20
            );
            if !confirmed || !holds_formula {
                failed.push(format!(
                    "{name} at n = {n}: not confirmed, or not the formula"
                ));
            }
            if file > FILE_TARGET {
                failed.push(format!("{name} at n = {n}: a tree file of {file} bytes"));
            }
            for &(at, most_seconds, most_bytes) in &TARGETS {
                if n == at && (seconds > most_seconds || peak > most_bytes) {
                    failed.push(format!(
                        "{name} at n = {n}: {seconds:.1} s and {} MiB, the target {most_seconds} s \
                         and {} MiB",
                        peak >> 20,
                        most_bytes >> 20
                    ));
                }
            }
        }
    }
    for f in &failed {
        println!("FAIL {f}");
    }
    match failed.is_empty() {
        true => {
            println!("PASS every size confirmed, streamed, within its targets");
            ExitCode::SUCCESS
        }
        false => ExitCode::FAILURE,
    }
}

/// `reveal --infer` of `spec` at `n` with `formula` known: the calls, the
/// tree file's bytes, whether the replay confirmed it and whether the
/// document holds the formula.
fn predict(spec: &str, formula: &Formula, n: usize) -> (u64, usize, bool, bool) {
    let open = |o: &ProbeOptions| fprev::open(spec, o);
    let opts = ProbeOptions {
        n: Some(n),
        ..ProbeOptions::default()
    };
    let mut black_box: Box<dyn Probe> = open(&opts).expect("the formula's black box");
    let request = Request {
        infer: Some(Infer {
            known: Some((formula.clone(), Vec::new())),
            ..Infer::default()
        }),
        ..Request::default()
    };
    let mut opener = open;
    let outcome =
        workflow::reveal_opened(&mut *black_box, spec, &request, &mut opener, &mut Silent)
            .expect("a prediction");
    let Outcome::Revealed(found) = outcome else {
        panic!("{spec}: no tree");
    };
    let doc = &found.document;
    let confirmed = doc.confirmation.as_ref().is_some_and(|c| c.confirmed());
    let stats = doc.stats.unwrap_or_default();
    (
        stats.calls + stats.arithmetic_calls,
        doc.to_json().len(),
        confirmed,
        doc.formula() == Some(formula),
    )
}

/// The process's peak resident memory so far (`VmHWM`), in bytes.
fn peak_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}
