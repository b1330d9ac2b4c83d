//! Finding the formula behind revealed trees: the simplest formula of the
//! order language that regenerates every one of them exactly.
//!
//! The search walks the formulas from the simplest up (reference orders,
//! interleaved lanes, a lane body with its tail, blocks, recursive
//! halving over any of those), each part's count drawn from the powers of
//! two up to the largest tree and the counts the trees themselves show
//! (the partner of summand 0, the length of the chain it starts). A
//! candidate is built at the smallest size first and dropped at its first
//! mismatch, so most cost a few small trees. A formula below which small
//! sizes differ (NumPy sums fewer than 8 summands left to right) is found
//! as `below(M, SMALL, LARGE)`: when no formula explains every size, the
//! one that explains the most sizes from the smallest is taken for them,
//! and the search goes on from the first size it does not explain (up to
//! four regimes). Where sizes between two regimes were not revealed, the
//! switch is only known to lie in that gap ([`Inference::gaps`]).

use petgraph::graph::NodeIndex;

use crate::order::Order;
use crate::tree::{SummationTree, TreeBuilder};

use super::{Formula, Tail};

/// What [`infer`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Inference {
    /// The formula that regenerates every tree, if one does.
    pub formula: Option<Formula>,
    /// When none does: the formula that explains the most sizes in a row
    /// from the smallest, and the first size it does not explain.
    pub closest: Option<(Formula, usize)>,
    /// Sizes not shown where the formula switches from one part to the
    /// next (`below(M, …)`): the switch lies in each range `a..=b`, taken
    /// at its end; revealing a size inside narrows it.
    pub gaps: Vec<(usize, usize)>,
}

/// Regimes one formula may chain with `below` before it gives up.
const MOST_REGIMES: usize = 4;

/// Sizes revealed to explain a black box when none are given: every size
/// to 40, and around the powers of two where kernels change strategy.
pub const EXPLAIN_SIZES: &str =
    "1..40,63,64,65,100,127,128,129,200,255,256,257,300,511,512,513,1000,1023,1024,1025,2048";

/// Sizes revealed to narrow where the order switches, at most.
const MOST_EXTRA_REVEALS: usize = 32;

/// Reveals with `reveal` at `sizes`, infers the formula, and reveals sizes
/// inside each gap between two regimes, by bisection, until the switch is
/// exact (at most 32 more). `reveal(sizes)` returns the trees it could
/// reveal, in any order. Returns the inference and every tree seen,
/// smallest first.
///
/// ```
/// use fprev::formula::{Formula, infer::explain};
///
/// let truth: Formula = "below(20, reverse, pairwise)".parse().unwrap();
/// let (found, trees) =
///     explain(&[4, 8, 16, 32, 64], |sizes| Ok(sizes.iter().map(|&n| truth.tree(n)).collect()))
///         .unwrap();
/// // The switch between 16 and 32 was narrowed down by revealing sizes there.
/// assert!(trees.len() > 5);
/// assert_eq!(found.formula.unwrap().tree(25), truth.tree(25));
/// ```
pub fn explain(
    sizes: &[usize],
    mut reveal: impl FnMut(&[usize]) -> crate::Result<Vec<SummationTree>>,
) -> crate::Result<(Inference, Vec<SummationTree>)> {
    let mut trees = reveal(sizes)?;
    let mut found = infer(&trees);
    let mut extra = 0;
    while let Some(&(lo, hi)) = found.gaps.first()
        && extra < MOST_EXTRA_REVEALS
        && !trees.is_empty()
    {
        let mid = lo + (hi - lo) / 2;
        let more = reveal(&[mid])?;
        extra += 1;
        if more.is_empty() {
            break;
        }
        trees.extend(more);
        found = infer(&trees);
    }
    trees.sort_by_key(|t| t.n());
    Ok((found, trees))
}

