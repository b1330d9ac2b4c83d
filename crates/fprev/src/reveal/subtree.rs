//! FPRev's BuildSubtree, the pieces both schedulers share (paper: Xie et
//! al., FPRev, Algorithms 3 to 5; docs/ALGORITHMS.md, FPRev and Fused nodes).
//!
//! For summands `i != j`, the masked input holds `+M` at `i`, `-M` at `j`
//! and a unit on every other live leaf, so the black box returns the units
//! outside the lowest common ancestor of `i` and `j`; that gives `l_{i,j}`,
//! the live leaves under it (docs/ALGORITHMS.md, Masked inputs).
//!
//! `build_subtree(I)` picks a pivot `i` in `I` ([`Pivots`]) and measures
//! `l_{i,j}` for every other `j` in `I`. The nodes on the path from `i`
//! upwards have distinct sizes, so the `l` values name them: the leaves
//! sharing one `l` ([`Levels`]) hang off the path at one node, and each such
//! group is a subproblem of its own, `build_subtree(group)`. Taken in
//! ascending `l`, the groups grow the pivot's subtree `cur` ([`Cur`]): each
//! group joins `cur` as its sibling under a new binary node, whose size `l`
//! must then be (`check_group`). A multiway (fused) node shows as one `l`
//! for all its other children's leaves: their group's subproblem hands back
//! those children ([`Built::Partial`]), and they join `cur` under one node.
//!
//! A subproblem has units on its own leaves and on one context leaf, a leaf
//! of its caller's `cur` (the caller's pivot). A pair that meets above the
//! subproblem, at the caller's node, then answers `l` = every live leaf: the
//! subproblem is not a whole subtree but the remaining children of a fused
//! node that also holds the caller's `cur`. The caller takes those as
//! further children of that node rather than joining a sibling.
//!
//! The schedulers differ only in when queries are asked: [`super::stack`]
//! one subproblem at a time, depth first, one query per input (narrow
//! accumulators); [`super::packed`] every known subproblem at once, packed
//! into fields of shared inputs.

use std::collections::BTreeMap;

use petgraph::graph::NodeIndex;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::Pivot;
use crate::error::fault::{Fault, Inconsistency};
use crate::error::{Error, Result};
use crate::tree::TreeBuilder;

/// What a subproblem built.
pub(super) enum Built {
    /// Its leaves form one complete subtree.
    Complete(NodeIndex),
    /// Its leaves are some children of a fused node that also holds the
    /// caller's `cur`: these are those children.
    Partial(Vec<NodeIndex>),
}

impl Built {
    /// The children `cur` gets beside it when this joins it.
    pub(super) fn nodes(self) -> Vec<NodeIndex> {
        match self {
            Built::Complete(root) => vec![root],
            Built::Partial(rest) => rest,
        }
    }
}

/// The pivot rule with its random state.
pub(super) struct Pivots {
    rule: Pivot,
    rng: Option<ChaCha8Rng>,
}

impl Pivots {
    pub(super) fn new(rule: Pivot) -> Self {
        Pivots {
            rule,
            rng: rule.rng(),
        }
    }

    /// The position in `leaves` of the next pivot; `misses` counts the
    /// pivots before it that hung at the top of their subproblem (see
    /// [`Pivot::Ends`]).
    pub(super) fn choose(&mut self, leaves: &[usize], misses: u8) -> usize {
        let end = |max: bool| {
            let mut at = 0;
            for (k, &x) in leaves.iter().enumerate() {
                if (x > leaves[at]) == max && x != leaves[at] {
                    at = k;
                }
            }
            at
        };
        match (self.rule, &mut self.rng, misses) {
            (Pivot::Random { .. }, Some(rng), _) | (Pivot::Ends, Some(rng), 2..) => {
                rng.random_range(0..leaves.len())
            }
            (Pivot::Ends, _, 1) => end(true),
            _ => end(false),
        }
    }
}

/// A pivot's partners grouped by `l = l_{pivot,j}`, ascending: the leaves
/// of one level hang off the pivot's path at the node of `l` leaves.
#[derive(Default)]
pub(super) struct Levels(BTreeMap<usize, Vec<usize>>);

impl Levels {
    /// Groups the exact answers of `build_subtree`, one per partner in
    /// `others`; the partners whose answer was too large to be exact
    /// (`None`) come back apart, in order.
    pub(super) fn of(others: &[usize], answers: &[Option<usize>]) -> (Levels, Vec<usize>) {
        let mut levels = Levels::default();
        let mut inexact = Vec::new();
        for (&j, a) in others.iter().zip(answers) {
            match a {
                Some(l) => levels.add(j, *l),
                None => inexact.push(j),
            }
        }
        (levels, inexact)
    }

