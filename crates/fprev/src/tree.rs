//! The summation tree: leaves `0..n-1` are the summands, an inner node with two
//! children is one IEEE addition, an inner node with `k >= 3` children is one
//! multi-term fused addition.
//!
//! Children are unordered (`a + b == b + a` bit for bit, and a fused node has
//! no internal order), so trees compare modulo child order and are always
//! written in canonical form: every node's children sorted by their smallest
//! leaf.
//!
//! ```
//! use fprev::SummationTree;
//!
//! let t: SummationTree = "((2+3)+(1+0))".parse().unwrap();
//! assert_eq!(t.to_text(), "((0+1)+(2+3))");
//! assert_eq!(t.to_json_tree(), "[[0,1],[2,3]]");
//! assert_eq!(t, "((0+1)+(3+2))".parse().unwrap());
//! assert_eq!(t.depth(), 2);
//! ```
//!
//! Every traversal here is iterative: a right-to-left sum of 100,000 summands
//! is a tree 100,000 levels deep.

mod diff;
mod parse;

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};

pub use diff::Difference;

/// A node of a [`SummationTree`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    /// The summand index for a leaf, `None` for a sum.
    pub leaf: Option<usize>,
    /// Number of leaves under this node.
    pub size: usize,
    /// Smallest leaf under this node: the canonical sort key.
    pub min_leaf: usize,
}

/// A rooted tree over the summands `0..n`, in canonical form.
///
/// Stored as a petgraph [`DiGraph`] with edges from parent to child; leaf `i`
/// is always node index `i`.
#[derive(Clone)]
pub struct SummationTree {
    graph: DiGraph<Node, ()>,
    root: NodeIndex,
    /// Children of every node in canonical order (empty for leaves).
    children: Vec<Vec<NodeIndex>>,
    /// The inner nodes, children first: walked once, as replays, models
    /// and drawings all walk it.
    post: Vec<NodeIndex>,
}

/// Why a tree could not be built or read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TreeError(pub String);

/// Builds a [`SummationTree`] bottom-up: leaves first, then sums of nodes
/// already built.
///
/// ```
/// use fprev::tree::TreeBuilder;
///
/// let mut b = TreeBuilder::new(3);
/// let s = b.sum(&[b.leaf(0), b.leaf(1)]);
/// let root = b.sum(&[s, b.leaf(2)]);
/// assert_eq!(b.finish(root).unwrap().to_text(), "((0+1)+2)");
/// ```
#[derive(Debug)]
pub struct TreeBuilder {
    graph: DiGraph<Node, ()>,
    has_parent: Vec<bool>,
}

impl TreeBuilder {
    /// A builder holding the leaves `0..n`.
    pub fn new(n: usize) -> Self {
        let mut graph = DiGraph::with_capacity(2 * n, 2 * n);
        for i in 0..n {
            graph.add_node(Node {
                leaf: Some(i),
                size: 1,
                min_leaf: i,
            });
        }
        TreeBuilder {
            graph,
            has_parent: vec![false; n],
        }
    }

    /// The node of leaf `i`.
    pub fn leaf(&self, i: usize) -> NodeIndex {
        NodeIndex::new(i)
    }

    /// Size (leaf count) of a node built so far.
    pub fn size(&self, node: NodeIndex) -> usize {
        self.graph[node].size
    }

    /// Adds a sum of `children` (two for an addition, more for a fused node).
    ///
    /// # Panics
    /// If fewer than two children are given or a child already has a parent:
    /// both are bugs in the caller, not bad input.
    pub fn sum(&mut self, children: &[NodeIndex]) -> NodeIndex {
        assert!(children.len() >= 2, "a sum needs at least two children");
        let size = children.iter().map(|c| self.graph[*c].size).sum();
        let min_leaf = children
            .iter()
            .map(|c| self.graph[*c].min_leaf)
            .min()
            .unwrap_or(0);
        let node = self.graph.add_node(Node {
            leaf: None,
            size,
            min_leaf,
        });
        self.has_parent.push(false);
        for &c in children {
            assert!(!self.has_parent[c.index()], "node {c:?} has two parents");
            self.has_parent[c.index()] = true;
            self.graph.add_edge(node, c, ());
        }
        node
    }

