//! Reveals that take a predicted tree as their guess (`reveal_predicted`):
//! a right prediction is proven with one masked check per node and comes
//! back as it is; a wrong one is revealed in full, and the tree returned is
//! the black box's, never the prediction, nor a tree for a black box that
//! follows none.

use fprev::probe::Probe;
use fprev::probe::ReplayProbe;
use fprev::reduce::Replay;
use fprev::reveal::{Algorithm, Outcome, Silent, reveal_predicted};
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
        let r = reveal_predicted(&mut probe, &Options::default(), &tree, &mut Silent).unwrap().revealed().expect("an order");
        prop_assert_eq!(&r.tree, &tree);
        prop_assert_eq!(r.stats.queries, n as u64 - 1);
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
        let r = reveal_predicted(&mut probe, &Options::default(), &wrong, &mut Silent).unwrap().revealed().expect("an order");
        prop_assert_eq!(&r.tree, &tree);
    }

    #[test]
    fn a_wrong_prediction_reveals_the_black_box(n in 2usize..=400, seed: u64, ordered: bool) {
        let tree = common::random_tree(n, 2, ordered, seed);
        let wrong = common::random_tree(n, 2, !ordered, seed ^ 0x5eed);
        let mut probe = replay(&tree, Format::F32);
        let r = reveal_predicted(&mut probe, &Options::default(), &wrong, &mut Silent).unwrap().revealed().expect("an order");
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
        let r = reveal_predicted(&mut probe, &Options::default(), &wrong, &mut Silent).unwrap().revealed().expect("an order");
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
    let fprev = Options {
        algorithm: Algorithm::Fprev,
        ..Options::default()
    };
    let revealed = reveal(&mut replay(&tree, Format::F32), &fprev)
        .unwrap()
        .revealed()
        .expect("an order");
    // Insertion guesses its places and proves the tree it built: a small
    // share of n, its proof among the calls.
    let inserted = reveal(&mut replay(&tree, Format::F32), &Options::default())
        .unwrap()
        .revealed()
        .expect("an order");
    assert_eq!(inserted.tree, tree);
    assert!(
        inserted.stats.calls < n as u64 / 4,
        "inserted in {} calls",
        inserted.stats.calls
    );
    let mut probe = replay(&tree, Format::F32);
    let proven = reveal_predicted(&mut probe, &Options::default(), &tree, &mut Silent)
        .unwrap()
        .revealed()
        .expect("an order");
    assert_eq!(proven.tree, tree);
    assert_eq!(proven.stats.queries, n as u64 - 1);
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

/// The exact sum of f32 summands, rounded once to f32: it keeps every unit
/// a mask meets, so it follows no tree.
struct Exact {
    n: usize,
}

impl Probe for Exact {
    fn n(&self) -> usize {
        self.n
    }

    fn format(&self) -> Format {
        Format::F32
    }

    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> fprev::Result<()> {
        for (row, o) in inputs.chunks_exact(self.n).zip(out) {
            *o = Format::F32.round(exact_sum(row));
        }
        Ok(())
    }
}

/// Shewchuk's sum: non-overlapping partials, exact, whose f64 sum is the
/// exact sum rounded (to nearest, but for ties of the last partials).
fn exact_sum(xs: &[f64]) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    for &x in xs {
        let mut x = x;
        let mut kept = 0;
        for k in 0..partials.len() {
            let mut y = partials[k];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[kept] = lo;
                kept += 1;
            }
            x = hi;
        }
        partials.truncate(kept);
        partials.push(x);
    }
    partials.iter().rev().sum()
}

/// Masked checks that only ask units to survive pass for any prediction of
/// an exact sum: the checks that ask units to be lost refute it, and the
/// reveal that follows finds no order.
#[test]
fn no_prediction_is_proven_for_an_exact_sum() {
    for n in [3, 4, 17, 300] {
        for tree in [Order::Sequential.tree(n), Order::Pairwise.tree(n)] {
            let r = reveal_predicted(&mut Exact { n }, &Options::default(), &tree, &mut Silent);
            assert!(
                matches!(r, Ok(Outcome::OrderIndependent(_))),
                "n = {n}: {:?}",
                r.map(|r| r.map(|r| r.tree.to_string()))
            );
        }
    }
}

/// A workflow reveal from 1,024 summands first proves the tree of a known
/// formula that one replay picks: a black box with that tree is proven in
/// far fewer calls than revealed, and one rotation away from it (a near
/// miss the replay may or may not catch) is revealed as its own tree, as
/// is every tree when asked to reveal afresh.
#[test]
fn a_reveal_proves_a_known_formula_and_reveals_a_near_miss() {
    use fprev::formula::{Formula, known::KNOWN};
    use fprev::workflow::{self, Outcome, Request};
    let reveal_with = |tree: &SummationTree, afresh: bool| {
        let mut probe = replay(tree, Format::F32);
        let request = Request {
            afresh,
            ..Request::default()
        };
        let mut open = |_: &fprev::probe::ProbeOptions| -> fprev::Result<Box<dyn Probe>> {
            unreachable!("a reveal of one size opens no other")
        };
        match workflow::reveal_opened(&mut probe, "replay", &request, &mut open, &mut Silent)
            .unwrap()
        {
            Outcome::Revealed(r) => r.document,
            _ => panic!("a tree"),
        }
    };
    for (k, n) in [(0, 5_000), (1, 4_099), (2, 2_048), (KNOWN.len() - 1, 9_000)] {
        let formula: Formula = KNOWN[k].formula.parse().unwrap();
        let tree = formula.tree(n);
        let doc = reveal_with(&tree, false);
        assert_eq!(*doc.tree(), tree, "{formula} at n = {n}");
        let proven = doc.stats.unwrap().calls;
        let doc = reveal_with(&tree, true);
        assert_eq!(*doc.tree(), tree);
        let afresh = doc.stats.unwrap().calls;
        eprintln!("{formula} at n = {n}: proven in {proven} calls, revealed in {afresh}");
        assert!(
            proven < afresh,
            "{formula} at n = {n}: {proven} calls, {afresh} afresh"
        );
        for at in [0, 7, 1_000] {
            let near = rotated(&tree, at);
            assert_eq!(
                *reveal_with(&near, false).tree(),
                near,
                "{formula}, rotated at {at}"
            );
        }
    }
}
