//! NaiveSol: try every binary tree on random inputs and keep the one that
//! matches the black box bit for bit. Exponential: `(2n-3)!!` trees over `n`
//! labelled leaves (135,135 at `n = 8`), a baseline and a cross-check only.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::oracle::Oracle;
use crate::error::{Error, Fault, Param, Remedy, Result};
use crate::format::Format;
use crate::inputs::random_input;
use crate::tree::{SummationTree, TreeBuilder};

/// Largest `n` NaiveSol accepts.
pub const MAX_N: usize = 8;
/// Random inputs tried before giving up on telling candidates apart.
const TRIALS: usize = 64;

enum T {
    Leaf(usize),
    Sum(Box<T>, Box<T>),
}

impl T {
    fn eval(&self, x: &[f64], acc: Format) -> f64 {
        match self {
            T::Leaf(i) => x[*i],
            T::Sum(a, b) => acc.add(a.eval(x, acc), b.eval(x, acc)),
        }
    }

    /// Every tree made by hanging leaf `k` above one node of `self`.
    fn insertions(&self, k: usize, out: &mut Vec<T>) {
        out.push(T::Sum(Box::new(self.clone_tree()), Box::new(T::Leaf(k))));
        if let T::Sum(a, b) = self {
            let mut left = Vec::new();
            a.insertions(k, &mut left);
            out.extend(
                left.into_iter()
                    .map(|a2| T::Sum(Box::new(a2), Box::new(b.clone_tree()))),
            );
            let mut right = Vec::new();
            b.insertions(k, &mut right);
            out.extend(
                right
                    .into_iter()
                    .map(|b2| T::Sum(Box::new(a.clone_tree()), Box::new(b2))),
            );
        }
    }

    fn clone_tree(&self) -> T {
        match self {
            T::Leaf(i) => T::Leaf(*i),
            T::Sum(a, b) => T::Sum(Box::new(a.clone_tree()), Box::new(b.clone_tree())),
        }
    }

    fn build(&self, b: &mut TreeBuilder) -> petgraph::graph::NodeIndex {
        match self {
            T::Leaf(i) => b.leaf(*i),
            T::Sum(x, y) => {
                let (x, y) = (x.build(b), y.build(b));
                b.sum(&[x, y])
            }
        }
    }
}

fn all_trees(n: usize) -> Vec<T> {
    let mut trees = vec![T::Leaf(0)];
    for k in 1..n {
        let mut next = Vec::new();
        for t in &trees {
            t.insertions(k, &mut next);
        }
        trees = next;
    }
    trees
}

pub(super) fn build(oracle: &mut Oracle) -> Result<SummationTree> {
    let n = oracle.n();
    if n > MAX_N {
        return Err(Error::Input(format!(
            "naive tries all (2n-3)!! binary trees and stops at n = {MAX_N}"
        ))
        .advise(Remedy::Give(Param::Algorithm, &["fprev"])));
    }
    let format = oracle.probe().format();
    let acc = oracle.probe().accumulator();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut candidates = all_trees(n);
    // Every trial, even for a last candidate: one tree left standing is
    // only the one the inputs so far could not refute.
    for _ in 0..TRIALS {
        if candidates.is_empty() {
            break;
        }
        let x = random_input(format, n, &mut rng);
        let y = oracle.sum_one(&x)?;
        candidates.retain(|t| t.eval(&x, acc).to_bits() == y.to_bits());
    }
    match candidates.as_slice() {
        [one] => {
            let mut b = TreeBuilder::new(n);
            let root = one.build(&mut b);
            Ok(b.finish(root)?)
        }
        [] => Err(Error::BlackBox(Fault::NoBinaryTree { accumulator: acc })),
        many => Err(Error::BlackBox(Fault::ManyTrees {
            trees: many.len(),
            trials: TRIALS,
        })),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn enumerates_every_labelled_binary_tree() {
        // (2n-3)!! rooted binary trees over n labelled leaves.
        for (n, count) in [(1, 1), (2, 1), (3, 3), (4, 15), (5, 105), (6, 945)] {
            assert_eq!(super::all_trees(n).len(), count, "n = {n}");
        }
    }
}