    /// Finishes the tree rooted at `root`, which must cover every leaf.
    pub fn finish(self, root: NodeIndex) -> Result<SummationTree, TreeError> {
        let leaves = self.graph_leaves();
        if self.graph[root].size != leaves {
            return Err(TreeError(format!(
                "the tree covers {} of its {} leaves",
                self.graph[root].size, leaves
            )));
        }
        Ok(SummationTree::from_graph(self.graph, root))
    }

    fn graph_leaves(&self) -> usize {
        self.graph
            .node_indices()
            .take_while(|i| self.graph[*i].leaf.is_some())
            .count()
    }
}

impl SummationTree {
    fn from_graph(graph: DiGraph<Node, ()>, root: NodeIndex) -> Self {
        let mut children = vec![Vec::new(); graph.node_count()];
        for node in graph.node_indices() {
            let mut c: Vec<NodeIndex> = graph
                .neighbors_directed(node, Direction::Outgoing)
                .collect();
            c.sort_by_key(|x| graph[*x].min_leaf);
            children[node.index()] = c;
        }
        let post = post_order(&graph, root, &children);
        SummationTree {
            graph,
            root,
            children,
            post,
        }
    }

    /// A random tree over `n` leaves, the same for the same `seed`: random
    /// roots are merged, two at a time, or up to `max_width` at a time (a
    /// fused node) when `max_width > 2`, until one remains. Replayed
    /// ([`crate::reduce::Replay`]) it is a black box whose order nothing but
    /// this tree describes, which makes it a test of a reveal.
    ///
    /// ```
    /// use fprev::SummationTree;
    ///
    /// let t = SummationTree::random(100, 2, 7);
    /// assert_eq!((t.n(), t.widest()), (100, 2));
    /// assert_eq!(t, SummationTree::random(100, 2, 7));
    /// assert!(SummationTree::random(100, 6, 7).widest() > 2);
    /// ```
    ///
    /// # Panics
    /// If `n` is 0 or `max_width` below 2.
    pub fn random(n: usize, max_width: usize, seed: u64) -> SummationTree {
        use rand::{Rng, SeedableRng};
        assert!(
            n > 0 && max_width >= 2,
            "a tree needs a leaf, and nodes of two children or more"
        );
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut b = TreeBuilder::new(n);
        let mut roots: Vec<NodeIndex> = (0..n).map(|i| b.leaf(i)).collect();
        while roots.len() > 1 {
            let k = rng.random_range(2..=max_width.min(roots.len()));
            let mut children = Vec::with_capacity(k);
            for _ in 0..k {
                let at = rng.random_range(0..roots.len());
                children.push(roots.swap_remove(at));
            }
            roots.push(b.sum(&children));
        }
        b.finish(roots[0]).expect("every leaf merged into one root")
    }

    /// Number of summands.
    pub fn n(&self) -> usize {
        self.graph[self.root].size
    }

    /// Whether the size alone forces this tree: one or two summands have
    /// one tree each, so revealing it says nothing of an order (nor of
    /// whether the black box follows one).
    pub fn is_forced(&self) -> bool {
        self.n() <= 2
    }

    /// The root node.
    pub fn root(&self) -> NodeIndex {
        self.root
    }

    /// The node of leaf `i`.
    pub fn leaf(&self, i: usize) -> NodeIndex {
        NodeIndex::new(i)
    }

    /// A node's data.
    pub fn node(&self, node: NodeIndex) -> Node {
        self.graph[node]
    }

    /// A node's parent, `None` for the root.
    pub fn parent(&self, node: NodeIndex) -> Option<NodeIndex> {
        self.graph
            .neighbors_directed(node, petgraph::Direction::Incoming)
            .next()
    }

    /// A node's children in canonical order.
    pub fn children(&self, node: NodeIndex) -> &[NodeIndex] {
        &self.children[node.index()]
    }

