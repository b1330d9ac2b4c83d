//! The binary tree of the summands placed so far, grown one summand at a
//! time (each on the edge above a node: a new node joins that node and the
//! summand), and its [`Snapshot`]: the preorder and heavy paths a search
//! and a packing read while the tree stands still.

use crate::error::Result;
use crate::tree::{SummationTree, TreeBuilder};

/// A node of the growing tree.
pub(super) type Node = u32;

/// No node.
pub(super) const NONE: Node = Node::MAX;

/// The tree of the placed summands: the black box's tree restricted to
/// them.
pub(super) struct Growing {
    parent: Vec<Node>,
    /// `[NONE, NONE]` for a leaf.
    children: Vec<[Node; 2]>,
    /// A summand under the node: its own for a leaf, its first child's
    /// otherwise, so the oldest summand of the subtree.
    rep: Vec<usize>,
    /// The node of each placed summand.
    leaf: Vec<Node>,
    root: Node,
}

impl Growing {
    /// The tree of summand `first` alone, of a black box of `n` summands.
    pub(super) fn new(n: usize, first: usize) -> Self {
        let mut leaf = vec![NONE; n];
        leaf[first] = 0;
        Growing {
            parent: vec![NONE],
            children: vec![[NONE, NONE]],
            rep: vec![first],
            leaf,
            root: 0,
        }
    }

    pub(super) fn root(&self) -> Node {
        self.root
    }

    pub(super) fn parent(&self, v: Node) -> Node {
        self.parent[v as usize]
    }

    pub(super) fn children(&self, v: Node) -> Option<[Node; 2]> {
        let c = self.children[v as usize];
        (c[0] != NONE).then_some(c)
    }

    /// The other child of `v`'s parent; `NONE` at the root.
    pub(super) fn sibling(&self, v: Node) -> Node {
        match self.parent(v) {
            NONE => NONE,
            p => {
                let [a, b] = self.children[p as usize];
                if a == v { b } else { a }
            }
        }
    }

    /// A summand under `v`.
    pub(super) fn rep(&self, v: Node) -> usize {
        self.rep[v as usize]
    }

    /// A summand under `v` that few other nodes name: its second child's
    /// (the summands that came later), so that the tests of neighbouring
    /// nodes mask and mark different summands and can share an input.
    pub(super) fn fresh(&self, v: Node) -> usize {
        match self.children(v) {
            Some([_, later]) => self.rep(later),
            None => self.rep(v),
        }
    }

    /// A pair of summands meeting at the inner node `w` (one of each
    /// child, [`Growing::fresh`]), and a third summand under `w` where it
    /// has one: every tree swallows it with the pair.
    pub(super) fn meeting(&self, w: Node) -> ([usize; 2], Option<usize>) {
        let [a, b] = self.children(w).expect("an inner node");
        let pair = [self.fresh(a), self.fresh(b)];
        let third = [self.rep(a), self.rep(b)]
            .into_iter()
            .find(|l| !pair.contains(l));
        (pair, third)
    }

    /// The node of summand `k`, `NONE` while it has no place.
    pub(super) fn leaf(&self, k: usize) -> Node {
        self.leaf[k]
    }

    pub(super) fn is_placed(&self, k: usize) -> bool {
        self.leaf[k] != NONE
    }

    /// Nodes ever made (the bound of node numbers).
    pub(super) fn len(&self) -> usize {
        self.parent.len()
    }

    /// The ancestor `h` edges above `v`, if the tree is that deep there.
    pub(super) fn ancestor(&self, mut v: Node, h: usize) -> Option<Node> {
        for _ in 0..h {
            v = self.parent(v);
            if v == NONE {
                return None;
            }
        }
        Some(v)
    }

    /// How many edges `t` lies above `v` (0 when `t` is `v`), looking at
    /// most `most` edges up.
    pub(super) fn height_above(&self, mut v: Node, t: Node, most: usize) -> Option<usize> {
        for h in 0..=most {
            if v == t {
                return Some(h);
            }
            v = self.parent(v);
            if v == NONE {
                return None;
            }
        }
        None
    }

    /// Places summand `k` on the edge above `t`: a new node adds `t` and
    /// `k`. Returns that node.
    pub(super) fn insert(&mut self, k: usize, t: Node) -> Node {
        let kn = self.push(NONE, [NONE, NONE], k);
        self.leaf[k] = kn;
        let p = self.parent(t);
        let joined = self.push(p, [t, kn], self.rep(t));
        self.parent[t as usize] = joined;
        self.parent[kn as usize] = joined;
        self.replace_child(p, t, joined);
        joined
    }

    /// Takes back the last [`Growing::insert`], of summand `k`.
    pub(super) fn undo(&mut self, k: usize) {
        let joined = (self.len() - 1) as Node;
        let [t, kn] = self.children[joined as usize];
        debug_assert_eq!(kn, self.leaf[k]);
        let p = self.parent(joined);
        self.parent[t as usize] = p;
        self.replace_child(p, joined, t);
        self.leaf[k] = NONE;
        for _ in 0..2 {
            self.parent.pop();
            self.children.pop();
            self.rep.pop();
        }
    }

