//! What the arithmetic reveal costs next to the order reveal it follows:
//! calls and wall time of each, medians of five runs, for `numpy:sum` and
//! `blas:dot` (f32) at n = 1,024 and 16,384, and at 16,383 where sdot has a
//! tail in f64. The target is a share under 25%. As `fprev reveal` runs
//! it: after the order's confirmation (not counted on either side), whose
//! replay in plain additions it reuses when the sample says every node
//! adds so.
//!
//! ```text
//! cargo bench -p fprev --bench arithmetic
//! cargo bench -p fprev --bench arithmetic -- write   # also outputs/arith/bench.md
//! ```

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use fprev::check::{CONFIRM_TRIALS, check_row};
use fprev::probe::ProbeOptions;
use fprev::reveal::arithmetic::{ArithOptions, reveal_arithmetic};
use fprev::{Format, Options, reveal};

const RUNS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let write = std::env::args().any(|a| a == "write");
    let mut table = String::from(
        "| black box | n | order: calls | order: s | arithmetic: calls | arithmetic: s | \
         nodes, products asked | model | calls share | time share |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for spec in ["numpy:sum", "blas:dot"] {
        for n in [1_024, 16_384, 16_383] {
            let opts = ProbeOptions {
                n: Some(n),
                format: Format::F32,
                ..Default::default()
            };
            let mut black_box = match fprev::open(spec, &opts) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("{spec}: not run: {e}");
                    continue;
                }
            };
            let (mut order_s, mut arith_s) = (Vec::new(), Vec::new());
            let (mut order_calls, mut arith_calls, mut asked) = (0, 0, (0, 0));
            let mut model = String::new();
            for _ in 0..RUNS {
                let started = Instant::now();
                let r = reveal(&mut black_box, &Options::default()).expect("the order");
                order_s.push(started.elapsed().as_secs_f64());
                order_calls = r.stats.calls;
                let plain = check_row(&r.tree, &mut black_box, CONFIRM_TRIALS, 0, 0)
                    .expect("the confirmation");
                let arith = ArithOptions {
                    confirmed_plain: plain
                        .mismatch
                        .is_none()
                        .then_some(plain.accumulator)
                        .flatten(),
                    ..ArithOptions::default()
                };
                let started = Instant::now();
                let found =
                    reveal_arithmetic(&mut black_box, &r.tree, &arith).expect("the arithmetic");
                arith_s.push(started.elapsed().as_secs_f64());
                arith_calls = found.calls;
                asked = (found.nodes_asked, found.products_asked);
                model = found.model.to_string();
            }
            let (o, a) = (median(order_s), median(arith_s));
            let row = format!(
                "| {spec} | {n} | {order_calls} | {o:.4} | {arith_calls} | {a:.4} | {}, {} | \
                 {model} | {:.1}% | {:.1}% |\n",
                asked.0,
                asked.1,
                100.0 * arith_calls as f64 / order_calls as f64,
                100.0 * a / o
            );
            eprint!("{row}");
            table += &row;
        }
    }
    println!("{table}");
    if write {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../outputs/arith");
        std::fs::create_dir_all(&dir).expect("outputs/arith can be made");
        let mut md = String::new();
        let _ = writeln!(
            md,
            "Arithmetic reveal against the order reveal it follows (medians of {RUNS} runs, \
             `cargo bench -p fprev --bench arithmetic -- write`; calls are exact, times are \
             this machine's).\n"
        );
        md += &table;
        std::fs::write(dir.join("bench.md"), md).expect("bench.md written");
    }
}
