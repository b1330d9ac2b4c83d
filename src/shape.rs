//! A short human summary of a tree: depth, widest fused node, and the name of
//! the reference order it matches, when it matches one.
//!
//! ```
//! use fprev::{Order, shape::Shape};
//!
//! let s = Shape::of(&Order::Strided(8).tree(64));
//! assert_eq!(s.order, Some(Order::Strided(8)));
//! assert_eq!(s.to_string(), "8 interleaved lanes combined pairwise (native:strided:8); depth 10; binary");
//! ```

use std::fmt;

use crate::order::Order;
use crate::tree::SummationTree;

/// Trees larger than this are not matched against reference orders (the
/// summary stays fast); depth and width are still reported.
pub const MATCH_LIMIT: usize = 1 << 16;

/// What a tree looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Longest root-to-leaf path.
    pub depth: usize,
    /// Most children of a node (2 when binary).
    pub widest: usize,
    /// The reference order the tree equals, if any.
    pub order: Option<Order>,
}

impl Shape {
    /// Summarises `tree`.
    pub fn of(tree: &SummationTree) -> Self {
        let n = tree.n();
        let widest = tree.widest();
        let mut candidates = Order::candidates(n);
        if widest >= 3 {
            candidates.insert(0, Order::Fused(widest));
        }
        // The lane count of a strided order is the partner of summand 0.
        let parent_of_0 = tree
            .graph()
            .neighbors_directed(tree.leaf(0), petgraph::Direction::Incoming)
            .next();
        if let Some(&[a, b]) = parent_of_0.map(|p| tree.children(p)) {
            let k = tree.node(b).leaf.or(tree.node(a).leaf.filter(|x| *x != 0));
            if let Some(k) = k.filter(|k| *k > 1 && !k.is_power_of_two()) {
                candidates.push(Order::Strided(k));
            }
        }
        let order = (n > 1 && n <= MATCH_LIMIT)
            .then(|| candidates.into_iter().find(|o| &o.tree(n) == tree))
            .flatten();
        Shape {
            depth: tree.depth(),
            widest,
            order,
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.order {
            Some(Order::Sequential) => {
                f.write_str("sequential, left to right (native:sequential); ")?
            }
            Some(Order::Reverse) => f.write_str("sequential, right to left (native:reverse); ")?,
            Some(Order::Pairwise) => f.write_str("pairwise halving (native:pairwise); ")?,
            Some(Order::BinaryTree) => {
                f.write_str("binary tree reduction (native:binary-tree); ")?
            }
            Some(Order::Strided(k)) => write!(
                f,
                "{k} interleaved lanes combined pairwise (native:strided:{k}); "
            )?,
            Some(Order::Blocked(b)) => {
                write!(f, "sequential blocks of {b} (native:blocked:{b}); ")?
            }
            Some(Order::Fused(k)) => write!(f, "{k}-term fused accumulation (native:fused:{k}); ")?,
            None => {}
        }
        write!(f, "depth {}; ", self.depth)?;
        match self.widest {
            0 => f.write_str("a single summand"),
            2 => f.write_str("binary"),
            k => write!(f, "widest fused node {k} terms"),
        }
    }
}
