//! The reproducible reducers: the same bits for every thread count, and the
//! order they are documented to have, revealed by fprev itself; the
//! pre-rounded sum's bits in every order and chunking, and its accuracy
//! against the exact sum.

use fprev::Probe;
use fprev::error::Kind;
use fprev::probe::ProbeOptions;
use fprev::reduce::{
    PreRoundable, PreRounded, binary_tree_sum, binary_tree_sum_threads, prerounded_sum,
    prerounded_sum_threads,
};
use fprev::{Format, Options, SummationTree, reveal};
use num_bigint::BigInt;
use rand::seq::SliceRandom;
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
                ..Default::default()
            };
            let mut bb = fprev::open(spec, &opts).unwrap();
            let got = reveal(&mut bb, &Options::default())
                .unwrap()
                .revealed()
                .expect("an order")
                .tree;
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
        "reduce:prerounded:0",
        "reduce:prerounded:x",
    ] {
        let e = fprev::open(spec, &opts)
            .err()
            .unwrap_or_else(|| panic!("{spec} opened"));
        assert_eq!(e.kind(), Kind::Input, "{spec}: {e}");
    }
    let f16 = ProbeOptions {
        format: Format::F16,
        ..opts
    };
    assert_eq!(
        fprev::open("reduce:binary-tree", &f16)
            .err()
            .unwrap()
            .kind(),
        Kind::Input
    );
}

/// Magnitudes over 2^-60..2^60, about a third of them followed by a partner
/// that cancels 1 to 52 of their leading bits, and a fifth of them small
/// multiples of `2^e` for the `e` where pre-rounding meets exact ties
/// (half the unit of a bin of 40 bits: `e = -1075 + 40 j`).
fn cancelling(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut x = Vec::with_capacity(n + 1);
    while x.len() < n {
        let sign = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        if rng.random_bool(0.2) {
            let tie = -1075 + 40 * rng.random_range(26..=28);
            x.push(sign * f64::from(rng.random_range(1..16)) * 2f64.powi(tie));
            continue;
        }
        let v = sign * rng.random_range(1.0..2.0) * 2f64.powi(rng.random_range(-60..=60));
        x.push(v);
        if rng.random_bool(0.5) {
            let cancel = 2f64.powi(-rng.random_range(1..=52));
            x.push(-v * (1.0 + rng.random_range(-1.0..1.0) * cancel));
        }
    }
    x.truncate(n);
    x
}

/// [`cancelling`] values and their exact negatives (the last one unpaired
/// when `n` is odd): the sum is small, so that a tie rounded to even in the
/// last level (which depends on what the bin holds) would show.
fn mirrored(n: usize, seed: u64) -> Vec<f64> {
    let half = cancelling(n.div_ceil(2), seed);
    let negated = half.iter().take(n / 2).map(|v| -v);
    half.iter().copied().chain(negated).collect()
}

fn to_f32(x: &[f64]) -> Vec<f32> {
    x.iter().map(|v| *v as f32).collect()
}

/// `x` cut at random points into chunks, each summed apart (value by value
/// or as a slice), the accumulators merged pairwise in a random order.
fn chunked<T: PreRoundable>(x: &[T], rng: &mut ChaCha8Rng) -> T {
    let mut cuts: Vec<usize> = (0..rng.random_range(0..x.len().min(40)))
        .map(|_| rng.random_range(0..=x.len()))
        .chain([0, x.len()])
        .collect();
    cuts.sort_unstable();
    let mut accs = Vec::new();
    for w in cuts.windows(2) {
        let mut acc = PreRounded::new();
        let chunk = &x[w[0]..w[1]];
        if rng.random_bool(0.2) {
            chunk.iter().for_each(|v| acc.add(*v));
        } else {
            acc.add_slice(chunk);
        }
        accs.push(acc);
    }
    while accs.len() > 1 {
        let other = accs.swap_remove(rng.random_range(0..accs.len()));
        let k = rng.random_range(0..accs.len());
        accs[k].merge(&other);
    }
    accs[0].value()
}

fn same_bits_in_any_order<T: PreRoundable + std::fmt::Debug>(x: &[T], bits: impl Fn(T) -> u64) {
    let n = x.len();
    let want = bits(prerounded_sum(x));
    let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
    let mut y = x.to_vec();
    for trial in 0..100 {
        y.shuffle(&mut rng);
        assert_eq!(
            bits(prerounded_sum(&y)),
            want,
            "n = {n}, permutation {trial}"
        );
    }
    for trial in 0..100 {
        y.shuffle(&mut rng);
        assert_eq!(
            bits(chunked(&y, &mut rng)),
            want,
            "n = {n}, chunking {trial}"
        );
    }
}

const SIZES: [usize; 12] = [1, 2, 3, 7, 8, 9, 17, 100, 1000, 4099, 10_000, 100_003];

