//! Recursive halving read from its trees: how the largest tree cuts the
//! pieces along summand 0's path (each piece in two contiguous halves)
//! gives the candidates, and each is checked against every tree.
//!
//! - [`Formula::Bisect`]: halved at half the count, a fixed number of
//!   levels deep (Rayon's splitter); each depth the path allows, the
//!   shallowest first, the pieces' formula named for the first piece.
//! - [`Formula::Halves`]: halved at half the count rounded down to a
//!   multiple, down to pieces of a leaf size (Polars' blocks of 128); the
//!   first piece the largest tree's path leaves uncut is a leaf, whose
//!   formula is named for it, the leaf size is the largest piece any tree
//!   leaves uncut, and the multiples (powers of two) are tried, smallest
//!   first.

use crate::formula::Formula;
use petgraph::graph::NodeIndex;

use crate::tree::SummationTree;

use super::candidates::vectorised;
use super::infer_one;

/// The largest multiple a halving's cut is tried at.
const MOST_MULTIPLE: usize = 1024;

/// The bisection whose tree at each tree's size is that tree, if a depth
/// the largest tree shows gives them all; `trees` are by size, the
/// smallest first.
pub(super) fn bisection(trees: &[&SummationTree]) -> Option<Formula> {
    let largest = trees.last()?;
    let path = halved_path(largest, |size| size / 2);
    path.iter().skip(1).enumerate().find_map(|(level, &piece)| {
        let inner = self::piece(&largest.subtree(piece))?;
        gives_every(trees, Formula::Bisect(level + 1, Box::new(inner)))
    })
}

/// The halving at a multiple whose tree at each tree's size is that tree,
/// if one the largest tree shows gives them all.
pub(super) fn halves(trees: &[&SummationTree]) -> Option<Formula> {
    // Cut at half rounded down to a multiple of 1,024 or less, a path
    // stops where a piece is not cut so: at a leaf, whatever the multiple.
    let cut = |size: usize| {
        let half = size / 2;
        (0..=MOST_MULTIPLE.ilog2())
            .rev()
            .map(|k| half - half % (1 << k))
            .find(|&c| c > 0)
            .unwrap_or(half)
    };
    let largest = trees.last()?;
    let path = halved_path(largest, cut);
    let (&leaf_node, [_, ..]) = path.split_last()? else {
        return None;
    };
    let inner = piece(&largest.subtree(leaf_node))?;
    // The largest piece any tree leaves uncut.
    let leaf = trees
        .iter()
        .filter_map(|t| halved_path(t, cut).last().map(|&v| t.node(v).size))
        .max()?;
    (0..=MOST_MULTIPLE.ilog2()).find_map(|k| {
        gives_every(
            trees,
            Formula::Halves {
                leaf,
                multiple: 1 << k,
                inner: Box::new(inner.clone()),
            },
        )
    })
}

/// The formula of one piece: a candidate that gives its tree, or lanes
/// read from it (Polars' 16 lanes of a block of 128, folded).
fn piece(tree: &SummationTree) -> Option<Formula> {
    infer_one(tree).or_else(|| vectorised(&[tree]))
}

/// The candidate, if its tree at each tree's size is that tree.
fn gives_every(trees: &[&SummationTree], candidate: Formula) -> Option<Formula> {
    trees
        .iter()
        .all(|t| candidate.tree(t.n()) == **t)
        .then_some(candidate)
}

/// The pieces along summand 0's path from the root while each is cut in
/// two contiguous halves, its first holding `cut(size)` summands (or any
/// of the cuts `cut` allows: see [`halves`]), and the first piece not cut
/// so, last.
fn halved_path(tree: &SummationTree, cut: impl Fn(usize) -> usize) -> Vec<NodeIndex> {
    let mut path = vec![tree.root()];
    let mut node = tree.root();
    loop {
        let leaves = tree.leaves_under(node);
        let [a, b] = tree.children(node) else {
            break;
        };
        let first = match tree.leaves_under(*a).first() == leaves.first() {
            true => *a,
            false => *b,
        };
        // Two children: the second holds the rest of the node's summands,
        // contiguous too where both these are.
        let contiguous = |l: &[usize]| l.windows(2).all(|w| w[1] == w[0] + 1);
        let taken = tree.leaves_under(first);
        let half = leaves.len() / 2;
        if !contiguous(&leaves)
            || !contiguous(&taken)
            || taken.len() > half
            || taken.len() < cut(leaves.len()).min(half)
        {
            break;
        }
        path.push(first);
        node = first;
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trees(truth: &Formula, sizes: &[usize]) -> Vec<SummationTree> {
        sizes.iter().map(|&n| truth.tree(n)).collect()
    }

    #[test]
    fn halvings_of_any_depth_over_any_pieces_are_found() {
        for truth in [
            "bisect(1, sequential)",
            "bisect(3, sequential)",
            "bisect(2, interleave(4, sequential, pairwise))",
        ] {
            let truth: Formula = truth.parse().unwrap();
            let trees = trees(&truth, &[5, 17, 64, 100, 1000, 2048]);
            let refs: Vec<&SummationTree> = trees.iter().collect();
            let found = bisection(&refs).unwrap_or_else(|| panic!("{truth}: none found"));
            for n in [3, 31, 999, 4097] {
                assert_eq!(found.tree(n), truth.tree(n), "{truth} at n = {n}");
            }
        }
        // Halves of halves cut at a multiple of 8 are no bisection.
        let other: Formula = "halves(100, 8, sequential)".parse().unwrap();
        let trees = trees(&other, &[300, 1000]);
        let refs: Vec<&SummationTree> = trees.iter().collect();
        assert_eq!(bisection(&refs), None);
    }

    #[test]
    fn halvings_at_a_multiple_down_to_a_leaf_are_found() {
        for truth in [
            "halves(128, 128, interleave(16, sequential, fold))",
            "halves(100, 8, sequential)",
            "halves(16, 1, pairwise)",
        ] {
            let truth: Formula = truth.parse().unwrap();
            let trees = trees(&truth, &[128, 256, 300, 384, 512, 896, 1000, 1024, 2048]);
            let refs: Vec<&SummationTree> = trees.iter().collect();
            let found = halves(&refs).unwrap_or_else(|| panic!("{truth}: none found"));
            for n in [640, 3072, 4992] {
                assert_eq!(found.tree(n), truth.tree(n), "{truth} at n = {n}");
            }
        }
    }
}
