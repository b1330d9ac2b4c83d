//! Equality modulo child order, and where two trees part.
//!
//! Two trees are equal exactly when they have the same inner nodes, an inner
//! node being identified by its leaf set and its width (a fused node and its
//! binary split cover the same leaves). Leaf sets are compared through sums
//! of per-leaf 64-bit keys, so the whole comparison is linear in `n`.

use petgraph::graph::NodeIndex;

use super::SummationTree;

/// Where two trees part: in each tree, the smallest subtree the other lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Difference {
    /// Smallest subtree of the left tree that the right tree does not have.
    pub left: Option<NodeIndex>,
    /// Smallest subtree of the right tree that the left tree does not have.
    pub right: Option<NodeIndex>,
}

impl Difference {
    /// The two subtrees as text (`None` for a side whose every node the
    /// other tree has), `left` and `right` being the trees compared.
    pub fn texts(&self, left: &SummationTree, right: &SummationTree) -> [Option<String>; 2] {
        [
            self.left.map(|node| left.subtree_text(node)),
            self.right.map(|node| right.subtree_text(node)),
        ]
    }
}

/// Pseudo-random keys for the leaves, the same for every tree (splitmix64).
pub(super) fn leaf_keys(n: usize) -> Vec<u64> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
        .collect()
}

pub(super) fn diff(a: &SummationTree, b: &SummationTree) -> Option<Difference> {
    if a.n() != b.n() {
        return Some(Difference {
            left: Some(a.root()),
            right: Some(b.root()),
        });
    }
    let ca = a.clusters();
    let cb = b.clusters();
    let smallest =
        |mine: &std::collections::HashMap<super::Cluster, NodeIndex>,
         theirs: &std::collections::HashMap<super::Cluster, NodeIndex>| {
            mine.iter()
                .filter(|(k, _)| !theirs.contains_key(k))
                .min_by_key(|(k, _)| (k.size, k.min_leaf))
                .map(|(_, v)| *v)
        };
    let left = smallest(&ca, &cb);
    let right = smallest(&cb, &ca);
    (left.is_some() || right.is_some()).then_some(Difference { left, right })
}

#[cfg(test)]
mod tests {
    use super::super::SummationTree;

    fn t(s: &str) -> SummationTree {
        s.parse().unwrap()
    }

    #[test]
    fn equal_modulo_child_order() {
        assert_eq!(t("((3+2)+(0+1))"), t("((0+1)+(2+3))"));
        assert_eq!(t("(4+(0+2+1)+3)"), t("(3+(1+0+2)+4)"));
        assert_ne!(t("((0+1)+2)"), t("(0+(1+2))"));
        assert_ne!(t("(0+1)"), t("((0+1)+2)"));
    }

    #[test]
    fn names_the_smallest_parting_subtree_on_each_side() {
        let fused = t("(0+1+2)");
        let split = t("((0+1)+2)");
        let d = fused.diff(&split).unwrap();
        assert_eq!(fused.subtree_text(d.left.unwrap()), "(0+1+2)");
        assert_eq!(split.subtree_text(d.right.unwrap()), "(0+1)");
        let a = t("(((0+1)+(2+3))+((4+5)+(6+7)))");
        let b = t("(((0+1)+(2+3))+((4+6)+(5+7)))");
        let d = a.diff(&b).unwrap();
        assert_eq!(a.subtree_text(d.left.unwrap()), "(4+5)");
        assert_eq!(b.subtree_text(d.right.unwrap()), "(4+6)");
    }
}
