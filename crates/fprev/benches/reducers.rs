//! The reproducible reducers against a plain left-to-right sum, in the same
//! run: `cargo bench --bench reducers`. Medians of 7 runs at 2^20 and 2^24
//! doubles, times and ratios to the plain sum.

use std::hint::black_box;
use std::time::Instant;

use fprev::reduce::{binary_tree_sum, binary_tree_sum_on, prerounded_sum, prerounded_sum_on};

/// A reducer on this thread, and on the threads of a pool.
type Sum = fn(&[f64]) -> f64;
type SumOn = fn(&rayon::ThreadPool, &[f64]) -> f64;

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
    println!("| n | reducer | 1 thread ms | ratio | 2 threads ms | ratio |");
    println!("|---:|---|---:|---:|---:|---:|");
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a pool");
    for log in [20, 24] {
        let x: Vec<f64> = (0..1usize << log)
            .map(|i| ((i * 7919) % 1000) as f64 * 1e-3)
            .collect();
        let plain = median(|| x.iter().fold(0.0, |s, v| s + v));
        println!("| 2^{log} | plain sum | {:.3} | 1.00x | | |", plain * 1e3);
        let reducers: [(&str, Sum, SumOn); 2] = [
            ("binary tree", binary_tree_sum, binary_tree_sum_on),
            ("pre-rounded", prerounded_sum, prerounded_sum_on),
        ];
        for (name, one, on) in reducers {
            assert_eq!(one(&x).to_bits(), on(&two, &x).to_bits(), "{name}");
            let single = median(|| one(black_box(&x)));
            let par = median(|| on(&two, black_box(&x)));
            println!(
                "| 2^{log} | {name} | {:.3} | {:.2}x | {:.3} | {:.2}x |",
                single * 1e3,
                single / plain,
                par * 1e3,
                par / plain
            );
        }
    }
}
