//! The candidate formulas a tree suggests: the formulas tried, simplest
//! first, with counts the trees show; the same formula in blocks; the
//! lanes of a vectorised kernel, inferred from the lanes themselves.

use petgraph::graph::NodeIndex;

use crate::formula::{Formula, Tail};
use crate::order::Order;
use crate::tree::{SummationTree, TreeBuilder};

use super::{MOST_REGIMES, infer, join};

/// The formula that explains the trees before `trees[from]`, in blocks,
/// if that regenerates every tree: `blocks(B, formula, OUTER)` with `B` a
/// power of two below the first size it does not explain (sizes up to a
/// block past it, such as one summand more, can agree with both), those
/// blocks as the body of a multiple of 2, 4 or 8 with its tail apart, or
/// `kblocks(Q, U, formula)` (or `kblocks(Q, formula)`) with `Q` the size
/// of a join above summand 0 in a tree it does not explain. Where no one
/// candidate regenerates every tree, up to [`MOST_REGIMES`] of them in
/// turn may (OpenBLAS's GEMM changes its blocking of `K` once it
/// threads): the formula `below` their switches, and the gaps where each
/// switch lies.
pub(super) fn blocked(
    formula: &Formula,
    trees: &[&SummationTree],
    from: usize,
) -> Option<(Formula, Vec<(usize, usize)>)> {
    let next = trees[from].n();
    let boxed = || Box::new(formula.clone());
    let powers = std::iter::successors(Some(2usize), |b| Some(b * 2)).take_while(|&b| b < next);
    let blocks = powers.flat_map(|b| {
        let plain = [Order::Sequential, Order::Pairwise]
            .into_iter()
            .map(move |outer| Formula::Blocks(b, boxed(), Box::new(outer.into())));
        // The blocks of a body, its short tail summed apart (OpenBLAS's
        // GEMV: blocks of 4,096 over the largest multiple of 4).
        let in_body = [2, 4, 8].into_iter().map(move |m| {
            let blocks = Formula::Blocks(b, boxed(), Box::new(Order::Sequential.into()));
            let tail = Tail::Apart(Box::new(Order::Sequential.into()));
            Formula::Body(m, Box::new(blocks), tail)
        });
        // Whole blocks, the rest apart in quarters of a block, then
        // sixteenths, then what is left (a lane of XLA's vectorised sum:
        // chunks of 64, its rest in pieces of 16 and 4).
        let pieces = (b >= 16).then(move || {
            let blocks = Formula::Blocks(b, boxed(), Box::new(Order::Sequential.into()));
            let rest = Formula::Pieces(vec![b / 4, b / 16], boxed());
            Formula::Body(b, Box::new(blocks), Tail::Apart(Box::new(rest)))
        });
        plain.chain(in_body).chain(pieces)
    });
    let mut joins: Vec<usize> = trees[from..]
        .iter()
        .flat_map(|t| joins_above_0(t))
        .collect();
    joins.sort_unstable();
    joins.dedup();
    // Blocks smaller than sizes it explains would change those.
    joins.retain(|&q| q >= trees[from - 1].n() / 2);
    let kblocks = joins.into_iter().flat_map(|q| {
        [None, Some(1), Some(2), Some(4), Some(8), Some(16)]
            .into_iter()
            .filter(move |&u| u.is_none_or(|u| u <= q))
            .map(move |u| Formula::KBlocks(q, u, boxed()))
    });
    let candidates: Vec<Formula> = blocks.chain(kblocks).collect();
    let gives = |f: &Formula, t: &SummationTree| &f.tree(t.n()) == t;
    // How many trees from `at` on `f` gives in a row.
    let run = |f: &Formula, at: usize| trees[at..].iter().take_while(|t| gives(f, t)).count();
    let mut regimes: Vec<(usize, Formula)> = Vec::new();
    let mut gaps = Vec::new();
    let mut at = from;
    while at < trees.len() && regimes.len() < MOST_REGIMES {
        // The first regime keeps the sizes below `from` too (the tree it
        // does not explain first: most candidates fail there).
        let mut best: Option<(usize, &Formula)> = None;
        for f in &candidates {
            if !gives(f, trees[at])
                || (regimes.is_empty() && !trees[..from].iter().all(|t| gives(f, t)))
            {
                continue;
            }
            let count = run(f, at);
            if best.is_none_or(|(most, _)| count > most) {
                best = Some((count, f));
            }
            if at + count == trees.len() {
                break;
            }
        }
        let (count, f) = best?;
        // A later regime seen at one size only is no evidence of a rule.
        if !regimes.is_empty() && count < 2 {
            return None;
        }
        if regimes.is_empty() {
            regimes.push((trees[0].n(), f.clone()));
        } else {
            gaps.push((trees[at - 1].n() + 1, trees[at].n()));
            regimes.push((trees[at].n(), f.clone()));
        }
        at += count;
    }
    (at == trees.len()).then(|| (join(regimes), gaps))
}