    fn push(&mut self, parent: Node, children: [Node; 2], rep: usize) -> Node {
        self.parent.push(parent);
        self.children.push(children);
        self.rep.push(rep);
        (self.len() - 1) as Node
    }

    fn replace_child(&mut self, p: Node, old: Node, new: Node) {
        if p == NONE {
            self.root = new;
        } else {
            for c in &mut self.children[p as usize] {
                if *c == old {
                    *c = new;
                }
            }
        }
    }

    /// The summation tree, once every summand has its place.
    pub(super) fn finish(&self) -> Result<SummationTree> {
        let n = self.leaf.len();
        let mut builder = TreeBuilder::new(n);
        let mut built = vec![None; self.len()];
        for v in self.post_order() {
            let b = match self.children(v) {
                None => builder.leaf(self.rep(v)),
                Some([a, c]) => {
                    let (a, c) = (built[a as usize], built[c as usize]);
                    builder.sum(&[a.expect("child first"), c.expect("child first")])
                }
            };
            built[v as usize] = Some(b);
        }
        let root = built[self.root as usize].expect("the root is built");
        Ok(builder.finish(root)?)
    }

    /// The nodes of the tree, children before parents.
    fn post_order(&self) -> Vec<Node> {
        let mut order = Vec::with_capacity(self.len());
        let mut stack = vec![self.root];
        while let Some(v) = stack.pop() {
            order.push(v);
            if let Some(c) = self.children(v) {
                stack.extend(c);
            }
        }
        order.reverse();
        order
    }
}

/// The growing tree at one moment: preorder numbers (a subtree is an
/// interval of them), leaf counts and heavy paths (from each node down
/// through its child with more leaves, the first on a tie).
pub(super) struct Snapshot {
    pre: Vec<u32>,
    /// The last preorder number in the node's subtree.
    end: Vec<u32>,
    leaves: Vec<u32>,
    /// The heavy path through the node, and its place on it.
    path: Vec<u32>,
    pos: Vec<u32>,
    paths: Vec<Vec<Node>>,
}

impl Snapshot {
    pub(super) fn of(tree: &Growing) -> Self {
        let len = tree.len();
        let mut s = Snapshot {
            pre: vec![u32::MAX; len],
            end: vec![0; len],
            leaves: vec![0; len],
            path: vec![0; len],
            pos: vec![0; len],
            paths: Vec::new(),
        };
        for v in tree.post_order() {
            s.leaves[v as usize] = match tree.children(v) {
                None => 1,
                Some([a, b]) => s.leaves[a as usize] + s.leaves[b as usize],
            };
        }
        // Preorder, the heavy child first, so that each heavy path's
        // subtrees nest as intervals sharing their start.
        let mut next = 0u32;
        let mut stack = vec![tree.root()];
        s.paths.push(Vec::new());
        while let Some(v) = stack.pop() {
            s.pre[v as usize] = next;
            s.end[v as usize] = next + 2 * s.leaves[v as usize] - 2;
            next += 1;
            let p = tree.parent(v);
            let path = if p != NONE && s.heavy(tree, p) == v {
                s.path[p as usize]
            } else {
                if v != tree.root() {
                    s.paths.push(Vec::new());
                }
                (s.paths.len() - 1) as u32
            };
            s.path[v as usize] = path;
            s.pos[v as usize] = s.paths[path as usize].len() as u32;
            s.paths[path as usize].push(v);
            if let Some([a, b]) = tree.children(v) {
                let heavy = s.heavy(tree, v);
                let light = if heavy == a { b } else { a };
                stack.push(light);
                stack.push(heavy);
            }
        }
        s
    }

    fn heavy(&self, tree: &Growing, v: Node) -> Node {
        let [a, b] = tree.children(v).expect("an inner node");
        if self.leaves[b as usize] > self.leaves[a as usize] {
            b
        } else {
            a
        }
    }

    /// The preorder interval of `v`'s subtree, `v` itself included.
    pub(super) fn subtree(&self, v: Node) -> [u32; 2] {
        [self.pre[v as usize], self.end[v as usize]]
    }

    /// The preorder interval of the nodes strictly under `v` (empty for a
    /// leaf: its start past its end).
    pub(super) fn under(&self, v: Node) -> [u32; 2] {
        [self.pre[v as usize] + 1, self.end[v as usize]]
    }

    pub(super) fn pre(&self, v: Node) -> u32 {
        self.pre[v as usize]
    }

    /// Nodes strictly under `v`.
    pub(super) fn count_under(&self, v: Node) -> u32 {
        self.end[v as usize] - self.pre[v as usize]
    }

    /// The heavy path through `v` and `v`'s place on it.
    pub(super) fn path_of(&self, v: Node) -> (u32, u32) {
        (self.path[v as usize], self.pos[v as usize])
    }

    pub(super) fn path(&self, path: u32) -> &[Node] {
        &self.paths[path as usize]
    }
}