/// The simplest formula whose tree at each tree's size is that tree.
///
/// ```
/// use fprev::formula::{Formula, infer::infer};
///
/// let truth: Formula = "body(4, interleave(4, sequential, pairwise), then)".parse().unwrap();
/// let trees: Vec<_> = [3, 8, 13, 30, 64].iter().map(|&n| truth.tree(n)).collect();
/// let found = infer(&trees).formula.unwrap();
/// for n in [5, 100, 1001] {
///     assert_eq!(found.tree(n), truth.tree(n));
/// }
/// ```
pub fn infer(trees: &[SummationTree]) -> Inference {
    let mut trees: Vec<&SummationTree> = trees.iter().collect();
    trees.sort_by_key(|t| t.n());
    trees.dedup();
    // Two orders at one size: no formula of the size alone gives both.
    // Forced trees alone (one or two summands) fit every formula: no
    // evidence of any.
    if trees.windows(2).any(|w| w[0].n() == w[1].n()) || trees.iter().all(|t| t.is_forced()) {
        return Inference {
            formula: None,
            closest: None,
            gaps: Vec::new(),
        };
    }
    let largest = trees.last().map_or(1, |t| t.n());
    let mut gaps = Vec::new();
    // Each regime: the formula that explains the most sizes in a row from
    // the smallest not yet explained.
    let mut regimes: Vec<(usize, Formula)> = Vec::new();
    let mut from = 0;
    let mut closest = None;
    while from < trees.len() && regimes.len() < MOST_REGIMES {
        // Past a first regime, a vectorised kernel (XLA's sum from 4,096
        // summands) is tried first: it is checked against every size left,
        // and each of the many candidates `longest` would build instead
        // costs a tree as large as the largest.
        let lanes = (from > 0 && trees.len() - from >= 2)
            .then(|| vectorised(&trees[from..]))
            .flatten();
        let (mut formula, mut explained) = match lanes {
            Some(lanes) => (lanes, trees.len() - from),
            None => longest(&trees[from..], largest),
        };
        // A later regime seen at one size only is no evidence of a rule;
        // a vectorised kernel may explain every size left (a regime of one
        // size being no evidence either).
        if explained == 0 || (from > 0 && explained < 2) {
            match vectorised(&trees[from..]) {
                Some(lanes) if from == 0 || trees.len() - from >= 2 => {
                    formula = lanes;
                    explained = trees.len() - from;
                }
                _ => break,
            }
        }
        if from > 0 {
            gaps.push((trees[from - 1].n() + 1, trees[from].n()));
        }
        regimes.push((trees[from].n(), formula));
        if closest.is_none() && from + explained < trees.len() {
            closest = Some((regimes[0].1.clone(), trees[from + explained].n()));
        }
        from += explained;
        // Kernels that work in blocks (OpenBLAS's GEMV of 4,096 columns,
        // its GEMM's blocks of K) repeat the order of the sizes below the
        // block, block by block: tried before another regime.
        if from < trees.len()
            && let Some((blocked, switches)) = blocked(&join(regimes.clone()), &trees, from)
        {
            // Where the formula in blocks first differs from the one it
            // repeats is no switch of the formula: only its own are gaps.
            gaps.extend(switches);
            gaps.retain(|(a, b)| a < b);
            return Inference {
                formula: Some(blocked),
                closest: None,
                gaps,
            };
        }
    }
    if from < trees.len() || regimes.is_empty() {
        return Inference {
            formula: None,
            closest,
            gaps: Vec::new(),
        };
    }
    let formula = join(regimes);
    gaps.retain(|(a, b)| a < b);
    Inference {
        formula: Some(formula),
        closest: None,
        gaps,
    }
}

