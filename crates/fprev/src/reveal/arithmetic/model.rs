//! The model the nodes' answers make: each asked node's arithmetic, the
//! runs between them, the root's, the ends of compensated chains; and
//! which of those ends drop their error rather than take it off.

use std::collections::BTreeMap;

use petgraph::graph::NodeIndex;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::arith::{Arithmetic, NodeArithmetic, NodeKey};
use crate::error::Result;
use crate::inputs::Inputs;
use crate::probe::Probe;
use crate::reduce::Replay;
use crate::tree::SummationTree;

use super::ArithOptions;

/// The model giving `nodes` what `per_node` says, the root `root` (its
/// first asked child's arithmetic when `None`), every other node (fused
/// ones) that too.
pub(super) fn model_of(
    tree: &SummationTree,
    nodes: &[NodeIndex],
    per_node: &[NodeArithmetic],
    fallback: NodeArithmetic,
    root: Option<NodeArithmetic>,
    root_window: Option<u32>,
) -> Arithmetic {
    if tree.n() < 2 {
        // No node adds anything: the model is the declared accumulator.
        return Arithmetic::uniform(root.unwrap_or(fallback));
    }
    // By node index: a sum of millions of summands has millions of nodes.
    let mut at: Vec<Option<NodeArithmetic>> = vec![None; tree.graph().node_count()];
    for (v, a) in nodes.iter().zip(per_node) {
        at[v.index()] = Some(*a);
    }
    let below = tree
        .children(tree.root())
        .iter()
        .find_map(|c| at[c.index()])
        .or(per_node.last().copied())
        .unwrap_or(fallback);
    let root_arithmetic = root.unwrap_or(NodeArithmetic {
        fused_bits: root_window,
        ..below
    });
    let asked = |node: NodeIndex| {
        if node == tree.root() {
            root_arithmetic
        } else {
            at[node.index()].unwrap_or(below)
        }
    };
    Arithmetic::from_nodes(tree, |node| {
        let a = asked(node);
        // The last step of a compensated chain answers as a plain addition
        // (its parent carries no error on): one that adds to a step of a
        // chain in its format (either child: a loop run right to left has
        // its running sum second) is taken as that chain's last.
        let ends_a_chain = !a.compensated
            && a.fused_bits.is_none()
            && tree.children(node).iter().any(|&c| {
                let inner = !tree.children(c).is_empty();
                let c = asked(c);
                inner && c.compensated && c.format == a.format && c.rounding == a.rounding
            });
        NodeArithmetic {
            compensated: a.compensated || ends_a_chain,
            ..a
        }
    })
}

