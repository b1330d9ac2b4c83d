//! Proving a predicted binary tree with masked inputs, one check a node
//! (docs/ALGORITHMS.md, Proven predictions).
//!
//! The check of node `v` (children `L` and `R`, sibling `s`, parent `w`)
//! puts a mask pair at a leaf of `L` and a leaf of `R`, and a unit on
//! every other leaf of `w`: it passes when exactly the units of `s`
//! survive, that is when the pair meets (`LCA`) above every other leaf of
//! `v` and below every leaf of `s`. The root's check (no sibling) passes
//! when no unit survives. If every check passes, every node of the
//! prediction is a node of the black box's tree:
//!
//! Take a smallest node `v` of the prediction that is not, so its children
//! are. The pair meets at `N ⊇ v` (the black box's lowest node holding both
//! children), and `N ∩ s = ∅` (its check), so `N ≠ v` puts some leaf `y`
//! outside `v` and `s` in `N`. Up the prediction from `v` (parents `w_1,
//! w_2, …`), the pair of `w_k` has one leaf in `w_{k-1}`, inside the meeting
//! node `N_{k-1}` of the level below, and one in `w_{k-1}`'s sibling,
//! outside it (`w_{k-1}`'s check), so it meets at `N_k ⊋ N_{k-1} ∋ y`. The
//! siblings along the path cover every leaf outside `v`, so `y` lies in the
//! sibling of some `w_k`, inside `N_k`: that check fails.
//!
//! A binary prediction has `n - 1` nodes, a tree of `n` summands at most
//! `n - 1`, and a tree is its set of nodes: every check passing, the black
//! box's tree is the prediction.
//!
//! The argument needs only the units of `s` to survive; the units that
//! must be lost are there for black boxes that are no summation tree. One
//! that loses no unit (an exact sum, a compensated one)
//! keeps every unit of every check, so checks of surviving units alone
//! pass whatever the prediction; the root's check, and that of every node
//! of three leaves or more, fail it.
//!
//! Checks share an input when their parents are not nested (neither
//! under the other): then no check's units lie under another's pair in the
//! prediction, the units each keeps are its sibling's, and one count off
//! fails the input. The nodes whose parents are at one depth never nest,
//! so they share inputs, as many as the masks allow.

use petgraph::graph::NodeIndex;

use crate::error::Result;
use crate::reveal::oracle::{Edits, Masks, Oracle};
use crate::tree::SummationTree;

/// One check: the mask pair's leaves, the node whose other leaves hold
/// units (the parent, or the root for the root's own check), and the
/// units placed and those that must survive (the sibling's).
struct Check {
    pair: [usize; 2],
    parent: NodeIndex,
    units: u64,
    survive: u64,
}

/// Checks every node of `predicted` (binary, of the oracle's `n`), as many
/// a call as the masks and the black box's rows allow: whether every check
/// passed (the black box's tree is the prediction), or one failed (the
/// prediction is wrong somewhere).
pub(super) fn prove(oracle: &mut Oracle, predicted: &SummationTree) -> Result<bool> {
    Ok(prove_within(oracle, predicted, usize::MAX)? == Some(true))
}

/// [`prove`] where its checks take at most `most` inputs; `None`, having
/// asked nothing, where they take more.
pub(super) fn prove_within(
    oracle: &mut Oracle,
    predicted: &SummationTree,
    most: usize,
) -> Result<Option<bool>> {
    let masks = oracle.masks().clone();
    let groups = groups(predicted);
    let inputs = pack(&groups, &masks);
    if inputs.len() > most {
        return Ok(None);
    }
    let leaves = Leaves::of(predicted);
    let mut current = vec![0.0; oracle.n()];
    let mut edits = Edits::default();
    let mut set: Vec<usize> = Vec::new();
    for (c, call) in inputs.chunks(oracle.rows().max(1)).enumerate() {
        for (input, _) in call {
            write(&leaves, &mut edits, &mut set, input, &masks);
        }
        // The first call starts from zeros, whatever was asked before.
        let out = oracle.sum_inputs(&current, &edits, c > 0)?;
        let passed = out
            .iter()
            .zip(call)
            .all(|(&o, (_, units))| o == *units as f64 * masks.u);
        if !passed {
            return Ok(Some(false));
        }
        edits.apply_ended(&mut current);
        edits.clear();
    }
    oracle.counters.queries += groups.iter().map(|g| g.len() as u64).sum::<u64>();
    Ok(Some(true))
}

