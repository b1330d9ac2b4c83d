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

use crate::order::Order;
use crate::tree::SummationTree;

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
    if trees.windows(2).any(|w| w[0].n() == w[1].n()) {
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
        let (formula, explained) = longest(&trees[from..], largest);
        // A later regime seen at one size only is no evidence of a rule.
        if explained == 0 || (from > 0 && explained < 2) {
            break;
        }
        if from > 0 {
            gaps.push((trees[from - 1].n() + 1, trees[from].n()));
        }
        regimes.push((trees[from].n(), formula));
        if closest.is_none() && from + explained < trees.len() {
            closest = Some((regimes[0].1.clone(), trees[from + explained].n()));
        }
        from += explained;
    }
    let mut formula = (!regimes.is_empty()).then(|| join(regimes));
    if from < trees.len() {
        // Kernels that work in blocks of columns (OpenBLAS's GEMV, 4,096)
        // repeat the order of the sizes below the block, block by block.
        formula = formula.and_then(|f| blocked(&f, &trees, from));
        let Some(formula) = formula else {
            return Inference {
                formula: None,
                closest,
                gaps: Vec::new(),
            };
        };
        gaps.push((trees[from - 1].n() + 1, trees[from].n()));
        gaps.retain(|(a, b)| a < b);
        return Inference {
            formula: Some(formula),
            closest: None,
            gaps,
        };
    }
    // No trees at all: nothing to explain.
    let Some(formula) = formula else {
        return Inference {
            formula: None,
            closest: None,
            gaps: Vec::new(),
        };
    };
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

/// `blocks(B, formula, OUTER)` that regenerates every tree, where `formula`
/// explains those before `trees[from]`: `B` a power of two below the
/// first it does not explain (sizes up to a block past it, such as one
/// summand more, can agree with both).
fn blocked(formula: &Formula, trees: &[&SummationTree], from: usize) -> Option<Formula> {
    let next = trees[from].n();
    let sizes = std::iter::successors(Some(2usize), |b| Some(b * 2));
    sizes.take_while(|&b| b < next).find_map(|b| {
        [Order::Sequential, Order::Pairwise]
            .into_iter()
            .map(|outer| Formula::Blocks(b, Box::new(formula.clone()), Box::new(outer.into())))
            .find(|f| trees.iter().all(|t| &f.tree(t.n()) == *t))
    })
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
            [
                Tail::Then,
                Tail::Apart(seq()),
                Tail::Apart(Box::new(Order::Pairwise.into())),
            ]
            .into_iter()
            .map(move |t| Formula::Body(*k, Box::new(l.clone()), t))
        })
        .collect();
    // Alignment peeling: a half or a quarter of the lanes started first.
    let peeled: Vec<Formula> = bodies
        .iter()
        .flat_map(|b| {
            let Formula::Body(m, ..) = b else {
                unreachable!("bodies")
            };
            [*m / 2, *m / 4]
                .into_iter()
                .filter(|&p| p >= 1)
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
        .chain(windows)
        .chain(lanes)
        .chain(bodies)
        .chain(blocks)
        .chain(halves)
        .chain(peeled)
}

/// The counts a part may have: powers of two below the largest tree, and
/// the counts tree shapes show (summand 0's partner, the chain it starts).
fn counts(trees: &[&SummationTree], largest: usize) -> Vec<usize> {
    let mut out: Vec<usize> = std::iter::successors(Some(2usize), |k| Some(k * 2))
        .take_while(|k| *k < largest)
        .collect();
    for tree in trees {
        for order in crate::shape::derived_candidates(tree) {
            if let Order::Strided(k) | Order::Blocked(k) = order
                && k >= 2
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
    fn a_tree_no_formula_gives_is_not_explained() {
        let mut shown = trees(&Order::Sequential.into(), &[2, 3, 4]);
        shown.push("((0+3)+((1+2)+4))".parse().unwrap());
        let found = infer(&shown);
        assert_eq!(found.formula, None);
        let (closest, at) = found.closest.unwrap();
        assert_eq!(at, 5, "{closest}");
    }
}