#[test]
fn prerounded_sum_has_the_same_bits_in_any_order_and_chunking() {
    for (k, n) in SIZES.into_iter().enumerate() {
        for x in [cancelling(n, 100 + k as u64), mirrored(n, 100 + k as u64)] {
            same_bits_in_any_order(&x, f64::to_bits);
            same_bits_in_any_order(&to_f32(&x), |v| u64::from(v.to_bits()));
        }
    }
    // Up to f64::MAX, where the top bin is kept scaled (2^920 keeps the
    // ties on bin boundaries).
    for seed in 0..4 {
        let mut huge: Vec<f64> = mirrored(999, seed)
            .iter()
            .map(|v| v * 2f64.powi(920))
            .collect();
        huge.extend([
            f64::MAX,
            -f64::MAX,
            3.0 * 2f64.powi(1005),
            -3.0 * 2f64.powi(1005),
        ]);
        same_bits_in_any_order(&huge, f64::to_bits);
    }
}

#[test]
fn prerounded_sum_has_the_same_bits_on_1_to_16_threads() {
    for (k, n) in [1, 2, 1000, 32_767, 32_768, 32_769, 100_003, 300_001]
        .into_iter()
        .enumerate()
    {
        let x = cancelling(n, 200 + k as u64);
        let x32 = to_f32(&x);
        let (one, one32) = (prerounded_sum(&x), prerounded_sum(&x32));
        for threads in 1..=16 {
            assert_eq!(
                prerounded_sum_threads(&x, threads).to_bits(),
                one.to_bits(),
                "n = {n}, {threads} threads"
            );
            assert_eq!(
                prerounded_sum_threads(&x32, threads).to_bits(),
                one32.to_bits(),
                "f32 n = {n}, {threads} threads"
            );
        }
    }
}

/// `v` in units of 2^-1074, exactly.
fn exact(v: f64) -> BigInt {
    let bits = v.to_bits();
    let (biased, frac) = ((bits >> 52) & 0x7ff, bits & ((1 << 52) - 1));
    let m = if biased == 0 {
        BigInt::from(frac)
    } else {
        BigInt::from(frac | 1 << 52) << (biased - 1)
    };
    if v < 0.0 { -m } else { m }
}

fn exact_sum(x: &[f64]) -> BigInt {
    x.iter().map(|v| exact(*v)).sum()
}

/// `|r - sum|`, in units of 2^-1074.
fn error(r: f64, sum: &BigInt) -> BigInt {
    (exact(r) - sum).magnitude().clone().into()
}

/// Half an ulp of `r`, plus `n 2^-80 max|x|` for the bits under the three
/// levels: the documented bound, in units of 2^-1074, doubled.
fn twice_the_bound(r: f64, ulp: f64, x: &[f64]) -> BigInt {
    let max = x.iter().map(|v| exact(v.abs())).max().unwrap();
    exact(r.abs() + ulp) - exact(r.abs()) + ((max * x.len()) >> 79) + 2
}

#[test]
fn prerounded_sum_is_at_least_as_accurate_as_a_sequential_sum() {
    // On a single trial a plain sum can be luckier: when a pair cancels
    // exactly and what is left lies more than 80 bits under the largest
    // summand, the sequential sum is exact and three levels are not (2 of
    // these 480 trials). So: the documented bound on every trial, the worst
    // error of each size, and how often the plain sum wins.
    let (mut trials, mut worse) = (0, 0);
    for (k, n) in SIZES.into_iter().enumerate() {
        let mut worst = [BigInt::ZERO, BigInt::ZERO, BigInt::ZERO, BigInt::ZERO];
        for trial in 0..20 {
            let x = cancelling(n, 1000 * k as u64 + trial);
            let sum = exact_sum(&x);
            let r = prerounded_sum(&x);
            let pre = error(r, &sum);
            let sequential = error(x.iter().fold(0.0, |s, v| s + v), &sum);
            let ulp = r.abs().next_up() - r.abs();
            assert!(
                pre.clone() * 2 <= twice_the_bound(r, ulp, &x),
                "n = {n}, trial {trial}"
            );
            // f32 summands, f32 result.
            let x32 = to_f32(&x);
            let x32w: Vec<f64> = x32.iter().map(|v| f64::from(*v)).collect();
            let sum32 = exact_sum(&x32w);
            let r32 = prerounded_sum(&x32);
            let pre32 = error(r32.into(), &sum32);
            let sequential32 = error(x32.iter().fold(0.0f32, |s, v| s + v).into(), &sum32);
            let ulp32 = f64::from(r32.abs().next_up() - r32.abs());
            assert!(
                pre32.clone() * 2 <= twice_the_bound(r32.into(), ulp32, &x32w),
                "f32 n = {n}, trial {trial}"
            );
            trials += 2;
            worse += usize::from(pre > sequential) + usize::from(pre32 > sequential32);
            for (w, e) in worst.iter_mut().zip([pre, sequential, pre32, sequential32]) {
                *w = e.max(w.clone());
            }
        }
        let [pre, sequential, pre32, sequential32] = worst;
        assert!(pre <= sequential, "n = {n}: {pre} > {sequential}");
        assert!(
            pre32 <= sequential32,
            "f32 n = {n}: {pre32} > {sequential32}"
        );
    }
    assert!(
        worse * 100 <= trials,
        "{worse} of {trials} worse than sequential"
    );
}