/// The formula of trees that a vectorised kernel sums (XLA's reduction
/// on CPU past 4,095 summands): `K` interleaved lanes, `K` the partner of
/// summand 0, each lane a subtree whose formula is inferred from the lanes
/// of every tree, their sums combined by one order. `None` when the trees
/// are not so made, or no formula gives every one of them.
pub(super) fn vectorised(trees: &[&SummationTree]) -> Option<Formula> {
    // The lane count: summand 0's partner (1 is no lanes at all).
    let k = crate::shape::partner_of_0(trees.first()?).filter(|&k| k > 1)?;
    let mut lanes = Vec::new();
    let mut combined = Vec::new();
    for t in trees {
        let (lane_trees, outer) = split_lanes(t, k)?;
        lanes.extend(lane_trees);
        combined.push(outer);
    }
    let inner = infer(&lanes).formula?;
    let outer = [
        Formula::Fold,
        Order::Pairwise.into(),
        Order::Sequential.into(),
        Order::BinaryTree.into(),
        Order::Reverse.into(),
    ]
    .into_iter()
    .find(|f| combined.iter().all(|c| &f.tree(k) == c))?;
    let formula = Formula::Interleave(k, Box::new(inner), Box::new(outer));
    trees
        .iter()
        .all(|t| &formula.tree(t.n()) == *t)
        .then_some(formula)
}

/// `tree`'s `k` lanes (lane `r`: summands `r, r + k, ...`), each a subtree
/// of its own, renumbered `0, 1, ...`, and the tree of their sums (lane
/// `r` summand `r`); `None` unless every lane is a subtree. One pass up the
/// tree, without recursion (a lane may be thousands of additions deep).
fn split_lanes(tree: &SummationTree, k: usize) -> Option<(Vec<SummationTree>, SummationTree)> {
    let n = tree.n();
    if n < 2 * k {
        return None;
    }
    let size = |r: usize| (n - r).div_ceil(k);
    let mut lanes: Vec<TreeBuilder> = (0..k).map(|r| TreeBuilder::new(size(r))).collect();
    let mut outer = TreeBuilder::new(k);
    // Each node: inside lane r (its node in that lane's builder), or above
    // the lanes (its node in `outer`).
    #[derive(Clone, Copy)]
    enum At {
        Lane(usize, NodeIndex),
        Above(NodeIndex),
    }
    let mut at: Vec<Option<At>> = vec![None; tree.graph().node_count()];
    for i in 0..n {
        at[tree.leaf(i).index()] = Some(At::Lane(i % k, lanes[i % k].leaf(i / k)));
    }
    let mut roots: Vec<Option<NodeIndex>> = vec![None; k];
    for node in tree.post_order() {
        let here = match tree.node(node).leaf {
            Some(_) => continue,
            None => {
                let children: Option<Vec<At>> =
                    tree.children(node).iter().map(|c| at[c.index()]).collect();
                let children = children?;
                match children[0] {
                    At::Lane(r, _)
                        if children
                            .iter()
                            .all(|c| matches!(c, At::Lane(q, _) if *q == r)) =>
                    {
                        let parts: Vec<NodeIndex> = children
                            .iter()
                            .map(|c| match c {
                                At::Lane(_, v) => *v,
                                At::Above(_) => unreachable!("all in lane r"),
                            })
                            .collect();
                        At::Lane(r, lanes[r].sum(&parts))
                    }
                    _ => {
                        // A lane's whole sum, or sums above the lanes.
                        let mut parts = Vec::with_capacity(children.len());
                        for (c, child) in tree.children(node).iter().zip(&children) {
                            parts.push(match *child {
                                At::Above(v) => v,
                                At::Lane(r, v) if tree.node(*c).size == size(r) => {
                                    roots[r] = Some(v);
                                    outer.leaf(r)
                                }
                                At::Lane(..) => return None,
                            });
                        }
                        At::Above(outer.sum(&parts))
                    }
                }
            }
        };
        at[node.index()] = Some(here);
    }
    let Some(At::Above(top)) = at[tree.root().index()] else {
        return None;
    };
    let lanes: Option<Vec<SummationTree>> = lanes
        .into_iter()
        .zip(roots)
        .map(|(lane, root)| lane.finish(root?).ok())
        .collect();
    Some((lanes?, outer.finish(top).ok()?))
}