    /// The summands under `node`, ascending.
    ///
    /// ```
    /// use fprev::SummationTree;
    ///
    /// let tree: SummationTree = "((0+2)+(1+3))".parse().unwrap();
    /// let left = tree.children(tree.root())[0];
    /// assert_eq!(tree.leaves_under(left), vec![0, 2]);
    /// ```
    pub fn leaves_under(&self, node: NodeIndex) -> Vec<usize> {
        let mut leaves = Vec::with_capacity(self.graph[node].size);
        let mut stack = vec![node];
        while let Some(v) = stack.pop() {
            match self.graph[v].leaf {
                Some(i) => leaves.push(i),
                None => stack.extend(self.children(v)),
            }
        }
        leaves.sort_unstable();
        leaves
    }

    /// The subtree under `node` as a tree of its own, its leaves numbered
    /// `0..` in the order of their summands: its shape can then be named
    /// as any tree's.
    ///
    /// ```
    /// use fprev::SummationTree;
    ///
    /// let tree: SummationTree = "(((4+5)+6)+((0+1)+(2+3)))".parse().unwrap();
    /// let run = tree.children(tree.root())[1];
    /// assert_eq!(tree.leaves_under(run), vec![4, 5, 6]);
    /// assert_eq!(tree.subtree(run).to_text(), "((0+1)+2)");
    /// ```
    pub fn subtree(&self, node: NodeIndex) -> SummationTree {
        let leaves = self.leaves_under(node);
        let mut b = TreeBuilder::new(leaves.len());
        let mut built = vec![None; self.graph.node_count()];
        let mut inner: Vec<NodeIndex> = Vec::new();
        let mut stack = vec![node];
        while let Some(v) = stack.pop() {
            if let Some(i) = self.graph[v].leaf {
                let rank = leaves.binary_search(&i).expect("a leaf under the node");
                built[v.index()] = Some(b.leaf(rank));
            } else {
                inner.push(v);
                stack.extend(self.children(v));
            }
        }
        // Parents were pushed before their children: build in reverse.
        for &v in inner.iter().rev() {
            let children: Vec<NodeIndex> = self
                .children(v)
                .iter()
                .map(|c| built[c.index()].expect("children are built first"))
                .collect();
            built[v.index()] = Some(b.sum(&children));
        }
        let root = built[node.index()].expect("the node is built");
        b.finish(root).expect("a subtree covers its own leaves")
    }

    /// The underlying petgraph graph (edges point from parent to child).
    pub fn graph(&self) -> &DiGraph<Node, ()> {
        &self.graph
    }

    /// Inner nodes, every child before its parent.
    pub fn post_order(&self) -> Vec<NodeIndex> {
        self.post.clone()
    }

    /// Longest root-to-leaf path, in additions.
    pub fn depth(&self) -> usize {
        let mut depth = vec![0usize; self.graph.node_count()];
        for node in self.post_order() {
            depth[node.index()] = 1 + self
                .children(node)
                .iter()
                .map(|c| depth[c.index()])
                .max()
                .unwrap_or(0);
        }
        depth[self.root.index()]
    }

    /// Most children of any node: 2 for a binary tree, `k` when the widest
    /// fused node adds `k` terms, 0 for a single leaf.
    pub fn widest(&self) -> usize {
        self.children.iter().map(Vec::len).max().unwrap_or(0)
    }

    /// Whether every inner node is an IEEE addition (no fused nodes).
    pub fn is_binary(&self) -> bool {
        self.widest() <= 2
    }

    /// The canonical text form, e.g. `((0+1)+(2+3))`; a fused node is
    /// `(0+1+2+3+4)`.
    pub fn to_text(&self) -> String {
        self.subtree_text(self.root)
    }

    /// The canonical nested-array form of the JSON `tree` key, e.g.
    /// `[[0,1],[2,3]]`.
    pub fn to_json_tree(&self) -> String {
        self.write_nested(self.root, '[', ']', ',')
    }

    fn write_nested(&self, top: NodeIndex, open: char, close: char, sep: char) -> String {
        use std::fmt::Write;
        let mut out = String::with_capacity(8 * self.graph[top].size);
        // Each entry is (node, index of next child to write).
        let mut stack = vec![(top, 0usize)];
        while let Some((node, next)) = stack.pop() {
            let data = self.graph[node];
            if let Some(i) = data.leaf {
                let _ = write!(out, "{i}");
                continue;
            }
            let kids = self.children(node);
            if next == 0 {
                out.push(open);
            } else if next < kids.len() {
                out.push(sep);
            }
            if next == kids.len() {
                out.push(close);
            } else {
                stack.push((node, next + 1));
                stack.push((kids[next], 0));
            }
        }
        out
    }

