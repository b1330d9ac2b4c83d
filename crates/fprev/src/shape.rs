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
        Shape {
            depth: tree.depth(),
            widest: tree.widest(),
            order: Self::orders(tree).into_iter().next(),
        }
    }

    /// Every reference order whose tree at this size is `tree`, the most
    /// telling name first (small trees have several: at `n = 4` pairwise
    /// halving is also the binary tree reduction). Empty past
    /// [`MATCH_LIMIT`] summands.
    ///
    /// ```
    /// use fprev::{Order, shape::Shape};
    ///
    /// let names = Shape::orders(&Order::Pairwise.tree(4));
    /// assert!(names.contains(&Order::Pairwise) && names.contains(&Order::BinaryTree));
    /// ```
    pub fn orders(tree: &SummationTree) -> Vec<Order> {
        let n = tree.n();
        if n <= 1 || n > MATCH_LIMIT {
            return Vec::new();
        }
        let widest = tree.widest();
        let mut candidates = Order::candidates(n);
        if widest >= 3 {
            candidates.insert(0, Order::Fused(widest));
        }
        candidates.extend(derived_candidates(tree));
        let mut out: Vec<Order> = Vec::new();
        for order in candidates {
            if !out.contains(&order) && &order.tree(n) == tree {
                out.push(order);
            }
        }
        out
    }
}

/// Orders whose parameter can be read off the tree: the lane count of a
/// strided order is the partner of summand 0, the block size of a blocked
/// order is the chain of single summands that summand 0 starts.
pub(crate) fn derived_candidates(tree: &SummationTree) -> Vec<Order> {
    let mut out = Vec::new();
    let Some(parent) = tree.parent(tree.leaf(0)) else {
        return out;
    };
    if let Some(k) = partner_of_0(tree) {
        out.push(Order::Strided(k));
    }
    let mut chain = parent;
    while let Some(p) = tree.parent(chain) {
        let single = tree.children(p).len() == 2
            && tree
                .children(p)
                .iter()
                .any(|c| tree.node(*c).leaf.is_some());
        if !single {
            break;
        }
        chain = p;
    }
    out.push(Order::Blocked(tree.node(chain).size));
    out
}

/// The summand added to summand 0 first, when a lone summand is: the
/// lane count of interleaved lanes.
pub(crate) fn partner_of_0(tree: &SummationTree) -> Option<usize> {
    let parent = tree.parent(tree.leaf(0))?;
    tree.children(parent)
        .iter()
        .find_map(|c| tree.node(*c).leaf.filter(|&k| k != 0))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_every_reference_order() {
        let orders = [
            Order::Sequential,
            Order::Reverse,
            Order::Pairwise,
            Order::BinaryTree,
            Order::Strided(3),
            Order::Strided(8),
            Order::Blocked(5),
            Order::Blocked(64),
            Order::Fused(9),
        ];
        for order in orders {
            for n in [40, 100, 1000] {
                let tree = order.tree(n);
                let named = Shape::of(&tree).order;
                // Another name for the same tree is fine (blocked:n is sequential).
                let named = named.unwrap_or_else(|| panic!("{order} at n = {n} not named"));
                assert_eq!(named.tree(n), tree, "{order} named {named}");
            }
        }
    }

    #[test]
    fn leaves_an_unknown_shape_unnamed() {
        let t: SummationTree = "((0+3)+((1+2)+4))".parse().unwrap();
        let s = Shape::of(&t);
        assert_eq!((s.order, s.depth, s.widest), (None, 3, 2));
        assert_eq!(s.to_string(), "depth 3; binary");
    }
}
