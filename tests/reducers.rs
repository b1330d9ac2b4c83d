//! The reproducible reducers: the same bits for every thread count, and the
//! order they are documented to have, revealed by fprev itself.

use fprev::probe::{self, ProbeOptions};
use fprev::reduce::{binary_tree_sum, binary_tree_sum_threads};
use fprev::{Format, Options, SummationTree, reveal};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Stelz's `reduce(x, y)`: node `(x, y)` covers `[x, x + 2^y)`, cut at `n`;
/// written here as text, independently of the crate.
fn stelz(x: usize, y: u32, n: usize) -> String {
    if y == 0 {
        return x.to_string();
    }
    let half = 1 << (y - 1);
    if x + half >= n {
        stelz(x, y - 1, n)
    } else {
        format!("({}+{})", stelz(x, y - 1, n), stelz(x + half, y - 1, n))
    }
}

fn data(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| rng.random_range(-1.0..1.0) * 2f64.powi(rng.random_range(-30..30)))
        .collect()
}

#[test]
fn binary_tree_sum_has_the_same_bits_on_1_to_16_threads() {
    for (k, n) in [
        1,
        2,
        3,
        255,
        256,
        257,
        1000,
        16_383,
        16_384,
        16_385,
        100_000,
        1 << 18,
        300_001,
    ]
    .into_iter()
    .enumerate()
    {
        let x = data(n, k as u64);
        let x32: Vec<f32> = x.iter().map(|v| *v as f32).collect();
        let one = binary_tree_sum(&x);
        let one32 = binary_tree_sum(&x32);
        for threads in 1..=16 {
            assert_eq!(
                binary_tree_sum_threads(&x, threads).to_bits(),
                one.to_bits(),
                "n = {n}, {threads} threads"
            );
            assert_eq!(
                binary_tree_sum_threads(&x32, threads).to_bits(),
                one32.to_bits(),
                "f32 n = {n}"
            );
        }
    }
}

#[test]
fn binary_tree_sum_is_not_a_sequential_sum() {
    // Guard against a reducer that ignores its tree: on these inputs the
    // tree and a left-to-right loop give different bits.
    let x = data(10_000, 99);
    let sequential = x.iter().fold(0.0, |s, v| s + v);
    assert_ne!(binary_tree_sum(&x).to_bits(), sequential.to_bits());
}

#[test]
fn the_revealed_order_is_the_documented_tree_for_every_n_up_to_1000() {
    for n in 1usize..=1000 {
        let want: SummationTree = stelz(0, n.next_power_of_two().trailing_zeros(), n)
            .parse()
            .unwrap();
        for (spec, format) in [
            ("reduce:binary-tree", Format::F64),
            ("reduce:binary-tree:3", Format::F32),
        ] {
            if format == Format::F32 && n % 97 != 1 {
                continue;
            }
            let opts = ProbeOptions {
                n: Some(n),
                format,
                accumulator: None,
                shape: None,
            };
            let mut bb = probe::open(spec, &opts).unwrap();
            let got = reveal(&mut bb, &Options::default()).unwrap().tree;
            assert_eq!(got, want, "{spec} n = {n}");
        }
    }
}

#[test]
fn bad_reducer_specs_are_input_errors() {
    let opts = ProbeOptions {
        n: Some(8),
        ..Default::default()
    };
    for spec in [
        "reduce:kahan",
        "reduce:binary-tree:0",
        "reduce:binary-tree:many",
    ] {
        let e = probe::open(spec, &opts)
            .err()
            .unwrap_or_else(|| panic!("{spec} opened"));
        assert_eq!(e.exit_code(), 2, "{spec}: {e}");
    }
    let f16 = ProbeOptions {
        format: Format::F16,
        ..opts
    };
    assert_eq!(
        probe::open("reduce:binary-tree", &f16)
            .err()
            .unwrap()
            .exit_code(),
        2
    );
}
