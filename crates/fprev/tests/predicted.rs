//! Reveals that take a predicted tree as their guess (`reveal_predicted`):
//! a right prediction is proven with one masked check per node below the
//! root and comes back as it is; a wrong one is revealed in full, and the
//! tree returned is the black box's, never the prediction.

use fprev::probe::ReplayProbe;
use fprev::reduce::Replay;
use fprev::reveal::{Silent, reveal_predicted};
use fprev::tree::TreeBuilder;
use fprev::{Format, Options, Order, SummationTree, reveal};
use petgraph::graph::NodeIndex;
use proptest::prelude::*;

mod common;

fn replay(tree: &SummationTree, format: Format) -> ReplayProbe {
    ReplayProbe::new(Replay::new(tree, format), format)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn a_right_prediction_is_proven_with_one_check_a_node(n in 2usize..=600, seed: u64, ordered: bool, f64_: bool) {
        let format = if f64_ { Format::F64 } else { Format::F32 };
        let tree = common::random_tree(n, 2, ordered, seed);
        let mut probe = replay(&tree, format);
        let r = reveal_predicted(&mut probe, &Options::default(), &tree, &mut Silent).unwrap();
        prop_assert_eq!(&r.tree, &tree);
        prop_assert_eq!(r.stats.queries, n as u64 - 2);
    }

    /// One rotation away from the black box's tree, `((A+B)+C)` for
    /// `(A+(B+C))` or back, anywhere: every node but one is right, and the
    /// one wrong node's check alone cannot see past its sibling.
    #[test]
    fn a_prediction_one_rotation_off_is_caught(n in 3usize..=400, seed: u64, at in 0usize..1000, ordered: bool) {
        let tree = common::random_tree(n, 2, ordered, seed);
        let wrong = rotated(&tree, at);
        prop_assume!(wrong != tree);
        let mut probe = replay(&tree, Format::F32);
        let r = reveal_predicted(&mut probe, &Options::default(), &wrong, &mut Silent).unwrap();
        prop_assert_eq!(&r.tree, &tree);
    }

    #[test]
    fn a_wrong_prediction_reveals_the_black_box(n in 2usize..=400, seed: u64, ordered: bool) {
        let tree = common::random_tree(n, 2, ordered, seed);
        let wrong = common::random_tree(n, 2, !ordered, seed ^ 0x5eed);
        let mut probe = replay(&tree, Format::F32);
        let r = reveal_predicted(&mut probe, &Options::default(), &wrong, &mut Silent).unwrap();
        prop_assert_eq!(&r.tree, &tree);
    }

    #[test]
    fn a_prediction_off_by_one_node_is_caught(n in 34usize..=400, seed: u64, swap in 0usize..1000) {
        // The tree with two neighbouring summands exchanged: one node of
        // the prediction wrong, the rest right.
        let tree = common::random_tree(n, 2, true, seed);
        let k = swap % (n - 1);
        let text = tree.to_text();
        let (a, b) = (k.to_string(), (k + 1).to_string());
        let swapped: String = text
            .split_inclusive(['(', ')', '+'])
            .map(|tok| {
                let (num, tail) = tok.split_at(tok.trim_end_matches(['(', ')', '+']).len());
                let num = if num == a { b.as_str() } else if num == b { a.as_str() } else { num };
                format!("{num}{tail}")
            })
            .collect();
        let wrong: SummationTree = swapped.parse().unwrap();
        prop_assume!(wrong != tree);
        let mut probe = replay(&tree, Format::F32);
        let r = reveal_predicted(&mut probe, &Options::default(), &wrong, &mut Silent).unwrap();
        prop_assert_eq!(&r.tree, &tree);
    }
}

/// `tree` with one rotation at its `at`-th inner node (in post-order, modulo
/// their number) that has an inner child: `((A+B)+C)` becomes `(A+(B+C))`.
fn rotated(tree: &SummationTree, at: usize) -> SummationTree {
    let inner: Vec<NodeIndex> = tree
        .post_order()
        .into_iter()
        .filter(|&v| {
            tree.children(v)
                .iter()
                .any(|&c| !tree.children(c).is_empty())
        })
        .collect();
    let pivot = inner[at % inner.len()];
    let mut builder = TreeBuilder::new(tree.n());
    let root = copy(tree, tree.root(), pivot, &mut builder);
    builder.finish(root).unwrap()
}

fn copy(tree: &SummationTree, v: NodeIndex, pivot: NodeIndex, b: &mut TreeBuilder) -> NodeIndex {
    if let Some(i) = tree.node(v).leaf {
        return b.leaf(i);
    }
    let children = tree.children(v);
    if v == pivot {
        let (x, c) = if tree.children(children[0]).is_empty() {
            (children[1], children[0])
        } else {
            (children[0], children[1])
        };
        let [a, bb] = [0, 1].map(|k| tree.children(x)[k]);
        let a = copy(tree, a, pivot, b);
        let bb = copy(tree, bb, pivot, b);
        let c = copy(tree, c, pivot, b);
        let bc = b.sum(&[bb, c]);
        return b.sum(&[a, bc]);
    }
    let copied: Vec<NodeIndex> = children.iter().map(|&c| copy(tree, c, pivot, b)).collect();
    b.sum(&copied)
}

#[test]
fn a_pairwise_sum_of_16384_is_proven_in_far_fewer_calls_than_revealed() {
    let n = 16_384;
    let tree = Order::Pairwise.tree(n);
    let revealed = reveal(&mut replay(&tree, Format::F32), &Options::default()).unwrap();
    let mut probe = replay(&tree, Format::F32);
    let proven = reveal_predicted(&mut probe, &Options::default(), &tree, &mut Silent).unwrap();
    assert_eq!(proven.tree, tree);
    assert_eq!(proven.stats.queries, n as u64 - 2);
    assert!(
        proven.stats.calls < n as u64 / 8,
        "{} calls",
        proven.stats.calls
    );
    assert!(
        proven.stats.calls * 8 < revealed.stats.calls,
        "proven in {} calls, revealed in {}",
        proven.stats.calls,
        revealed.stats.calls
    );
}

#[test]
fn a_prediction_of_another_size_is_refused() {
    let mut probe = replay(&Order::Pairwise.tree(64), Format::F32);
    let e = reveal_predicted(
        &mut probe,
        &Options::default(),
        &Order::Pairwise.tree(65),
        &mut Silent,
    )
    .unwrap_err();
    assert!(e.to_string().contains("65 summands"), "{e}");
}
