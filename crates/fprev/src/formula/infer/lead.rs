//! A leading rest read from its trees ([`Formula::Lead`]): a kernel that
//! sums the `n mod M` summands at the front apart and the others, a
//! multiple of `M`, by its blocks (Polars' sum) shows it at the root of
//! every tree past `M` summands: the front summands on one side, the
//! others on the other. The two sides' formulas are inferred from the
//! sides' trees, each set on its own.

use crate::formula::Formula;
use crate::tree::SummationTree;

use super::{Inference, infer_in};

/// The largest multiple tried: a block of a kernel.
const MOST_MULTIPLE: usize = 1024;

/// The leading rest whose tree at each tree's size is that tree, if a
/// power of two up to [`MOST_MULTIPLE`] cuts every tree's root so and the
/// sides' trees have formulas; `trees` are by size, the smallest first.
pub(super) fn leading(trees: &[&SummationTree]) -> Option<Formula> {
    (1..=MOST_MULTIPLE.ilog2())
        .map(|k| 1usize << k)
        .find_map(|m| with_multiple(trees, m))
}

fn with_multiple(trees: &[&SummationTree], m: usize) -> Option<Formula> {
    let (mut rests, mut bodies) = (Vec::new(), Vec::new());
    let mut cut_seen = false;
    for &tree in trees {
        let (n, r) = (tree.n(), tree.n() % m);
        if n < m {
            rests.push(tree.clone());
            continue;
        }
        if r == 0 {
            bodies.push(tree.clone());
            continue;
        }
        let [a, b] = tree.children(tree.root()) else {
            return None;
        };
        let (rest, body) = match tree.node(*a).size == r {
            true => (*a, *b),
            false => (*b, *a),
        };
        // The front `r` summands on one side: the smallest leaf is 0 and
        // the side holds `r`, so its leaves are those before `r` where the
        // other side's smallest is `r`.
        if tree.node(rest).size != r || tree.leaves_under(body).first() != Some(&r) {
            return None;
        }
        cut_seen = true;
        rests.push(tree.subtree(rest));
        bodies.push(tree.subtree(body));
    }
    if !cut_seen {
        return None;
    }
    let body = formula_of(bodies)?;
    let rest = formula_of(rests)?;
    let candidate = Formula::Lead(m, Box::new(body), Box::new(rest));
    trees
        .iter()
        .all(|t| candidate.tree(t.n()) == **t)
        .then_some(candidate)
}

/// The formula of one side's trees, one a size.
fn formula_of(mut trees: Vec<SummationTree>) -> Option<Formula> {
    trees.sort_by_key(SummationTree::n);
    trees.dedup();
    let Inference { formula, .. } = infer_in(&trees, false);
    formula
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rest_summed_at_the_front_is_found_with_both_sides() {
        // Polars' sum: the front apart, blocks of 128 in 16 lanes halved.
        let truth: Formula = "lead(128, halves(128, 128, interleave(16, sequential, fold)), \
                              sequential)"
            .parse()
            .unwrap();
        let trees: Vec<SummationTree> = [5, 100, 129, 200, 256, 300, 513, 1000, 1025, 2048]
            .iter()
            .map(|&n| truth.tree(n))
            .collect();
        let refs: Vec<&SummationTree> = trees.iter().collect();
        let found = leading(&refs).expect("found");
        for n in [3, 777, 3001] {
            assert_eq!(found.tree(n), truth.tree(n), "{found} at {n}");
        }
        // A rest at the back is no rest at the front.
        let back: Formula = "body(128, sequential, pairwise)".parse().unwrap();
        let trees: Vec<SummationTree> = [200, 300].iter().map(|&n| back.tree(n)).collect();
        let refs: Vec<&SummationTree> = trees.iter().collect();
        assert_eq!(leading(&refs), None);
    }
}
