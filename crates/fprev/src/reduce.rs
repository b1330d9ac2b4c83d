//! Reproducible reducers. [`Replay`] evaluates any summation tree, binary or
//! multiway, on any input: a revealed tree becomes an executable
//! specification of the black box it came from. [`binary_tree_sum`] and
//! [`binary_tree_sum_threads`] add in a fixed tree that depends only on `n`:
//! the same bits on any number of threads. [`prerounded_sum`] and
//! [`PreRounded`] do not depend on the order at all: pre-rounded summation
//! gives the same bits for any permutation of the summands and any split
//! into chunks merged in any order, and is more accurate than a plain sum.
//! With the `mpi` feature, `fprev::mpi::binary_tree_allreduce` adds across the ranks
//! of an MPI job in the Binary Tree Reduction's tree: the same bits for any
//! number of ranks.
//!
//! ```
//! use fprev::{Format, SummationTree, reduce::Replay};
//!
//! let tree: SummationTree = "((0+1)+2)".parse().unwrap();
//! let replay = Replay::new(&tree, Format::F32);
//! let big = 2f64.powi(24);
//! // (2^24 + 1) + 1 loses both ones in f32; 2^24 + (1 + 1) would not.
//! assert_eq!(replay.sum(&[big, 1.0, 1.0]), big);
//! ```

mod binary_tree;
mod prerounded;

pub use binary_tree::{Real, binary_tree_sum, binary_tree_sum_on, binary_tree_sum_threads};
pub use prerounded::{
    PreRoundable, PreRounded, prerounded_sum, prerounded_sum_on, prerounded_sum_threads,
};

use crate::arith::{Arithmetic, NodeArithmetic, NodeKey};
use crate::format::Format;
use crate::tree::SummationTree;

/// A tree compiled for evaluation: inner nodes children-first, each reading
/// its operands from a flat value array.
#[derive(Clone, Debug)]
pub struct Replay {
    n: usize,
    acc: Format,
    /// For every inner node in post-order, the slots of its children
    /// (`0..n` are the summands, `n + k` is the k-th inner node).
    operands: Vec<Vec<usize>>,
    /// What each inner node computes, in the same order, where an
    /// arithmetic model says (`None`: IEEE additions in `acc` throughout).
    arithmetic: Option<Vec<NodeArithmetic>>,
}

impl Replay {
    /// Compiles `tree`, to add in the accumulator format `acc` (binary nodes
    /// as IEEE additions, fused nodes by [`fused_sum`](crate::format::fused_sum)).
    pub fn new(tree: &SummationTree, acc: Format) -> Self {
        let n = tree.n();
        let order = tree.post_order();
        let mut slot = vec![0usize; tree.graph().node_count()];
        for i in 0..n {
            slot[tree.leaf(i).index()] = i;
        }
        let mut operands = Vec::with_capacity(order.len());
        for (k, node) in order.iter().enumerate() {
            slot[node.index()] = n + k;
            operands.push(
                tree.children(*node)
                    .iter()
                    .map(|c| slot[c.index()])
                    .collect(),
            );
        }
        Replay {
            n,
            acc,
            operands,
            arithmetic: None,
        }
    }

    /// Compiles `tree`, each node computing what `model` says of it.
    pub fn with_arithmetic(tree: &SummationTree, model: &Arithmetic) -> Self {
        let keys = NodeKey::all(tree);
        let per_node: Vec<NodeArithmetic> = tree
            .post_order()
            .iter()
            .map(|node| model.at(&keys[node.index()]))
            .collect();
        let mut replay = Replay::new(tree, model.default.format);
        if !model.is_uniform() || model.default != NodeArithmetic::ieee(model.default.format) {
            replay.arithmetic = Some(per_node);
        }
        replay
    }

    /// Number of summands.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Whether the tree has a fused node (one of three or more terms).
    pub fn has_fused_nodes(&self) -> bool {
        self.operands.iter().any(|o| o.len() > 2)
    }

    /// The accumulator format (the default of an arithmetic model).
    pub fn accumulator(&self) -> Format {
        self.acc
    }

    /// The narrowest format any node rounds to.
    pub fn narrowest(&self) -> Format {
        self.arithmetic
            .iter()
            .flatten()
            .map(|a| a.format)
            .chain([self.acc])
            .min_by_key(|f| f.precision())
            .expect("one format at least")
    }

    /// Sums `x` (which must hold `n` values) in the tree's order.
    ///
    /// # Panics
    /// If `x.len() != n`.
    pub fn sum(&self, x: &[f64]) -> f64 {
        let mut values = Vec::new();
        self.sum_with(x, &mut values)
    }

    /// Like [`Replay::sum`], reusing `values` as scratch space.
    pub fn sum_with(&self, x: &[f64], values: &mut Vec<f64>) -> f64 {
        assert_eq!(x.len(), self.n, "replay of an {}-leaf tree", self.n);
        values.clear();
        values.extend_from_slice(x);
        let mut terms = Vec::new();
        for (k, ops) in self.operands.iter().enumerate() {
            let node = match &self.arithmetic {
                Some(nodes) => nodes[k],
                None => NodeArithmetic::ieee(self.acc),
            };
            let v = match ops.as_slice() {
                [a, b] => node.rounding.add(node.format, values[*a], values[*b]),
                _ => {
                    terms.clear();
                    terms.extend(ops.iter().map(|o| values[*o]));
                    node.sum(&terms)
                }
            };
            values.push(v);
        }
        values.last().copied().unwrap_or(x[0])
    }
}
