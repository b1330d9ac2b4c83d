//! What the arithmetic reveal adds to a reveal, next to the order reveal
//! it follows: calls and wall time, medians of eleven runs, for
//! `numpy:sum` and `blas:dot` (f32) at n = 1,024 and 16,384, and at 16,383
//! where sdot has a tail in f64. The target is a share under 25%.
//!
//! After the order, `fprev reveal --no-arith` replays the tree in plain
//! additions ([`check_row`]); `fprev reveal` runs [`confirm_arithmetic`]
//! instead. The arithmetic's cost is the difference: its queries, plus,
//! of a black box that multiplies, what the replay of its model on random
//! `x` and `y` costs over the plain replay it stands for (one replay
//! confirms the order and the model), or, of one that only adds, nothing
//! more where plain additions replayed it (that replay confirms the
//! model). The raw times are in the table too.
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
use fprev::reveal::arithmetic::{ArithOptions, confirm_arithmetic};
use fprev::{Format, Options, reveal};

const RUNS: usize = 11;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let write = std::env::args().any(|a| a == "write");
    let mut table = String::from(
        "| black box | n | order: calls | order: s | plain replay: calls, s | \
         with arithmetic: calls, s | added: calls, s | nodes, products asked | model | \
         calls share | time share |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
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
            let (mut order_s, mut plain_s, mut with_s) = (Vec::new(), Vec::new(), Vec::new());
            let (mut order_calls, mut plain_calls, mut with_calls) = (0, 0, 0);
            let (mut asked, mut model) = ((0, 0), String::new());
            for _ in 0..RUNS {
                let started = Instant::now();
                let r = reveal(&mut black_box, &Options::default())
                    .expect("the order")
                    .revealed()
                    .expect("an order");
                order_s.push(started.elapsed().as_secs_f64());
                order_calls = r.stats.calls;
                let started = Instant::now();
                let plain = check_row(&r.tree, &mut black_box, CONFIRM_TRIALS, 0, 0)
                    .expect("the plain replay");
                plain_s.push(started.elapsed().as_secs_f64());
                plain_calls = plain.trials as u64;
                let started = Instant::now();
                let arith = ArithOptions::default();
                let confirmed = confirm_arithmetic(&mut black_box, &r.tree, None, &arith, true)
                    .expect("the confirmation");
                with_s.push(started.elapsed().as_secs_f64());
                let found = confirmed
                    .arithmetic
                    .expect("sought")
                    .expect("the arithmetic");
                let plain_trials = confirmed.plain.map_or(0, |p| p.trials as u64);
                with_calls = plain_trials + found.calls;
                asked = (found.nodes_asked, found.products_asked);
                model = found.model.to_string();
            }
            let (o, p, w) = (median(order_s), median(plain_s), median(with_s));
            let added_calls = with_calls as f64 - plain_calls as f64;
            let row = format!(
                "| {spec} | {n} | {order_calls} | {o:.4} | {plain_calls}, {p:.4} | \
                 {with_calls}, {w:.4} | {added_calls}, {:.4} | {}, {} | {model} | {:.1}% | \
                 {:.1}% |\n",
                w - p,
                asked.0,
                asked.1,
                100.0 * added_calls / order_calls as f64,
                100.0 * (w - p) / o
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
            "What the arithmetic reveal adds to a reveal: `fprev reveal` against `fprev reveal \
             --no-arith` after the same order reveal (medians of {RUNS} runs, `cargo bench -p \
             fprev --bench arithmetic -- write`; calls are exact, times are this machine's). \
             \"plain replay\" is the order's confirmation in plain additions that \
             `--no-arith` makes; \"with arithmetic\" is the confirmation and the arithmetic \
             that `fprev reveal` makes instead (for a black box that multiplies, one replay \
             of the model on random x and y confirms both); \"added\" is the difference, and \
             the shares are of the order reveal's.\n"
        );
        md += &table;
        std::fs::write(dir.join("bench.md"), md).expect("bench.md written");
    }
}