/// The sizes of the nodes above summand 0 that join two sums (no child a
/// lone summand): where a kernel's blocks meet.
/// `kblocks(Q, U, f)` that gives `tree`, with `Q` the size of a join
/// above summand 0 (at least a third of the tree) and `f` the first
/// candidate that gives that first block: the blocking of K read from
/// one tree.
pub(super) fn kblocks_of(tree: &SummationTree) -> Option<Formula> {
    let n = tree.n();
    let mut node = tree.leaf(0);
    while let Some(parent) = tree.parent(node) {
        let q = tree.node(node).size;
        let joins_blocks = tree.children(parent).iter().all(|c| tree.node(*c).size > 1);
        // OpenBLAS's first block of K is its largest: at least a third.
        if joins_blocks && 3 * q >= n && q < n && q <= super::FIRST_BLOCK_UP_TO {
            let first = tree.subtree(node);
            if let (inner, 1) = longest(&[&first], q) {
                let found = [None, Some(1), Some(2), Some(4), Some(8), Some(16)]
                    .into_iter()
                    .filter(|u| u.is_none_or(|u| u <= q))
                    .map(|u| Formula::KBlocks(q, u, Box::new(inner.clone())))
                    .find(|f| &f.tree(n) == tree);
                if found.is_some() {
                    return found;
                }
            }
        }
        node = parent;
    }
    None
}

fn joins_above_0(tree: &SummationTree) -> Vec<usize> {
    let mut out = Vec::new();
    let mut node = tree.leaf(0);
    while let Some(parent) = tree.parent(node) {
        let children = tree.children(parent);
        if children.iter().all(|c| tree.node(*c).size > 1) {
            out.push(tree.node(node).size);
        }
        node = parent;
    }
    out
}

/// The candidate that explains the most of `trees` in a row from the
/// first, and how many (the first that explains them all, if one does).
pub(super) fn longest(trees: &[&SummationTree], largest: usize) -> (Formula, usize) {
    let mut best: Option<(Formula, usize)> = None;
    for candidate in candidates(trees, largest) {
        let explained = trees
            .iter()
            .take_while(|t| &&candidate.tree(t.n()) == *t)
            .count();
        if explained == trees.len() {
            return (candidate, explained);
        }
        if best.as_ref().is_none_or(|(_, b)| explained > *b) {
            best = Some((candidate, explained));
        }
    }
    best.unwrap_or((Order::Sequential.into(), 0))
}