/// The checks of `groups` packed into inputs, each with the units that
/// must survive its checks.
fn pack<'c>(groups: &'c [Vec<Check>], masks: &Masks) -> Vec<(Vec<&'c Check>, u64)> {
    let mut inputs: Vec<(Vec<&Check>, u64)> = Vec::new();
    for group in groups {
        let mut input: Vec<&Check> = Vec::new();
        let mut units = 0u64;
        let mut survive = 0u64;
        for check in group {
            let full = input.len() == masks.max_pairs()
                || units + check.units >= masks.capacity(input.len() + 1);
            if !input.is_empty() && full {
                inputs.push((std::mem::take(&mut input), survive));
                units = 0;
                survive = 0;
            }
            units += check.units;
            survive += check.survive;
            input.push(check);
        }
        if !input.is_empty() {
            inputs.push((input, survive));
        }
    }
    inputs
}

/// The leaves of a tree in depth-first order, so that each node's are one
/// slice of them: a check's units are read off, not gathered and sorted
/// (a proof writes about `n log2 n` of them).
struct Leaves {
    order: Vec<usize>,
    /// Where each node's leaves start in `order`, and how many there are.
    at: Vec<(usize, usize)>,
}

impl Leaves {
    fn of(tree: &SummationTree) -> Self {
        let mut order = Vec::with_capacity(tree.n());
        let mut at = vec![(0, 0); tree.graph().node_count()];
        let mut stack = vec![tree.root()];
        while let Some(v) = stack.pop() {
            let node = tree.node(v);
            at[v.index()] = (order.len(), node.size);
            match node.leaf {
                Some(i) => order.push(i),
                None => stack.extend(tree.children(v).iter().rev()),
            }
        }
        Leaves { order, at }
    }

    /// The leaves under `v`.
    fn under(&self, v: NodeIndex) -> &[usize] {
        let (start, len) = self.at[v.index()];
        &self.order[start..start + len]
    }
}

/// Writes one input holding `input`'s checks as edits of the one before
/// (whose nonzero summands `set` lists).
fn write(
    leaves: &Leaves,
    edits: &mut Edits,
    set: &mut Vec<usize>,
    input: &[&Check],
    masks: &Masks,
) {
    for &at in set.iter() {
        edits.set(at, 0.0);
    }
    set.clear();
    for (k, check) in input.iter().enumerate() {
        let m = masks.mask(k);
        let units = leaves.under(check.parent);
        for &at in units.iter().filter(|at| !check.pair.contains(at)) {
            edits.set(at, masks.u);
        }
        edits.set(check.pair[0], m);
        edits.set(check.pair[1], -m);
        set.extend(units);
    }
    edits.end_input();
}

/// The checks of `tree`'s nodes in groups whose checks may share inputs:
/// the root's alone, then by the depth of their parent, then by which
/// child of it they are.
fn groups(tree: &SummationTree) -> Vec<Vec<Check>> {
    let root = tree.root();
    let check = |v: NodeIndex, parent: NodeIndex, survive: usize| {
        let pair = [0, 1].map(|k| tree.node(tree.children(v)[k]).min_leaf);
        Check {
            pair,
            parent,
            units: tree.node(parent).size as u64 - 2,
            survive: survive as u64,
        }
    };
    let mut groups: Vec<Vec<Check>> = Vec::new();
    if tree.children(root).is_empty() {
        return groups;
    }
    groups.push(vec![check(root, root, 0)]);
    let mut depth = vec![0usize; tree.graph().node_count()];
    let mut order = tree.post_order();
    order.reverse();
    for &w in &order {
        let children = tree.children(w);
        for (side, &v) in children.iter().enumerate() {
            depth[v.index()] = depth[w.index()] + 1;
            if tree.children(v).is_empty() {
                continue;
            }
            let sibling = tree.node(children[1 - side]).size;
            let slot = 1 + 2 * depth[w.index()] + side;
            if groups.len() <= slot {
                groups.resize_with(slot + 1, Vec::new);
            }
            groups[slot].push(check(v, w, sibling));
        }
    }
    groups
}
