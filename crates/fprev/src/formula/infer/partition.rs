//! Threads' pieces read from a tree past a kernel's sizes
//! ([`Formula::Split`]): a library that hands the summands to `P` threads
//! from some size on (OpenBLAS's and MKL's dot products, past about ten
//! thousand summands) sums each piece with the kernel of smaller sizes and
//! the pieces' sums in a fixed order. The first piece is an ancestor of
//! summand 0, so the counts of pieces tried are those whose first piece
//! the tree holds; the orders of the pieces' sums are the reference ones.

use crate::formula::Formula;
use crate::order::Order;
use crate::tree::SummationTree;

/// The most pieces tried: threads of one machine.
const MOST_PIECES: usize = 256;

/// `split(P, kernel, OUTER)` whose tree at `tree`'s size is `tree`, if a
/// count of pieces and a reference order of their sums give it.
pub fn partitioned(kernel: &Formula, tree: &SummationTree) -> Option<Formula> {
    let n = tree.n();
    let prefixes = prefixes_of_zero(tree);
    let outers = [
        Order::Sequential,
        Order::Pairwise,
        Order::Reverse,
        Order::BinaryTree,
    ];
    (2..=MOST_PIECES.min(n))
        .filter(|p| prefixes.contains(&n.div_ceil(*p)))
        .flat_map(|p| {
            outers.iter().map(move |outer| {
                Formula::Split(
                    p,
                    Box::new(kernel.clone()),
                    Box::new(Formula::Order(*outer)),
                )
            })
        })
        .find(|candidate| candidate.tree(n) == *tree)
}

/// The counts `m` for which an ancestor of summand 0 sums exactly the
/// first `m` summands.
pub(super) fn prefixes_of_zero(tree: &SummationTree) -> Vec<usize> {
    // The largest leaf under every node; inner nodes come children first.
    let mut last = vec![0usize; tree.graph().node_count()];
    for i in 0..tree.n() {
        last[tree.leaf(i).index()] = i;
    }
    for v in tree.post_order() {
        last[v.index()] = tree
            .children(v)
            .iter()
            .map(|c| last[c.index()])
            .max()
            .unwrap_or(0);
    }
    let mut prefixes = Vec::new();
    let mut at = Some(tree.leaf(0));
    while let Some(v) = at {
        // Summand 0 is under it: it holds the first `size` summands when
        // its largest is `size - 1`.
        let size = tree.node(v).size;
        if last[v.index()] + 1 == size {
            prefixes.push(size);
        }
        at = tree.parent(v);
    }
    prefixes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_pieces_of_a_kernel_are_read_from_one_tree() {
        let kernel: Formula = "body(8, interleave(8, sequential, pairwise), then)"
            .parse()
            .unwrap();
        for (p, outer) in [(2, "sequential"), (3, "pairwise"), (16, "binary-tree")] {
            let truth: Formula = format!("split({p}, {kernel}, {outer})").parse().unwrap();
            for n in [1000, 16387] {
                let found = partitioned(&kernel, &truth.tree(n)).unwrap();
                assert_eq!(found.tree(n), truth.tree(n), "{truth} at {n}");
                assert_eq!(found.tree(n + 5), truth.tree(n + 5), "{truth} at {}", n + 5);
            }
        }
        // Pieces summed by another kernel are no pieces of this one.
        let other: Formula = "split(2, sequential, sequential)".parse().unwrap();
        assert_eq!(partitioned(&kernel, &other.tree(1000)), None);
    }
}
