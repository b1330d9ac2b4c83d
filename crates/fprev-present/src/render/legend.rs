//! The legend of a collapsed drawing: the shapes its boxes share, each
//! lettered, counted and described once.

use std::collections::HashMap;

use petgraph::graph::NodeIndex;

use fprev::shape::Shape;
use fprev::tree::{SummationTree, TreeBuilder};

use super::outline::Outline;
use super::shapes::Shapes;

/// The most shapes lettered and drawn at the side; boxes of other shapes,
/// and of shapes no other box shares, say theirs in words.
const LETTERED: usize = 6;

/// A shape that boxes share.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// Its name in the drawing: `A` for the most common.
    pub(crate) letter: char,
    /// Its id in [`Shapes`].
    pub(crate) shape: u32,
    /// The first box of this shape, the one the legend draws.
    pub(crate) first: NodeIndex,
    /// How many boxes have it.
    pub(crate) count: usize,
    /// What it is, read off the subtree alone.
    pub(crate) summary: Shape,
}

/// The lettered shapes of an outline's boxes, most boxes first.
#[derive(Clone, Debug)]
pub(crate) struct Legend {
    entries: Vec<Entry>,
    /// Boxes whose shape is not lettered.
    pub(crate) unlettered: usize,
    /// How many shapes those have.
    pub(crate) unlettered_shapes: usize,
}

impl Legend {
    /// Letters the most common shapes that boxes of `outline` share (ties:
    /// the one met first in summand order).
    pub(crate) fn of(tree: &SummationTree, shapes: &Shapes, outline: &Outline) -> Self {
        let mut seen: Vec<(u32, NodeIndex, usize)> = Vec::new();
        let mut at: HashMap<u32, usize> = HashMap::new();
        for &b in outline.boxes() {
            let id = shapes.id(b);
            let k = *at.entry(id).or_insert_with(|| {
                seen.push((id, b, 0));
                seen.len() - 1
            });
            seen[k].2 += 1;
        }
        // A stable sort keeps the first met first among equal counts.
        seen.sort_by_key(|(_, _, count)| std::cmp::Reverse(*count));
        let shared = seen.iter().filter(|(_, _, count)| *count > 1).count();
        let rest = seen.split_off(shared.min(LETTERED));
        let entries = seen
            .into_iter()
            .zip('A'..)
            .map(|((shape, first, count), letter)| Entry {
                letter,
                shape,
                first,
                count,
                summary: describe(tree, first),
            })
            .collect();
        Legend {
            entries,
            unlettered: rest.iter().map(|(_, _, count)| count).sum(),
            unlettered_shapes: rest.len(),
        }
    }

    /// The lettered shapes, most boxes first.
    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The letter of `shape`, if it has one.
    pub(crate) fn letter(&self, shape: u32) -> Option<char> {
        self.entries
            .iter()
            .find(|e| e.shape == shape)
            .map(|e| e.letter)
    }
}

/// What the subtree under `node` is, taken as a tree of its own.
pub(crate) fn describe(tree: &SummationTree, node: NodeIndex) -> Shape {
    Shape::of(&detach(tree, node))
}

/// The subtree under `top` as a tree of its own, its summands renumbered
/// `0, 1, …` in their order.
fn detach(tree: &SummationTree, top: NodeIndex) -> SummationTree {
    let whole = Outline::whole(tree, top);
    let mut b = TreeBuilder::new(whole.ends().len());
    let mut built: HashMap<NodeIndex, NodeIndex> = whole
        .ends()
        .iter()
        .enumerate()
        .map(|(rank, leaf)| (*leaf, b.leaf(rank)))
        .collect();
    for &sum in whole.sums() {
        let children: Vec<NodeIndex> = tree.children(sum).iter().map(|c| built[c]).collect();
        built.insert(sum, b.sum(&children));
    }
    b.finish(built[&top])
        .expect("a subtree covers its own summands")
}
