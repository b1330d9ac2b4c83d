//! Insertion, the default algorithm (docs/ALGORITHMS.md, Insertion):
//! trees known independently (the orders' own definitions, replayed random
//! trees) come back, in the calls the method promises, and FPRev's engine
//! takes over where insertion does not hold.

mod common;

use fprev::probe::{ProbeOptions, ReplayProbe};
use fprev::reduce::Replay;
use fprev::reveal::{Algorithm, Outcome};
use fprev::{Format, Options, Order, SummationTree, reveal};
use proptest::prelude::*;

fn fprev_engine() -> Options {
    Options {
        algorithm: Algorithm::Fprev,
        ..Options::default()
    }
}

/// The tree `options` reveal of `tree` replayed in `format`, and its calls.
fn revealed(tree: &SummationTree, format: Format, options: &Options) -> (SummationTree, u64) {
    let mut probe = ReplayProbe::new(Replay::new(tree, format), format);
    match reveal(&mut probe, options) {
        Ok(Outcome::Revealed(r)) => (r.tree, r.stats.calls),
        other => panic!("no tree: {other:?}"),
    }
}

/// Library orders are guessed: a fraction of `n` calls where FPRev's engine
/// takes about `n` or more, in f32 and f64, the proof among them.
#[test]
fn library_orders_are_revealed_in_a_fraction_of_n_calls() {
    let n = 4_096;
    for (order, most) in [
        ("pairwise", n / 4),
        ("binary-tree", n / 4),
        ("strided:8", n / 4),
        ("blocked:64", n / 2),
    ] {
        let tree = order.parse::<Order>().unwrap().tree(n);
        for format in [Format::F32, Format::F64] {
            let (got, calls) = revealed(&tree, format, &Options::default());
            assert_eq!(got, tree, "{order} {format}");
            let (_, fprev) = revealed(&tree, format, &fprev_engine());
            assert!(
                calls as usize <= most && calls < fprev,
                "{order} {format}: {calls} calls (FPRev's engine: {fprev})"
            );
        }
    }
}

/// A chain allows no input more than one of its places (docs: Chains):
/// insertion asks one input a summand, as FPRev's engine does left to
/// right, and half of what it asks right to left.
#[test]
fn chains_cost_one_input_a_summand() {
    let n = 2_048;
    for order in [Order::Sequential, Order::Reverse] {
        let tree = order.tree(n);
        let (got, calls) = revealed(&tree, Format::F32, &Options::default());
        let (_, fprev) = revealed(&tree, Format::F32, &fprev_engine());
        assert_eq!(got, tree, "{order}");
        assert!(
            calls as usize <= n && calls <= fprev,
            "{order}: {calls} calls, FPRev's engine {fprev}"
        );
    }
}

/// A black box known to fuse goes to FPRev's engine at once: its
/// calls are FPRev's own. One that fuses unsaid shows a fused node at its
/// third child (the check of the place found by elimination loses its
/// bit), and FPRev's engine reveals the fused tree, at the cost of a
/// handful of calls.
#[test]
fn fused_nodes_are_revealed_by_fprevs_engine() {
    for (spec, n) in [("native:fused:17", 1_024), ("native:fused:5", 1_333)] {
        let opts = ProbeOptions {
            n: Some(n),
            ..Default::default()
        };
        let open = || fprev::open(spec, &opts).unwrap();
        let calls = |probe: &mut dyn fprev::Probe, options: &Options| {
            let r = reveal(probe, options).unwrap().revealed().unwrap();
            (r.tree, r.stats.calls)
        };
        let (want, fprev) = calls(&mut open(), &fprev_engine());
        assert!(want.widest() > 2, "{spec}");
        let (declared, declared_calls) = calls(&mut open(), &Options::default());
        assert_eq!(declared, want, "{spec}");
        assert_eq!(declared_calls, fprev, "{spec}");
        // `Rows` forwards the box's formats, not what is known of its tree:
        // a library whose kernel fuses without saying so.
        let (unsaid, inserted) = calls(&mut common::Rows(open(), 1), &Options::default());
        assert_eq!(unsaid, want, "{spec}, fused unsaid");
        assert!(
            fprev < inserted && inserted <= fprev + 16,
            "{spec}, fused unsaid: {inserted} calls, FPRev's engine {fprev}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Replayed random binary trees, shuffled or adding neighbours, of every
    /// size from 1,024 (where insertion starts) come back as they are, in
    /// f32 and f64, one input a call or seven.
    #[test]
    fn random_binary_trees_come_back(
        n in 1_024usize..3_000, seed: u64, ordered: bool, wide: bool,
        rows in prop::sample::select(vec![1usize, 7]),
    ) {
        let tree = common::random_tree(n, 2, ordered, seed);
        let (format, acc) = match wide {
            true => (Format::F64, Format::F64),
            false => (Format::F32, Format::F32),
        };
        let inner = ReplayProbe::new(Replay::new(&tree, acc), format);
        let mut probe = common::Rows(inner, rows);
        let got = reveal(&mut probe, &Options::default()).unwrap().revealed().unwrap();
        prop_assert_eq!(got.tree, tree);
    }
}