    /// Reads the nested-array form of the JSON `tree` key.
    pub fn from_json_tree(text: &str) -> Result<Self, TreeError> {
        parse::nested(text, b'[', b']', b',')
    }

    /// The leaf sets of all inner nodes, as the deciding key of
    /// equality modulo child order.
    fn clusters(&self) -> HashMap<Cluster, NodeIndex> {
        let keys = diff::leaf_keys(self.n());
        let mut hash = keys;
        hash.resize(self.graph.node_count(), 0);
        let mut out = HashMap::with_capacity(self.graph.node_count() - self.n());
        for node in self.post_order() {
            let h = self
                .children(node)
                .iter()
                .fold(0u64, |acc, c| acc.wrapping_add(hash[c.index()]));
            hash[node.index()] = h;
            let d = self.graph[node];
            out.insert(
                Cluster {
                    hash: h,
                    size: d.size,
                    min_leaf: d.min_leaf,
                    width: self.children(node).len(),
                },
                node,
            );
        }
        out
    }

    /// Equality modulo child order, with the smallest subtree of each tree
    /// that the other lacks when they differ.
    ///
    /// ```
    /// use fprev::SummationTree;
    ///
    /// let a: SummationTree = "(((0+1)+2)+3)".parse().unwrap();
    /// let b: SummationTree = "((0+1)+(2+3))".parse().unwrap();
    /// let d = a.diff(&b).unwrap();
    /// assert_eq!(a.subtree_text(d.left.unwrap()), "((0+1)+2)");
    /// assert_eq!(b.subtree_text(d.right.unwrap()), "(2+3)");
    /// ```
    pub fn diff(&self, other: &SummationTree) -> Option<Difference> {
        diff::diff(self, other)
    }

    /// The canonical text form of the subtree under `node`.
    pub fn subtree_text(&self, node: NodeIndex) -> String {
        self.write_nested(node, '(', ')', '+')
    }
}

/// An inner node's identity modulo child order: its leaf set (hashed),
/// plus cheap exact invariants that make collisions harmless in practice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Cluster {
    hash: u64,
    size: usize,
    min_leaf: usize,
    width: usize,
}

impl PartialEq for SummationTree {
    /// Equal modulo child order: both are canonical (children sorted by
    /// their smallest leaf), so node by node from the root, without the
    /// hashing of [`SummationTree::diff`].
    fn eq(&self, other: &Self) -> bool {
        if self.n() != other.n() {
            return false;
        }
        let mut stack = vec![(self.root, other.root)];
        while let Some((a, b)) = stack.pop() {
            let (ca, cb) = (self.children(a), other.children(b));
            if self.graph[a] != other.graph[b] || ca.len() != cb.len() {
                return false;
            }
            stack.extend(ca.iter().copied().zip(cb.iter().copied()));
        }
        true
    }
}

impl Eq for SummationTree {}

impl fmt::Debug for SummationTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SummationTree({})", self.to_text())
    }
}

impl fmt::Display for SummationTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

impl FromStr for SummationTree {
    type Err = TreeError;

    /// Reads the text form, e.g. `((0+1)+2)`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse::nested(s, b'(', b')', b'+')
    }
}

/// The inner nodes under `root`, each after its children (in canonical
/// order), iteratively: a right-to-left sum is as deep as it is long.
fn post_order(
    graph: &DiGraph<Node, ()>,
    root: NodeIndex,
    children: &[Vec<NodeIndex>],
) -> Vec<NodeIndex> {
    let mut order = Vec::with_capacity(graph.node_count());
    let mut stack = vec![(root, false)];
    while let Some((node, expanded)) = stack.pop() {
        if graph[node].leaf.is_some() {
            continue;
        }
        if expanded {
            order.push(node);
        } else {
            stack.push((node, true));
            for &c in children[node.index()].iter().rev() {
                stack.push((c, false));
            }
        }
    }
    order
}