    /// Puts partner `j` at level `l`.
    pub(super) fn add(&mut self, j: usize, l: usize) {
        self.0.entry(l).or_default().push(j);
    }

    /// Puts the partners `js` at level `l`.
    pub(super) fn extend(&mut self, l: usize, js: Vec<usize>) {
        self.0.entry(l).or_default().extend(js);
    }

    /// How many levels (groups) there are.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the only level is `l`.
    pub(super) fn only(&self, l: usize) -> bool {
        self.0.len() == 1 && self.0.contains_key(&l)
    }

    /// The partners at `level` (which must have some).
    pub(super) fn members(&self, level: usize) -> &[usize] {
        &self.0[&level]
    }

    /// The level below `level` (1: the pivot alone).
    pub(super) fn lower(&self, level: usize) -> usize {
        self.0.range(..level).next_back().map_or(1, |(&k, _)| k)
    }

    /// The level above `l`, if any.
    pub(super) fn above(&self, l: usize) -> Option<usize> {
        self.0.range(l + 1..).next().map(|(&up, _)| up)
    }

    /// The groups, lowest first.
    pub(super) fn groups(&self) -> impl Iterator<Item = &[usize]> {
        self.0.values().map(Vec::as_slice)
    }

    /// Takes the group at `l` out.
    pub(super) fn remove(&mut self, l: usize) -> Option<Vec<usize>> {
        self.0.remove(&l)
    }

    /// The groups with their levels, lowest first.
    pub(super) fn into_groups(self) -> impl Iterator<Item = (usize, Vec<usize>)> {
        self.0.into_iter()
    }
}

/// The error for answers that contradict each other.
pub(super) fn inconsistent(what: Inconsistency) -> Error {
    Error::BlackBox(Fault::Inconsistent(what))
}

/// Checks that a group of `k` leaves at `l` joins a subtree of `cur_size`
/// leaves grown from `pivot`: their LCA must hold exactly both.
pub(super) fn check_group(pivot: usize, cur_size: usize, k: usize, l: usize) -> Result<()> {
    if l == cur_size + k {
        return Ok(());
    }
    Err(inconsistent(Inconsistency::Group {
        summand: pivot,
        group: k,
        l,
        built: cur_size,
    }))
}

/// `cur`: the subtree grown from a pivot, group by group.
pub(super) struct Cur {
    pivot: usize,
    node: NodeIndex,
    size: usize,
}

impl Cur {
    /// The pivot alone.
    pub(super) fn new(builder: &TreeBuilder, pivot: usize) -> Self {
        Cur {
            pivot,
            node: builder.leaf(pivot),
            size: 1,
        }
    }

    /// Starts again from `node`, a complete subtree of `size` leaves that
    /// holds the pivot (built as a subproblem of its own).
    pub(super) fn restart(&mut self, node: NodeIndex, size: usize) {
        self.node = node;
        self.size = size;
    }

    /// Joins the group of `k` leaves at `l`, built as `built`, under a new
    /// node: a binary one, or a fused one with the group's children.
    pub(super) fn join(
        &mut self,
        builder: &mut TreeBuilder,
        k: usize,
        l: usize,
        built: Built,
    ) -> Result<()> {
        check_group(self.pivot, self.size, k, l)?;
        let children = self.with(built);
        self.node = builder.sum(&children);
        self.size += k;
        Ok(())
    }

    /// The children of the fused node that holds `cur` and its caller's:
    /// `cur` and those of the context group, built as `built`.
    pub(super) fn fuse(&self, built: Built) -> Built {
        Built::Partial(self.with(built))
    }

    /// The subproblem's result once every group has joined: `size` leaves.
    pub(super) fn finish(self, size: usize) -> Result<Built> {
        if self.size != size {
            return Err(inconsistent(Inconsistency::Placed {
                summand: self.pivot,
                placed: self.size,
                size,
            }));
        }
        Ok(Built::Complete(self.node))
    }

    fn with(&self, built: Built) -> Vec<NodeIndex> {
        let mut children = vec![self.node];
        children.extend(built.nodes());
        children
    }
}

/// Grows the pivot's subtree of a subproblem of `size` leaves from its
/// groups (level `l`, leaves, built), ascending: one above `size` is the
/// context group, the rest of a fused node above.
pub(super) fn grow(
    builder: &mut TreeBuilder,
    pivot: usize,
    size: usize,
    groups: impl IntoIterator<Item = (usize, usize, Built)>,
) -> Result<Built> {
    let mut cur = Cur::new(builder, pivot);
    for (l, k, built) in groups {
        if l > size {
            return Ok(cur.fuse(built));
        }
        cur.join(builder, k, l, built)?;
    }
    cur.finish(size)
}