#[test]
fn with_every_level_the_sum_is_correctly_rounded() {
    for (k, n) in SIZES.into_iter().enumerate() {
        let mut x = cancelling(n, 300 + k as u64);
        x.extend([1e300, 3e-320, -1e300, 1e-310]);
        let sum = exact_sum(&x);
        let mut acc = PreRounded::with_levels(53);
        acc.add_slice(&x);
        let r = acc.value();
        let e = error(r, &sum);
        assert!(e <= error(r.next_up(), &sum), "n = {n}");
        assert!(e <= error(r.next_down(), &sum), "n = {n}");
    }
}

#[test]
fn prerounded_sum_edge_cases() {
    let bits = |x: &[f64]| prerounded_sum(x).to_bits();
    assert_eq!(bits(&[]), 0.0f64.to_bits());
    assert_eq!(bits(&[-0.0, -0.0]), 0.0f64.to_bits(), "documented: +0.0");
    assert!(prerounded_sum(&[1.0, f64::NAN, 2.0]).is_nan());
    assert!(prerounded_sum(&[f64::INFINITY, 1.0, f64::NEG_INFINITY]).is_nan());
    assert_eq!(
        prerounded_sum(&[f64::INFINITY, 1.0, f64::INFINITY]),
        f64::INFINITY
    );
    assert_eq!(
        prerounded_sum(&[-1.0, f64::NEG_INFINITY]),
        f64::NEG_INFINITY
    );
    // Near overflow: no intermediate overflow, and IEEE's answer past it.
    let max = f64::MAX;
    assert_eq!(prerounded_sum(&[max, max, -max]), max);
    let within_80_bits = 3.0 * 2f64.powi(940);
    assert_eq!(prerounded_sum(&[max, within_80_bits, -max]), within_80_bits);
    assert_eq!(prerounded_sum(&[max, max]), f64::INFINITY);
    assert_eq!(prerounded_sum(&[-max, -max / 2.0]), f64::NEG_INFINITY);
    assert_eq!(prerounded_sum(&[f32::MAX, f32::MAX, -f32::MAX]), f32::MAX);
    assert_eq!(prerounded_sum(&[f32::MAX, f32::MAX]), f32::INFINITY);
    // Subnormals add exactly.
    let tiny = f64::from_bits(1);
    assert_eq!(prerounded_sum(&vec![tiny; 1000]), 1000.0 * tiny);
    assert_eq!(
        prerounded_sum(&[f64::MIN_POSITIVE, -tiny]),
        f64::MIN_POSITIVE - tiny
    );
    let tiny32 = f32::from_bits(1);
    assert_eq!(prerounded_sum(&vec![tiny32; 1000]), 1000.0 * tiny32);
    // Cancellation: 3 levels keep 80 bits below the largest value...
    assert_eq!(prerounded_sum(&[1e16, 1.0, -1e16]), 1.0);
    assert_eq!([1e16, 1.0, -1e16].iter().sum::<f64>(), 0.0);
    // ...and all 53 every bit.
    let mut all = PreRounded::with_levels(53);
    all.add_slice(&[1e308, 1.0, -1e308]);
    assert_eq!(all.value(), 1.0);
}

#[test]
fn the_prerounded_probe_sums_like_prerounded_sum() {
    assert!(
        fprev::spec::FAMILIES
            .iter()
            .any(|f| f.pattern == "reduce:prerounded[:THREADS]")
    );
    let x = cancelling(1000, 7);
    let x32 = to_f32(&x);
    for (format, input, want) in [
        (Format::F64, x.clone(), prerounded_sum(&x)),
        (
            Format::F32,
            x32.iter().map(|v| f64::from(*v)).collect(),
            f64::from(prerounded_sum(&x32)),
        ),
    ] {
        let opts = ProbeOptions {
            n: Some(1000),
            format,
            ..Default::default()
        };
        let mut one = fprev::open("reduce:prerounded", &opts).unwrap();
        let mut four = fprev::open("reduce:prerounded:4", &opts).unwrap();
        let mut out = [0.0; 2];
        one.sum(&input, &mut out[..1]).unwrap();
        four.sum(&input, &mut out[1..]).unwrap();
        assert_eq!(out[0].to_bits(), want.to_bits(), "{format:?}");
        assert_eq!(out[1].to_bits(), want.to_bits(), "{format:?}");
    }
}
