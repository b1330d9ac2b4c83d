//! The outline of a tree: the part a drawing shows node by node, cut off
//! where the rest is drawn as one box per subtree.

use std::collections::{BinaryHeap, HashSet};

use petgraph::graph::NodeIndex;

use fprev::tree::SummationTree;

use super::DRAW_WHOLE;

/// How far a collapsed outline opens its boxes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// The most ends (boxes and single summands) it may show.
    pub(crate) ends: usize,
    /// Boxes of this many summands or fewer stay shut; a box whose
    /// opening peels off no more than this many (and a quarter of what
    /// stays) counts against `peels`.
    pub(crate) smallest: usize,
    /// How many peeling boxes may still open: a few show a tail added one
    /// by one, all of them would draw a sequential sum as a long chain.
    pub(crate) peels: usize,
}

/// The main drawing: about 128 boxes, enough for NumPy's 128 blocks of
/// 128 summands at n = 16,384 and few enough for `dot` to lay out in a
/// second; boxes of 16 summands or fewer are not worth opening.
pub(crate) const MAIN: Limits = Limits {
    ends: 128,
    smallest: 16,
    peels: 8,
};

/// A subtree cut into sums drawn one by one and ends drawn as one box each.
///
/// ```
/// use fprev_present::render::Outline;
/// use fprev::Order;
///
/// // Small trees are drawn whole.
/// let small = Outline::of(&Order::Pairwise.tree(8));
/// assert_eq!((small.sums().len(), small.boxes().len()), (7, 0));
///
/// // 64 blocks of 128 summed sequentially: the 63 sums of blocks and a
/// // box for each block.
/// let large = Outline::of(&Order::Blocked(128).tree(64 * 128));
/// assert_eq!((large.sums().len(), large.boxes().len()), (63, 64));
/// ```
#[derive(Clone, Debug)]
pub struct Outline {
    sums: Vec<NodeIndex>,
    ends: Vec<NodeIndex>,
    boxes: Vec<NodeIndex>,
}

impl Outline {
    /// The outline a drawing of `tree` shows: the whole tree up to
    /// [`DRAW_WHOLE`] summands, above that a cut that keeps about 128 ends.
    pub fn of(tree: &SummationTree) -> Self {
        if tree.n() <= DRAW_WHOLE {
            Self::whole(tree, tree.root())
        } else {
            Self::collapsed(tree, tree.root(), MAIN)
        }
    }

    /// The subtree under `top` with every sum shown.
    pub(crate) fn whole(tree: &SummationTree, top: NodeIndex) -> Self {
        Self::walk(tree, top, |_| true)
    }

    /// The subtree under `top` opened largest box first, all boxes of one
    /// size at once (repeated subtrees open together, so the drawing shows
    /// them alike), while the ends stay within `limits`.
    pub(crate) fn collapsed(tree: &SummationTree, top: NodeIndex, limits: Limits) -> Self {
        let openable = |node: NodeIndex| tree.node(node).size > limits.smallest.max(1);
        // Opening a box that splits into a big box and a few summands
        // shows little: a link of a chain. Few in number and next to the
        // big box, so that two near halves of a small box are no peel.
        let peels = |node: &NodeIndex| {
            let size = tree.node(*node).size;
            let big = tree
                .children(*node)
                .iter()
                .map(|c| tree.node(*c).size)
                .max()
                .unwrap_or(size);
            let rest = size - big;
            rest <= limits.smallest && 4 * rest <= big
        };
        let mut shut = BinaryHeap::new();
        if openable(top) {
            shut.push((tree.node(top).size, std::cmp::Reverse(top)));
        }
        let mut open = HashSet::new();
        let mut ends = 1;
        let mut peels_left = limits.peels;
        while let Some(&(size, _)) = shut.peek() {
            let mut class = Vec::new();
            while let Some(&(s, std::cmp::Reverse(node))) = shut.peek() {
                if s != size {
                    break;
                }
                shut.pop();
                class.push(node);
            }
            let peeling = class.iter().filter(|n| peels(n)).count();
            if peeling > peels_left {
                // These stay shut; smaller boxes elsewhere may still open.
                continue;
            }
            let more: usize = class.iter().map(|n| tree.children(*n).len() - 1).sum();
            if ends + more > limits.ends {
                break;
            }
            peels_left -= peeling;
            ends += more;
            for node in class {
                open.insert(node);
                for &c in tree.children(node) {
                    if openable(c) {
                        shut.push((tree.node(c).size, std::cmp::Reverse(c)));
                    }
                }
            }
        }
        Self::walk(tree, top, |node| open.contains(&node))
    }

    /// The outline under `top` that shows the nodes `open` says are open.
    fn walk(tree: &SummationTree, top: NodeIndex, open: impl Fn(NodeIndex) -> bool) -> Self {
        let mut sums = Vec::new();
        let mut ends = Vec::new();
        let mut stack = vec![(top, false)];
        while let Some((node, expanded)) = stack.pop() {
            if tree.node(node).leaf.is_some() || !open(node) {
                ends.push(node);
            } else if expanded {
                sums.push(node);
            } else {
                stack.push((node, true));
                for &c in tree.children(node).iter().rev() {
                    stack.push((c, false));
                }
            }
        }
        // In summand order: a whole tree lists its leaves as `x0, x1, …`.
        ends.sort_by_key(|e| tree.node(*e).min_leaf);
        let boxes = ends
            .iter()
            .copied()
            .filter(|e| tree.node(*e).leaf.is_none())
            .collect();
        Outline { sums, ends, boxes }
    }

    /// The sums shown one by one, every child before its parent.
    pub fn sums(&self) -> &[NodeIndex] {
        &self.sums
    }

    /// The nodes shown as one box each, in summand order: single summands
    /// and the collapsed subtrees.
    pub fn ends(&self) -> &[NodeIndex] {
        &self.ends
    }

    /// The collapsed subtrees among the [`ends`](Self::ends).
    pub fn boxes(&self) -> &[NodeIndex] {
        &self.boxes
    }
}
