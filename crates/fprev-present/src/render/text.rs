//! The text form's outline: for a tree too large to draw whole, a few `#`
//! lines that say what its collapsed drawing shows.

use fprev::tree::SummationTree;

use super::legend::Legend;
use super::outline::Outline;
use super::shapes::Shapes;
use super::spans::Spans;

/// The `#` lines of `tree`'s outline, empty when it is drawn whole.
pub(super) fn outline(tree: &SummationTree) -> String {
    let outline = Outline::of(tree);
    if outline.boxes().is_empty() {
        return String::new();
    }
    let shapes = Shapes::of(tree);
    let spans = Spans::of(tree);
    let legend = Legend::of(tree, &shapes, &outline);
    let singles = outline.ends().len() - outline.boxes().len();
    let mut s = format!(
        "# outline: too large to draw whole, drawn as {} sums above {} subtrees",
        outline.sums().len(),
        outline.boxes().len()
    );
    if singles > 0 {
        s += &format!(" and {singles} single summands");
    }
    s.push('\n');
    for e in legend.entries() {
        s += &format!(
            "# shape {} × {}: {} summands each, the first {}; {}\n",
            e.letter,
            e.count,
            tree.node(e.first).size,
            spans.label(tree, e.first, 0, "x"),
            e.summary
        );
    }
    if legend.unlettered > 0 {
        let other = if legend.entries().is_empty() {
            ""
        } else {
            "other "
        };
        s += &format!(
            "# {} {other}subtrees of {} shapes, each described in its box of the drawing\n",
            legend.unlettered, legend.unlettered_shapes
        );
    }
    s
}