/// The last steps of `model`'s compensated chains that drop their error
/// rather than take it off, and the calls spent finding them. Both answer
/// a query as a plain addition would, and random inputs seldom tell them
/// apart where a chain ends on a short rest; so for each chain, random
/// inputs under it alone (zero elsewhere: other chains add nothing and
/// carry no error) are replayed both ways until the two part, and the
/// black box is asked that input.
pub(super) fn dropping_ends(
    probe: &mut dyn Probe,
    tree: &SummationTree,
    keys: &[NodeKey],
    model: &Arithmetic,
    by_parts: Option<(&[Vec<usize>], &[NodeIndex])>,
    opts: &ArithOptions,
) -> Result<(Vec<NodeKey>, u64)> {
    /// Random inputs replayed both ways, at most, to find one they part on
    /// (a chain ending on a short rest parts on about one in a hundred),
    /// and the inputs asked, at most, when the answer is neither way.
    const DRAWS: usize = 2048;
    const ASKS: usize = 4;
    let is_end = model.chain_ends(tree, keys);
    let ends: Vec<NodeIndex> = tree
        .post_order()
        .into_iter()
        .filter(|v| is_end[v.index()])
        .collect();
    if ends.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let end_keys: Vec<NodeKey> = ends.iter().map(|v| keys[v.index()]).collect();
    let format = probe.format();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let (mut found, mut calls) = (Vec::new(), 0);
    let mut x = vec![0.0; tree.n()];
    let mut out = [0.0];
    // Of a formula's tree, the ends of one part are asked at its first and
    // last end; where those agree, every end of the part goes their way.
    let mut stand_for: Vec<(NodeIndex, NodeKey, Vec<NodeKey>)> = Vec::new();
    match by_parts {
        Some((groups, nodes)) => {
            let mut part_of = vec![usize::MAX; tree.graph().node_count()];
            for (g, members) in groups.iter().enumerate() {
                for &k in members {
                    part_of[nodes[k].index()] = g;
                }
            }
            let mut by_group: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
            for (e, v) in ends.iter().enumerate() {
                by_group.entry(part_of[v.index()]).or_default().push(e);
            }
            for members in by_group.into_values() {
                let (first, last) = (members[0], members[members.len() - 1]);
                let keys: Vec<NodeKey> = members.iter().map(|&e| end_keys[e]).collect();
                stand_for.push((ends[first], end_keys[first], keys.clone()));
                if last != first {
                    stand_for.push((ends[last], end_keys[last], keys));
                }
            }
        }
        None => stand_for.extend(ends.iter().zip(&end_keys).map(|(&v, &k)| (v, k, vec![k]))),
    }
    let mut verdicts: Vec<Option<bool>> = Vec::with_capacity(stand_for.len());
    for &(v, ..) in &stand_for {
        let under = tree.leaves_under(v);
        // With 0 elsewhere every node above the end adds it to 0, exactly:
        // the end's own subtree replays what the whole tree would.
        let (sub, sub_model) = subtree(tree, v, keys, model);
        // The end is the subtree's root: all its summands, renumbered from 0.
        let sub_end = NodeKey {
            first: 0,
            size: under.len(),
        };
        let keeps = Replay::with_arithmetic(&sub, &sub_model).returning(probe.result());
        let drops = Replay::with_arithmetic(&sub, &sub_model.dropping_error_at(&[sub_end]))
            .returning(probe.result());
        let mut asked = 0;
        let mut verdict = None;
        for draw in 0..DRAWS {
            let kind = Inputs::ALL[draw % Inputs::ALL.len()];
            let values = kind.draw(format, under.len(), &mut rng);
            for (&i, &value) in under.iter().zip(&values) {
                x[i] = value;
            }
            let (kept, dropped) = (keeps.sum(&values), drops.sum(&values));
            if kept.to_bits() == dropped.to_bits() {
                continue;
            }
            probe.sum(&x, &mut out)?;
            calls += 1;
            asked += 1;
            if out[0].to_bits() == dropped.to_bits() {
                verdict = Some(true);
            } else if out[0].to_bits() == kept.to_bits() {
                verdict = Some(false);
            }
            if verdict.is_some() || asked == ASKS {
                break;
            }
        }
        for &i in &under {
            x[i] = 0.0;
        }
        verdicts.push(verdict);
    }
    // An end stands for its part's ends only where the part's first and
    // last agree; where they do not, each stands for itself alone (the
    // others of the part keep their error, as the model has them).
    let mut k = 0;
    while k < stand_for.len() {
        let pair = k + 1 < stand_for.len() && stand_for[k + 1].2 == stand_for[k].2;
        let (first, second) = (
            verdicts[k],
            if pair { verdicts[k + 1] } else { verdicts[k] },
        );
        if first == second {
            if first == Some(true) {
                found.extend(&stand_for[k].2);
            }
        } else {
            for j in [k, k + 1] {
                if verdicts[j] == Some(true) {
                    found.push(stand_for[j].1);
                }
            }
        }
        k += if pair { 2 } else { 1 };
    }
    Ok((found, calls))
}

/// The subtree under `v` as a tree of its own (its summands renumbered in
/// order), and `model` on it.
fn subtree(
    tree: &SummationTree,
    v: NodeIndex,
    keys: &[NodeKey],
    model: &Arithmetic,
) -> (SummationTree, Arithmetic) {
    let leaves = tree.leaves_under(v);
    let mut builder = crate::tree::TreeBuilder::new(leaves.len());
    // Original node by the copy's index, for the model.
    let mut original: Vec<NodeIndex> = leaves.iter().map(|&i| tree.leaf(i)).collect();
    let mut copied = vec![None; tree.graph().node_count()];
    for (k, &i) in leaves.iter().enumerate() {
        copied[tree.leaf(i).index()] = Some(builder.leaf(k));
    }
    let mut stack = vec![(v, false)];
    while let Some((u, ready)) = stack.pop() {
        if copied[u.index()].is_some() {
            continue;
        }
        if ready {
            let children: Vec<NodeIndex> = tree
                .children(u)
                .iter()
                .map(|c| copied[c.index()].expect("children first"))
                .collect();
            let node = builder.sum(&children);
            original.push(u);
            copied[u.index()] = Some(node);
        } else {
            stack.push((u, true));
            stack.extend(tree.children(u).iter().map(|&c| (c, false)));
        }
    }
    let root = copied[v.index()].expect("copied");
    let sub = builder.finish(root).expect("a subtree covers its summands");
    let sub_model = Arithmetic {
        inputs: model.inputs,
        ..Arithmetic::from_nodes(&sub, |node| model.at(&keys[original[node.index()].index()]))
    };
    (sub, sub_model)
}
