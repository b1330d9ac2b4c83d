//! The reproducible reducers against a plain left-to-right sum, in the same
//! run: `cargo bench --bench reducers`. Medians of 7 runs at 2^20 and 2^24
//! doubles.

use std::hint::black_box;
use std::time::Instant;

use fprev::reduce::{binary_tree_sum, binary_tree_sum_on};

fn median(mut f: impl FnMut() -> f64) -> f64 {
    let mut t: Vec<f64> = (0..7)
        .map(|_| {
            let started = Instant::now();
            black_box(f());
            started.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[3]
}

fn main() {
    println!(
        "| n | plain sum ms | binary tree, 1 thread ms | ratio | binary tree, 2 threads ms | ratio |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a pool");
    for log in [20, 24] {
        let x: Vec<f64> = (0..1usize << log)
            .map(|i| ((i * 7919) % 1000) as f64 * 1e-3)
            .collect();
        let plain = median(|| x.iter().fold(0.0, |s, v| s + v));
        let one = median(|| binary_tree_sum(&x));
        let par = median(|| binary_tree_sum_on(&two, &x));
        assert_eq!(
            binary_tree_sum(&x).to_bits(),
            binary_tree_sum_on(&two, &x).to_bits()
        );
        println!(
            "| 2^{log} | {:.3} | {:.3} | {:.2}x | {:.3} | {:.2}x |",
            plain * 1e3,
            one * 1e3,
            one / plain,
            par * 1e3,
            par / plain
        );
    }
}