/// `below(m1, F0, below(m2, F1, F2))` from the regimes, each switch at the
/// first size its later regime explains.
fn join(regimes: Vec<(usize, Formula)>) -> Formula {
    let mut later = regimes.into_iter().rev();
    let (mut start, mut formula) = later.next().expect("one regime at least");
    for (earlier_start, earlier) in later {
        formula = Formula::Below(start, Box::new(earlier), Box::new(formula));
        start = earlier_start;
    }
    formula
}

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
fn blocked(
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
fn vectorised(trees: &[&SummationTree]) -> Option<Formula> {
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
fn longest(trees: &[&SummationTree], largest: usize) -> (Formula, usize) {
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
    // An MPI job's ranks: a block each, combined as MPI does.
    let ranks: Vec<Formula> = (2..=16)
        .flat_map(|p| {
            [Order::Sequential, Order::Pairwise]
                .into_iter()
                .flat_map(move |inner| {
                    [
                        Formula::Doubling,
                        Order::Sequential.into(),
                        Order::Pairwise.into(),
                    ]
                    .into_iter()
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

    fn trees(f: &Formula, sizes: &[usize]) -> Vec<SummationTree> {
        sizes.iter().map(|&n| f.tree(n)).collect()
    }

    #[test]
    fn the_formula_of_each_shape_comes_back() {
        let sizes: Vec<usize> = (1..=40).chain([63, 64, 65, 100, 129, 300, 1000]).collect();
        for s in [
            "pairwise",
            "strided:8",
            "interleave(8, sequential, interleave(4, pairwise, pairwise))",
            "body(32, interleave(32, sequential, interleave(4, pairwise, pairwise)), sequential)",
            "below(8, sequential, halves(128, 8, body(8, interleave(8, sequential, pairwise), then)))",
            "blocks(64, pairwise, sequential)",
        ] {
            let truth: Formula = s.parse().unwrap();
            let found = infer(&trees(&truth, &sizes))
                .formula
                .unwrap_or_else(|| panic!("{s}: none found"));
            // Another formula may give the same trees: it must agree at
            // sizes never shown to it.
            for n in [41, 99, 257, 777, 2048, 5000] {
                assert_eq!(
                    found.tree(n),
                    truth.tree(n),
                    "{s}: found {found} at n = {n}"
                );
            }
        }
    }

    #[test]
    fn a_formula_repeated_in_blocks_is_found_from_sizes_past_the_block() {
        let truth: Formula =
            "blocks(64, peel(4, body(8, interleave(8, sequential, pairwise), sequential)), sequential)"
                .parse()
                .unwrap();
        let sizes = [1, 2, 3, 9, 13, 20, 31, 40, 63, 64, 65, 100, 130, 200];
        let found = infer(&trees(&truth, &sizes)).formula.unwrap();
        for n in [67, 300, 1000] {
            assert_eq!(found.tree(n), truth.tree(n), "{found} at n = {n}");
        }
        assert!(infer(&[]).formula.is_none());
    }

    #[test]
    fn blocks_of_k_with_a_halved_rest_are_found() {
        let truth: Formula =
            "kblocks(40, 8, body(8, interleave(2, sequential, sequential), first))"
                .parse()
                .unwrap();
        let sizes = [
            1, 2, 3, 7, 8, 9, 15, 17, 20, 33, 39, 40, 41, 63, 64, 65, 100, 130, 200,
        ];
        let found = infer(&trees(&truth, &sizes)).formula.unwrap();
        for n in [57, 77, 151, 333] {
            assert_eq!(found.tree(n), truth.tree(n), "{found} at n = {n}");
        }
    }

    /// OpenBLAS's GEMM in small: its blocking of K changes past a size
    /// (where it threads), the formula below it in blocks either way.
    #[test]
    fn blocks_that_change_their_rest_past_a_size_are_found() {
        let inner = "body(8, interleave(2, sequential, sequential), first)";
        let truth: Formula = format!("below(120, kblocks(40, 8, {inner}), kblocks(40, {inner}))")
            .parse()
            .unwrap();
        let sizes = [
            1, 2, 3, 7, 8, 9, 15, 17, 20, 33, 39, 40, 41, 63, 64, 65, 100, 119, 121, 150, 203, 271,
        ];
        let found = infer(&trees(&truth, &sizes));
        let formula = found.formula.unwrap();
        for n in [57, 77, 105, 125, 151, 333] {
            assert_eq!(formula.tree(n), truth.tree(n), "{formula} at n = {n}");
        }
        // The switch lies between the sizes shown, where explain looks.
        assert!(found.gaps.contains(&(120, 121)), "{:?}", found.gaps);
    }

    /// XLA's vectorised reduction in small: 4 lanes, each in windows of
    /// 4, the lanes folded, past a scalar regime below 64. No candidate
    /// gives the lanes' interleave directly: the lanes' formula is
    /// inferred from the lanes themselves.
    #[test]
    fn lanes_of_a_vectorised_kernel_are_found_from_their_own_trees() {
        let truth: Formula =
            "below(64, windows(8, sequential), interleave(4, windows(4, sequential), fold))"
                .parse()
                .unwrap();
        let sizes = [
            1, 2, 3, 5, 8, 9, 17, 31, 40, 63, 64, 65, 67, 100, 130, 131, 200, 263,
        ];
        let found = infer(&trees(&truth, &sizes));
        let formula = found.formula.unwrap();
        for n in [70, 99, 257, 1000] {
            assert_eq!(formula.tree(n), truth.tree(n), "{formula} at n = {n}");
        }
        // A tree whose lanes are not subtrees is no vectorised kernel.
        let mixed: SummationTree = "(((0+4)+1)+((2+6)+((3+7)+5)))".parse().unwrap();
        assert!(vectorised(&[&mixed]).is_none());
    }

    /// A lane of XLA's vectorised sum in small: whole blocks of 16, the
    /// rest apart in pieces of 4, then 1, then what is left.
    #[test]
    fn blocks_with_a_rest_in_pieces_are_found() {
        let truth: Formula = "body(16, blocks(16, windows(4, sequential), sequential), \
                              pieces(4, 1, windows(4, sequential)))"
            .parse()
            .unwrap();
        let sizes = [16, 17, 23, 32, 35, 50, 64, 65, 79];
        let found = infer(&trees(&truth, &sizes)).formula.unwrap();
        for n in [27, 44, 99, 130] {
            assert_eq!(found.tree(n), truth.tree(n), "{found} at n = {n}");
        }
    }

    #[test]
    fn every_candidate_covers_every_summand() {
        let sample = trees(&Formula::Order(Order::Sequential), &[64]);
        let refs: Vec<&SummationTree> = sample.iter().collect();
        for c in candidates(&refs, 64) {
            for n in (1..=20).chain([31, 32, 33, 63, 64, 65]) {
                let built = std::panic::catch_unwind(|| c.tree(n));
                assert!(built.is_ok(), "{c} at n = {n}");
            }
        }
    }

    #[test]
    fn forced_trees_alone_explain_nothing() {
        let forced: Vec<SummationTree> =
            [1, 2].iter().map(|&n| Order::Sequential.tree(n)).collect();
        let found = infer(&forced);
        assert_eq!(found.formula, None);
        assert_eq!(found.closest, None);
    }

    #[test]
    fn a_tree_no_formula_gives_is_not_explained() {
        let mut shown = trees(&Order::Sequential.into(), &[2, 3, 4]);
        shown.push("((0+3)+((1+2)+4))".parse().unwrap());
        let found = infer(&shown);
        assert_eq!(found.formula, None);
        let (closest, at) = found.closest.unwrap();
        assert_eq!(at, 5, "{closest}");
    }
}
