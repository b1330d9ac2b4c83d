//! Which summands a box holds, said in a few characters: a run
//! (`x128…x255`), an arithmetic progression (`x1, x9, …, x121`), or the
//! range they lie in.

use petgraph::graph::NodeIndex;

use fprev::tree::SummationTree;

/// The largest summand under every node and, where the summands under it
/// are evenly spaced, their spacing.
#[derive(Clone, Debug)]
pub(crate) struct Spans {
    last: Vec<usize>,
    step: Vec<Option<usize>>,
}

impl Spans {
    /// The spans of all nodes of `tree`, bottom-up in one pass. A node's
    /// summands all lie on the grid from its first summand spaced by `g`,
    /// the gcd of their distances to the first; they are evenly spaced
    /// when that grid, up to its last summand, has no more points than it
    /// has summands.
    pub(crate) fn of(tree: &SummationTree) -> Self {
        let count = tree.graph().node_count();
        let mut last = vec![0; count];
        let mut gcd = vec![0; count];
        let mut step = vec![None; count];
        for i in 0..tree.n() {
            last[tree.leaf(i).index()] = i;
        }
        for node in tree.post_order() {
            let d = tree.node(node);
            let children = tree.children(node);
            let end = children.iter().map(|c| last[c.index()]).max().unwrap_or(0);
            // A summand's distance to the node's first is its distance to
            // its child's first plus the child's distance.
            let g = children.iter().fold(0, |g, c| {
                let g = euclid(g, gcd[c.index()]);
                euclid(g, tree.node(*c).min_leaf - d.min_leaf)
            });
            last[node.index()] = end;
            gcd[node.index()] = g;
            if end - d.min_leaf == (d.size - 1) * g {
                step[node.index()] = Some(g);
            }
        }
        Spans { last, step }
    }

    /// The summands under `node`, numbered from `base` and written with
    /// `prefix` (`x` for summands, `+` for offsets within a box).
    pub(crate) fn label(
        &self,
        tree: &SummationTree,
        node: NodeIndex,
        base: usize,
        prefix: &str,
    ) -> String {
        let d = tree.node(node);
        let first = d.min_leaf - base;
        let last = self.last[node.index()] - base;
        let second = |g: usize| first + g;
        match (d.size, self.step[node.index()]) {
            (1, _) => format!("{prefix}{first}"),
            (2, Some(g)) => format!("{prefix}{first}, {prefix}{}", second(g)),
            (_, Some(1)) => format!("{prefix}{first}…{prefix}{last}"),
            (_, Some(g)) => format!("{prefix}{first}, {prefix}{}, …, {prefix}{last}", second(g)),
            (_, None) => format!("within {prefix}{first}…{prefix}{last}"),
        }
    }
}

/// The greatest common divisor, with `euclid(0, b) == b`.
fn euclid(a: usize, b: usize) -> usize {
    if b == 0 { a } else { euclid(b, a % b) }
}
