//! A GEMM's panels of K read from a tree past a kernel's sizes
//! ([`Formula::KBlocks`]): a library that switches, from some size on, from
//! a small-matrix kernel to its blocked driver (OpenBLAS's, past
//! `M·N·K = 10^6` on AVX-512) sums panels of `Q` summands with the kernel
//! and adds the panels' sums left to right, a rest below `2Q` halved. The
//! first panel is the smallest first piece of the tree whose next
//! ancestor adds more than one summand to it; one tree rarely tells how the
//! halved rest is rounded, so every unit that gives it is a candidate.

use crate::formula::Formula;
use crate::tree::SummationTree;

use super::partition::prefixes_of_zero;

/// The units a halved rest may be rounded up to: none (the larger half
/// first), then the register blocks of GEMM kernels, largest first.
const UNITS: [Option<usize>; 8] = [
    None,
    Some(64),
    Some(32),
    Some(16),
    Some(8),
    Some(4),
    Some(2),
    Some(1),
];

/// The panels tried: the smallest first pieces that could be one.
const MOST_PANELS: usize = 3;

/// Every `kblocks(Q, U, kernel)` whose tree at `tree`'s size is `tree`,
/// for the panel sizes `Q` the tree's first pieces allow and the units of
/// [`UNITS`], in that order.
pub fn panels(kernel: &Formula, tree: &SummationTree) -> Vec<Formula> {
    let n = tree.n();
    let mut sizes = prefixes_of_zero(tree)
        .into_iter()
        .filter(|&q| q >= 2 && 2 * q <= n && adds_a_block(tree, q))
        .collect::<Vec<_>>();
    sizes.sort_unstable();
    sizes.truncate(MOST_PANELS);
    sizes
        .into_iter()
        .flat_map(|q| {
            UNITS
                .iter()
                .map(move |u| Formula::KBlocks(q, *u, Box::new(kernel.clone())))
        })
        .filter(|candidate| candidate.tree(n) == *tree)
        .collect()
}

/// Whether the node over the first `q` summands is added to more than one
/// summand at once: a panel, not a step of a left-to-right chain.
fn adds_a_block(tree: &SummationTree, q: usize) -> bool {
    let mut at = tree.leaf(0);
    while tree.node(at).size < q {
        match tree.parent(at) {
            Some(parent) => at = parent,
            None => return false,
        }
    }
    let Some(parent) = tree.parent(at) else {
        return false;
    };
    tree.node(parent).size - q > 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panels_of_a_kernel_are_read_from_one_tree() {
        let kernel: Formula = "sequential".parse().unwrap();
        for truth in [
            "kblocks(448, 16, sequential)",
            "kblocks(320, 8, sequential)",
            "kblocks(256, sequential)",
        ] {
            let truth: Formula = truth.parse().unwrap();
            for n in [1000, 4096, 5003] {
                let found = panels(&kernel, &truth.tree(n));
                assert!(found.contains(&truth), "{truth} at {n}: {found:?}");
                assert!(found.iter().all(|f| f.tree(n) == truth.tree(n)));
            }
        }
        // One chain has no panels.
        assert_eq!(panels(&kernel, &kernel.tree(1000)), Vec::<Formula>::new());
    }
}