/// The formulas tried, simplest first.
fn candidates(trees: &[&SummationTree], largest: usize) -> impl Iterator<Item = Formula> {
    let counts = counts(trees, largest);
    let seq = || Box::new(Formula::Order(Order::Sequential));
    let mut orders: Vec<Formula> = vec![
        Order::Sequential.into(),
        Order::Reverse.into(),
        Order::Pairwise.into(),
        Order::BinaryTree.into(),
    ];
    let widest = trees.iter().map(|t| t.widest()).max().unwrap_or(2);
    if widest >= 3 {
        orders.push(Order::Fused(widest).into());
    }
    for &k in &counts {
        orders.push(Order::Strided(k).into());
        orders.push(Order::Blocked(k).into());
    }
    // How lane or block sums are combined.
    let mut combine: Vec<Formula> = vec![
        Order::Sequential.into(),
        Order::Pairwise.into(),
        Order::BinaryTree.into(),
        Order::Reverse.into(),
    ];
    for k in [2, 4, 8] {
        for inner in [Order::Pairwise, Order::Sequential] {
            for outer in [Order::Pairwise, Order::Sequential] {
                combine.push(Formula::Interleave(
                    k,
                    Box::new(inner.into()),
                    Box::new(outer.into()),
                ));
            }
        }
    }
    let lanes: Vec<Formula> = counts
        .iter()
        .flat_map(|&k| {
            combine
                .iter()
                .map(move |c| Formula::Interleave(k, seq(), Box::new(c.clone())))
        })
        .collect();
    let bodies: Vec<Formula> = lanes
        .iter()
        .flat_map(|l| {
            let Formula::Interleave(k, ..) = l else {
                unreachable!("lanes are interleaves")
            };
            let k = *k;
            let tails = [
                Tail::Then,
                Tail::Apart(seq()),
                Tail::Apart(Box::new(Order::Pairwise.into())),
            ]
            .into_iter()
            .map(move |t| Formula::Body(k, Box::new(l.clone()), t));
            // A K loop unrolled past its lanes (OpenBLAS's SGEMM: 2 lanes,
            // 8 a step) leaves its rest to the first lane.
            let first = [k, 2 * k, 4 * k]
                .into_iter()
                .map(move |m| Formula::Body(m, Box::new(l.clone()), Tail::First));
            tails.chain(first)
        })
        .collect();
    // Alignment peeling: a half or a quarter of the lanes started first.
    let peeled: Vec<Formula> = bodies
        .iter()
        .flat_map(|b| {
            let Formula::Body(m, lanes, _) = b else {
                unreachable!("bodies")
            };
            let Formula::Interleave(k, ..) = **lanes else {
                unreachable!("bodies of lanes")
            };
            [*m / 2, *m / 4]
                .into_iter()
                .filter(move |&p| p >= 1 && p <= k)
                .map(move |p| Formula::Peel(p, Box::new(b.clone())))
        })
        .collect();
    let inner: Vec<Formula> = [Order::Sequential.into(), Order::Pairwise.into()]
        .into_iter()
        .chain(lanes.iter().cloned())
        .chain(bodies.iter().cloned())
        .collect();
    let blocks: Vec<Formula> = counts
        .iter()
        .flat_map(|&b| {
            let inner = &inner;
            [Order::Sequential, Order::Pairwise, Order::BinaryTree]
                .into_iter()
                .flat_map(move |outer| {
                    inner.iter().map(move |i| {
                        Formula::Blocks(b, Box::new(i.clone()), Box::new(outer.into()))
                    })
                })
        })
        .collect();
    let halves: Vec<Formula> = counts
        .iter()
        .flat_map(|&leaf| {
            let inner = &inner;
            [1, 2, 4, 8, 16, 32]
                .into_iter()
                .filter(move |m| *m <= leaf)
                .flat_map(move |multiple| {
                    inner.iter().map(move |i| Formula::Halves {
                        leaf,
                        multiple,
                        inner: Box::new(i.clone()),
                    })
                })
        })
        .collect();
    // An MPI job's ranks: a block each, combined as Open MPI's allreduce
    // algorithms do: recursive doubling, its binary tree and its binomial
    // tree (the Binary Tree Reduction's; nonoverlapping), its linear reduce (from the last rank down), and its ring, which
    // starts each element's sum at its chunk's rank `K` (`K = 0` is
    // sequential).
    let ranks: Vec<Formula> = (2..=16)
        .flat_map(|p| {
            [Order::Sequential, Order::Pairwise]
                .into_iter()
                .flat_map(move |inner| {
                    [
                        Formula::Doubling,
                        Order::Sequential.into(),
                        Order::Pairwise.into(),
                        Formula::Fanout(2),
                        Order::BinaryTree.into(),
                        Order::Reverse.into(),
                    ]
                    .into_iter()
                    .chain((1..p).map(|k| Formula::Rotate(k, Box::new(Order::Sequential.into()))))
                    .map(move |outer| Formula::Split(p, Box::new(inner.into()), Box::new(outer)))
                })
        })
        .collect();
    let windows: Vec<Formula> = counts
        .iter()
        .flat_map(|&w| {
            [Order::Sequential, Order::Pairwise]
                .into_iter()
                .map(move |i| Formula::Windows(w, Box::new(i.into())))
        })
        .collect();
    orders
        .into_iter()
        .chain([Formula::Doubling])
        .chain(windows)
        .chain(lanes)
        .chain(bodies)
        .chain(blocks)
        .chain(halves)
        .chain(peeled)
        .chain(ranks)
}

/// The counts a part may have: powers of two below the largest tree, and
/// the counts tree shapes show (summand 0's partner, the chain it starts).
fn counts(trees: &[&SummationTree], largest: usize) -> Vec<usize> {
    let mut out: Vec<usize> = std::iter::successors(Some(2usize), |k| Some(k * 2))
        .take_while(|k| *k < largest)
        .collect();
    for tree in trees {
        for order in crate::shape::derived_candidates(tree) {
            // A count as large as the tree is every order's (one block):
            // it says nothing, and every count multiplies the candidates.
            if let Order::Strided(k) | Order::Blocked(k) = order
                && k >= 2
                && k < tree.n()
                && !out.contains(&k)
            {
                out.push(k);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_candidate_covers_every_summand() {
        let sample = [Formula::Order(Order::Sequential).tree(64)];
        let refs: Vec<&SummationTree> = sample.iter().collect();
        for c in candidates(&refs, 64) {
            for n in (1..=20).chain([31, 32, 33, 63, 64, 65]) {
                let built = std::panic::catch_unwind(|| c.tree(n));
                assert!(built.is_ok(), "{c} at n = {n}");
            }
        }
    }
}
