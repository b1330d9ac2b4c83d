//! Real-library reveals against the reference implementation's published
//! timings on this kind of machine (`../shared/ALGORITHMS.md` section 9).
//!
//! ```text
//! cargo bench --bench libraries
//! ```
//!
//! Needs NumPy for the `numpy:` rows (`python3 -m pip install numpy`).
//! Reports, per row, the median wall time over 3 reveals, queries, calls, the
//! rows the engine batched per call, and the reference's time where one is
//! published. Each tree is confirmed against the library by `check`.

use std::time::Instant;

use fprev::check::check;
use fprev::probe::{self, ProbeOptions};
use fprev::reveal::{Algorithm, Pivot};
use fprev::{Format, Options, reveal};

struct Case {
    spec: &'static str,
    n: usize,
    shape: Option<[usize; 3]>,
    algorithm: Algorithm,
    pivot: Pivot,
    /// The reference implementation's seconds for this case, if published.
    reference: Option<f64>,
}

fn case(spec: &'static str, n: usize, pivot: Pivot, reference: Option<f64>) -> Case {
    Case {
        spec,
        n,
        shape: None,
        algorithm: Algorithm::Fprev,
        pivot,
        reference,
    }
}

fn main() {
    let random = Pivot::Random { seed: 0 };
    let cases = [
        case("numpy:sum", 4096, Pivot::Min, Some(0.15)),
        case("numpy:sum", 4096, random, Some(0.15)),
        case("numpy:sum", 16384, Pivot::Min, Some(1.06)),
        case("numpy:sum", 16384, random, Some(1.06)),
        Case {
            algorithm: Algorithm::Basic,
            ..case("numpy:sum", 1024, Pivot::Min, Some(1.09))
        },
        case("numpy:gemv", 1024, Pivot::Min, Some(0.10)),
        case("numpy:gemm", 256, Pivot::Min, Some(0.07)),
        case("numpy:gemm", 1024, Pivot::Min, None),
        case("ndarray:gemm", 1024, Pivot::Min, None),
        case("blas:gemm", 1024, Pivot::Min, None),
    ];
    println!(
        "| spec | n | algo | pivot | median s | reference s | ratio | queries | calls | checked |"
    );
    println!("|---|---:|---|---|---:|---:|---:|---:|---:|---|");
    for c in &cases {
        run(c);
    }
}

fn run(c: &Case) {
    let opts = ProbeOptions {
        n: Some(c.n),
        format: Format::F32,
        accumulator: None,
        shape: c.shape,
        ..Default::default()
    };
    let options = Options {
        algorithm: c.algorithm,
        pivot: c.pivot,
        ..Options::default()
    };
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..3 {
        let mut bb = match probe::open(c.spec, &opts) {
            Ok(bb) => bb,
            Err(e) => {
                println!("| {} | {} | | | skipped: {e} | | | | | |", c.spec, c.n);
                return;
            }
        };
        let started = Instant::now();
        let r = reveal(&mut bb, &options).unwrap_or_else(|e| panic!("{}: {e}", c.spec));
        times.push(started.elapsed().as_secs_f64());
        last = Some((r, bb));
    }
    times.sort_by(f64::total_cmp);
    let median = times[1];
    let (r, mut bb) = last.expect("three runs");
    let checked = check(&r.tree, &mut bb, 20, 1)
        .map(|k| k.mismatch.is_none())
        .unwrap_or(false);
    let (reference, ratio) = match c.reference {
        Some(s) => (format!("{s:.2}"), format!("{:.2}x", s / median)),
        None => ("-".into(), "-".into()),
    };
    println!(
        "| {} | {} | {} | {:?} | {median:.3} | {reference} | {ratio} | {} | {} | {} |",
        c.spec,
        c.n,
        c.algorithm,
        c.pivot,
        r.stats.queries,
        r.stats.calls,
        if checked { "bit-exact" } else { "MISMATCH" }
    );
    for note in r.notes {
        println!("|  | note: {note} | | | | | | | | |");
    }
}
