//! Recursive bisection read from its trees ([`Formula::Bisect`]): how
//! many levels the largest tree halves at half its count is read from the
//! path of summand 0, the formula of the pieces from the first piece, and
//! each depth the path allows, the shallowest first, is checked against
//! every tree.

use crate::formula::Formula;
use crate::tree::SummationTree;

use super::infer_one;

/// The bisection whose tree at each tree's size is that tree, if a depth
/// the largest tree shows gives them all; `trees` are by size, the
/// smallest first.
pub(super) fn bisection(trees: &[&SummationTree]) -> Option<Formula> {
    let largest = trees.last()?;
    // The pieces of summand 0 at each level, while each is cut in halves.
    let mut pieces = Vec::new();
    let mut node = largest.root();
    loop {
        let leaves = largest.leaves_under(node);
        let [a, b] = largest.children(node) else {
            break;
        };
        let first = match largest.leaves_under(*a).first() == leaves.first() {
            true => *a,
            false => *b,
        };
        // Two children: the second holds the rest of the node's summands.
        let contiguous = leaves.windows(2).all(|w| w[1] == w[0] + 1);
        if largest.leaves_under(first).len() != leaves.len() / 2 || !contiguous {
            break;
        }
        pieces.push(first);
        node = first;
    }
    pieces.into_iter().enumerate().find_map(|(level, piece)| {
        let inner = infer_one(&largest.subtree(piece))?;
        let candidate = Formula::Bisect(level + 1, Box::new(inner));
        trees
            .iter()
            .all(|t| candidate.tree(t.n()) == **t)
            .then_some(candidate)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halvings_of_any_depth_over_any_pieces_are_found() {
        for truth in [
            "bisect(1, sequential)",
            "bisect(3, sequential)",
            "bisect(2, interleave(4, sequential, pairwise))",
        ] {
            let truth: Formula = truth.parse().unwrap();
            let trees: Vec<SummationTree> = [5, 17, 64, 100, 1000, 2048]
                .iter()
                .map(|&n| truth.tree(n))
                .collect();
            let refs: Vec<&SummationTree> = trees.iter().collect();
            let found = bisection(&refs).unwrap_or_else(|| panic!("{truth}: none found"));
            for n in [3, 31, 999, 4097] {
                assert_eq!(found.tree(n), truth.tree(n), "{truth} at n = {n}");
            }
        }
        // Halves of halves cut at a multiple of 8 are no bisection.
        let other: Formula = "halves(100, 8, sequential)".parse().unwrap();
        let trees: Vec<SummationTree> = [300, 1000].iter().map(|&n| other.tree(n)).collect();
        let refs: Vec<&SummationTree> = trees.iter().collect();
        assert_eq!(bisection(&refs), None);
    }
}
