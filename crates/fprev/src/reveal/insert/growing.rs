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
        let mut order = Vec::new();
        self.post_order(&mut order, &mut Vec::new());
        for v in order {
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

    /// Fills `order` with the nodes of the tree, children before parents
    /// (`stack` is room for the walk: callers that walk often keep both).
    fn post_order(&self, order: &mut Vec<Node>, stack: &mut Vec<Node>) {
        order.clear();
        stack.clear();
        stack.push(self.root);
        while let Some(v) = stack.pop() {
            order.push(v);
            if let Some(c) = self.children(v) {
                stack.extend(c);
            }
        }
        order.reverse();
    }
}

/// The growing tree at one moment: preorder numbers (a subtree is an
/// interval of them), leaf counts and heavy paths (from each node down
/// through its child with more leaves, the first on a tie). One snapshot
/// is refreshed round after round, so that its buffers are made once.
#[derive(Default)]
pub(super) struct Snapshot {
    pre: Vec<u32>,
    /// The last preorder number in the node's subtree.
    end: Vec<u32>,
    leaves: Vec<u32>,
    /// The heavy path through the node, and its place on it.
    path: Vec<u32>,
    pos: Vec<u32>,
    /// The nodes in preorder. The heavy child comes first, so each heavy
    /// path is a run of them, from its top down, and the paths' runs
    /// follow one another in the order the paths are numbered.
    order: Vec<Node>,
    /// Where each heavy path's run starts in `order`, then `order`'s end.
    starts: Vec<u32>,
    /// Room for the walks over the tree.
    stack: Vec<Node>,
}

impl Snapshot {
    /// Takes the snapshot of `tree` as it stands now.
    pub(super) fn refresh(&mut self, tree: &Growing) {
        let len = tree.len();
        for (buffer, fill) in [
            (&mut self.pre, u32::MAX),
            (&mut self.end, 0),
            (&mut self.leaves, 0),
            (&mut self.path, 0),
            (&mut self.pos, 0),
        ] {
            buffer.clear();
            buffer.resize(len, fill);
        }
        tree.post_order(&mut self.order, &mut self.stack);
        for &v in &self.order {
            self.leaves[v as usize] = match tree.children(v) {
                None => 1,
                Some([a, b]) => self.leaves[a as usize] + self.leaves[b as usize],
            };
        }
        // Preorder, the heavy child first, so that each heavy path's
        // subtrees nest as intervals sharing their start.
        self.order.clear();
        self.starts.clear();
        self.stack.clear();
        self.stack.push(tree.root());
        while let Some(v) = self.stack.pop() {
            let next = self.order.len() as u32;
            self.pre[v as usize] = next;
            self.end[v as usize] = next + 2 * self.leaves[v as usize] - 2;
            let p = tree.parent(v);
            if p == NONE || self.heavy(tree, p) != v {
                self.starts.push(next);
            }
            let path = self.starts.len() as u32 - 1;
            self.path[v as usize] = path;
            self.pos[v as usize] = next - self.starts[path as usize];
            self.order.push(v);
            if let Some([a, b]) = tree.children(v) {
                let heavy = self.heavy(tree, v);
                let light = if heavy == a { b } else { a };
                self.stack.push(light);
                self.stack.push(heavy);
            }
        }
        self.starts.push(self.order.len() as u32);
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
        let path = path as usize;
        &self.order[self.starts[path] as usize..self.starts[path + 1] as usize]
    }
}
