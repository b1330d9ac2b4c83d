//! Shape signatures: which subtrees of a tree are the same subtree moved
//! along the summands, so that a drawing can show the shape once and count
//! its copies.

use std::collections::HashMap;

use petgraph::graph::NodeIndex;

use fprev::tree::SummationTree;

/// Every node's shape as a small integer. Two nodes share an id when their
/// subtrees are equal up to shifting their leaf indices: the eight lanes of
/// a strided sum (`0, 8, 16, …` and `1, 9, 17, …`) share one, and so do
/// the blocks of a blocked sum; every leaf has the same id.
///
/// ```
/// use fprev_present::render::Shapes;
/// use fprev::SummationTree;
///
/// let t: SummationTree = "(((0+2)+(1+3))+((4+5)+(6+7)))".parse().unwrap();
/// let shapes = Shapes::of(&t);
/// let [left, right] = t.children(t.root()) else { unreachable!() };
/// // Both halves are two pairs, but only one pairs neighbours.
/// assert_ne!(shapes.id(*left), shapes.id(*right));
/// let [a, b] = t.children(*right) else { unreachable!() };
/// assert_eq!(shapes.id(*a), shapes.id(*b));
/// ```
#[derive(Clone, Debug)]
pub struct Shapes {
    ids: Vec<u32>,
    count: usize,
}

impl Shapes {
    /// The shapes of all nodes of `tree`, interned bottom-up in one pass:
    /// an inner node's shape is its children's shapes with where each
    /// child starts relative to the node, so equal keys mean equal
    /// subtrees up to a shift, and the work is linear in the tree.
    pub fn of(tree: &SummationTree) -> Self {
        const LEAF: u32 = 0;
        let mut ids = vec![LEAF; tree.graph().node_count()];
        let mut interned: HashMap<Vec<(u32, usize)>, u32> = HashMap::new();
        for node in tree.post_order() {
            let first = tree.node(node).min_leaf;
            let key: Vec<(u32, usize)> = tree
                .children(node)
                .iter()
                .map(|c| (ids[c.index()], tree.node(*c).min_leaf - first))
                .collect();
            let next = interned.len() as u32 + 1;
            ids[node.index()] = *interned.entry(key).or_insert(next);
        }
        Shapes {
            ids,
            count: interned.len() + 1,
        }
    }

    /// The shape id of `node`.
    pub fn id(&self, node: NodeIndex) -> u32 {
        self.ids[node.index()]
    }

    /// How many distinct shapes the tree holds, the leaf's included.
    pub fn count(&self) -> usize {
        self.count
    }
}
