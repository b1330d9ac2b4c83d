//! FPRev's BuildSubtree level by level: the subproblems one level of the
//! recursion opens are independent, so all their queries travel together,
//! as many per call as the black box takes (the rows of a GEMV or GEMM, a
//! Python batch). A reveal then costs about one call per level instead of
//! one per subproblem.
//!
//! As in the paper, every summand carries a unit, so an answer is the size
//! of the whole LCA, `l_{i,j} = |LCA(i, j)|`: answers do not depend on which
//! subproblem asked, and one input base serves every query. That needs `n`
//! below `2^p` of the accumulator (every count exact); narrower
//! accumulators go through [`super::fprev`], which keeps few units live.
//!
//! A subproblem `S` is a complete subtree or some children of a fused node.
//! In the second case the pivot meets the rest of the fused node's leaves at
//! that node, outside `S`: their `l` exceeds `|S|` and equals the `l` its
//! group had in the caller. Those leaves are built as one more subproblem
//! and handed back as further children of the fused node.

use std::collections::BTreeMap;

use super::Pivot;
use super::fprev::{Built, Pivots, check_group, inconsistent};
use super::oracle::Oracle;
use super::progress::Progress;
use crate::error::Result;
use crate::tree::{SummationTree, TreeBuilder};

/// A subproblem waiting for its level.
struct Sub {
    leaves: Vec<usize>,
    /// The frame and group it builds.
    parent: Option<(usize, usize)>,
    /// The `l` of its group in the caller, which answers reaching outside
    /// the subproblem must equal.
    outer: Option<usize>,
    /// How many pivots in a row, up to this subproblem, hung at the top of
    /// theirs (see [`Pivot::Ends`]).
    misses: u8,
}

/// A subproblem whose answers are in: its pivot and groups, ascending by `l`.
struct Frame {
    pivot: usize,
    size: usize,
    parent: Option<(usize, usize)>,
    groups: Vec<Group>,
}

struct Group {
    l: usize,
    size: usize,
    built: Option<Built>,
}

/// Reveals the tree of the oracle's black box; `n` must be below the
/// accumulator's exact count.
pub(super) fn build(
    oracle: &mut Oracle,
    pivot: Pivot,
    progress: &mut Progress,
) -> Result<SummationTree> {
    let n = oracle.n();
    let mut builder = TreeBuilder::new(n);
    let mut pivots = Pivots::new(pivot);
    let mut frames: Vec<Frame> = Vec::new();
    let mut level = vec![Sub {
        leaves: (0..n).collect(),
        parent: None,
        outer: None,
        misses: 0,
    }];
    while !level.is_empty() {
        let mut pairs = Vec::new();
        let mut pivots_of = Vec::with_capacity(level.len());
        for sub in &mut level {
            let p = sub
                .leaves
                .swap_remove(pivots.choose(&sub.leaves, sub.misses));
            progress.place(p, oracle);
            pairs.extend(sub.leaves.iter().map(|&j| (p, j)));
            pivots_of.push(p);
        }
        let answers = oracle.lca_sizes_all(&pairs)?;
        tracing::debug!(subproblems = level.len(), queries = pairs.len(), "level");
        let mut answers = answers.into_iter();
        let mut next = Vec::new();
        for (sub, p) in level.into_iter().zip(pivots_of) {
            let size = sub.leaves.len() + 1;
            let mut by_l: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
            for (&j, l) in sub.leaves.iter().zip(answers.by_ref()) {
                by_l.entry(l).or_default().push(j);
            }
            if let Some((&l, _)) = by_l.range(size + 1..).find(|(l, _)| Some(**l) != sub.outer) {
                return Err(inconsistent(&format!(
                    "summand {p} meets others at l = {l}, outside its subproblem of {size} \
                     summands{}",
                    match sub.outer {
                        Some(o) => format!(" where only l = {o} fits"),
                        None => String::new(),
                    }
                )));
            }
            let id = frames.len();
            let hung_at_top = by_l.len() == 1 && size > 2;
            let mut groups = Vec::with_capacity(by_l.len());
            for (l, g) in by_l {
                let group_size = g.len();
                let built = if let [leaf] = g[..] {
                    progress.place(leaf, oracle);
                    Some(Built::Complete(builder.leaf(leaf)))
                } else {
                    next.push(Sub {
                        parent: Some((id, groups.len())),
                        outer: Some(l),
                        leaves: g,
                        misses: if hung_at_top {
                            sub.misses.saturating_add(1)
                        } else {
                            0
                        },
                    });
                    None
                };
                groups.push(Group {
                    l,
                    size: group_size,
                    built,
                });
            }
            frames.push(Frame {
                pivot: p,
                size,
                parent: sub.parent,
                groups,
            });
        }
        level = next;
    }
    // Every frame's subproblems came after it: assemble from the last.
    let mut root = None;
    while let Some(frame) = frames.pop() {
        let parent = frame.parent;
        let built = assemble(&mut builder, frame)?;
        match parent {
            Some((f, g)) => frames[f].groups[g].built = Some(built),
            None => root = Some(built),
        }
    }
    match root {
        Some(Built::Complete(root)) => Ok(builder.finish(root)?),
        _ => Err(inconsistent("the whole input does not form one tree")),
    }
}

/// Grows the pivot's subtree group by group, checking each group's `l`.
fn assemble(builder: &mut TreeBuilder, frame: Frame) -> Result<Built> {
    let mut cur = builder.leaf(frame.pivot);
    let mut cur_size = 1;
    for group in frame.groups {
        let built = group.built.expect("groups are built before their frame");
        let mut children = vec![cur];
        children.extend(built.nodes());
        if group.l > frame.size {
            // The rest of a fused node that also holds the caller's subtree.
            return Ok(Built::Partial(children));
        }
        check_group(frame.pivot, cur_size, group.size, group.l)?;
        cur = builder.sum(&children);
        cur_size += group.size;
    }
    Ok(Built::Complete(cur))
}
