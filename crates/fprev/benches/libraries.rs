//! Real-library reveals against the reference implementation: its
//! published timings on this kind of machine (docs/ALGORITHMS.md,
//! Reference timings), and its algorithm run here in the same process (min pivot,
//! one query per input, one row per call: `--pivot min --no-pack --batch 1`).
//!
//! ```text
//! cargo bench --bench libraries
//! ```
//!
//! Needs NumPy for the `numpy:` rows (`python3 -m pip install numpy`) and
//! the system OpenBLAS for `blas:`. Reports, per row, the median wall time
//! of 5 reveals, queries, inputs, calls (evaluations of the black box), and
//! the ratios; each tree is confirmed against the library by `check`.

use std::time::Instant;

use fprev::check::check;
use fprev::probe::ProbeOptions;
use fprev::reveal::{Algorithm, Pivot};
use fprev::{Format, Options, reveal};

const REPEATS: usize = 5;

struct Case {
    spec: &'static str,
    n: usize,
    options: Options,
    /// The reference implementation's seconds for this case, if published.
    reference: Option<f64>,
}

/// The reference implementation's algorithm: the paper's FPRev.
fn baseline() -> Options {
    Options {
        algorithm: Algorithm::Fprev,
        pivot: Pivot::Min,
        pack: false,
        batch: Some(1),
        ..Options::default()
    }
}

fn main() {
    let basic = Options {
        algorithm: Algorithm::Basic,
        ..baseline()
    };
    // The paper's algorithm, FPRev's engine as it shipped before insertion,
    // and fprev as it ships.
    let both = |spec, n, reference| {
        [
            Case {
                spec,
                n,
                options: baseline(),
                reference,
            },
            Case {
                spec,
                n,
                options: Options {
                    algorithm: Algorithm::Fprev,
                    ..Options::default()
                },
                reference,
            },
            Case {
                spec,
                n,
                options: Options::default(),
                reference,
            },
        ]
    };
    let mut cases = Vec::new();
    cases.extend(both("numpy:sum", 4096, Some(0.15)));
    cases.extend(both("numpy:sum", 16384, Some(1.06)));
    cases.push(Case {
        spec: "numpy:sum",
        n: 1024,
        options: basic,
        reference: Some(1.09),
    });
    cases.extend(both("numpy:gemv", 1024, Some(0.10)));
    cases.extend(both("numpy:gemm", 256, Some(0.07)));
    for spec in ["numpy:gemm", "ndarray:gemm", "blas:gemm"] {
        cases.push(Case {
            spec,
            n: 1024,
            options: Options::default(),
            reference: None,
        });
    }
    println!(
        "| spec | n | engine | median s | queries | inputs | calls | baseline / this | reference s | reference / this | checked |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|");
    // A baseline's median stands for the rows of its spec and size.
    let mut baseline: Option<(&str, usize, f64)> = None;
    for c in &cases {
        let own = baseline
            .filter(|&(spec, n, _)| spec == c.spec && n == c.n)
            .map(|(_, _, s)| s);
        if let Some(s) = run(c, own) {
            baseline = Some((c.spec, c.n, s));
        }
    }
}

/// Runs one case; returns its median if it is a baseline run.
fn run(c: &Case, baseline_seconds: Option<f64>) -> Option<f64> {
    let opts = ProbeOptions {
        n: Some(c.n),
        format: Format::F32,
        ..Default::default()
    };
    let o = &c.options;
    let engine = format!(
        "{} {:?}{}{}",
        o.algorithm,
        o.pivot,
        if o.pack {
            ", packed"
        } else {
            ", one query per input"
        },
        if o.batch == Some(1) {
            ", one row per call"
        } else {
            ""
        }
    );
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..REPEATS {
        let mut bb = match fprev::open(c.spec, &opts) {
            Ok(bb) => bb,
            Err(e) => {
                println!(
                    "| {} | {} | {engine} | skipped: {e} | | | | | | | |",
                    c.spec, c.n
                );
                return None;
            }
        };
        let started = Instant::now();
        let r = reveal(&mut bb, o)
            .unwrap_or_else(|e| panic!("{}: {e}", c.spec))
            .revealed()
            .expect("an order");
        times.push(started.elapsed().as_secs_f64());
        last = Some((r, bb));
    }
    times.sort_by(f64::total_cmp);
    let median = times[REPEATS / 2];
    let (r, mut bb) = last.expect("REPEATS > 0");
    let checked = check(&r.tree, &mut bb, 20, 1)
        .map(|k| k.mismatch.is_none())
        .unwrap_or(false);
    let is_baseline = !o.pack && o.batch == Some(1) && o.algorithm == Algorithm::Fprev;
    let vs_baseline = match (is_baseline, baseline_seconds) {
        (false, Some(b)) if o.algorithm != Algorithm::Basic => format!("{:.2}x", b / median),
        _ => "-".into(),
    };
    let (reference, ratio) = match c.reference {
        Some(s) => (format!("{s:.2}"), format!("{:.2}x", s / median)),
        None => ("-".into(), "-".into()),
    };
    let s = r.stats;
    println!(
        "| {} | {} | {engine} | {median:.3} | {} | {} | {} | {vs_baseline} | {reference} | {ratio} | {} |",
        c.spec,
        c.n,
        s.queries,
        s.inputs,
        s.calls,
        if checked { "bit-exact" } else { "MISMATCH" }
    );
    for note in r.notes {
        println!("|  | | note: {note:?} | | | | | | | | |");
    }
    is_baseline.then_some(median)
}
