//! What a reveal of a tree with fused nodes cost against the fewest inputs
//! any reveal with masked inputs needs for them
//! ([`fused_pair_bound`], docs/ALGORITHMS.md, Fused nodes).

use fprev::SummationTree;
use fprev::reveal::fused_pair_bound;

/// A reveal within this factor of the bound sits at it.
const AT_BOUND: f64 = 1.1;

/// One line on the masked inputs a reveal of `tree` took (`inputs`)
/// against its fused nodes' bound; `None` for a tree without fused nodes
/// or a reveal that kept no count of its inputs.
///
/// ```
/// use fprev::Order;
///
/// let chain = Order::Fused(17).tree(1_024);
/// let line = fprev_present::bound::fused(&chain, 8_693).unwrap();
/// assert!(line.starts_with("fused nodes: at their bound"), "{line}");
/// assert!(fprev_present::bound::fused(&chain, 20_000).unwrap().contains("2.3x"));
/// assert_eq!(fprev_present::bound::fused(&Order::Pairwise.tree(64), 70), None);
/// ```
pub fn fused(tree: &SummationTree, inputs: u64) -> Option<String> {
    let bound = fused_pair_bound(tree);
    if bound == 0 || inputs == 0 {
        return None;
    }
    Some(if inputs as f64 <= AT_BOUND * bound as f64 {
        format!(
            "fused nodes: at their bound, {inputs} masked inputs where any reveal with \
             masked inputs needs at least {bound} (docs/ALGORITHMS.md, Fused nodes)"
        )
    } else {
        format!(
            "fused nodes: any reveal with masked inputs needs at least {bound} inputs for \
             them (docs/ALGORITHMS.md, Fused nodes); this one took {inputs}, {:.1}x that",
            inputs as f64 / bound as f64
        )
    })
}
