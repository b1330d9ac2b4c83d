//! Drawing trees: Graphviz DOT, SVG (through the `dot` program), and the
//! text form with a summary.
//!
//! ```
//! use fprev_present::render;
//! use fprev::SummationTree;
//!
//! let t: SummationTree = "((0+1)+2)".parse().unwrap();
//! let dot = render::dot(&t);
//! assert!(dot.starts_with("digraph fprev"));
//! assert!(dot.contains("x2"));
//! ```
//!
//! A tree of more than [`DRAW_WHOLE`] summands is drawn collapsed: its top
//! node by node ([`Outline`]), below that one box per subtree, and each
//! shape the boxes share ([`Shapes`]) drawn once at the side with how many
//! boxes have it. NumPy's sum of 16,384 summands is 128 boxes of one shape:
//!
//! ```
//! use fprev::formula::Formula;
//! use fprev_present::render;
//!
//! let numpy: Formula = "halves(128, 8, body(8, interleave(8, sequential, pairwise), then))"
//!     .parse()
//!     .unwrap();
//! let dot = render::dot(&numpy.tree(16384));
//! assert!(dot.len() < 200_000);
//! assert_eq!(dot.matches("shape A × 128\\n").count(), 1);
//! ```

mod caption;
mod dot;
mod legend;
mod outline;
mod shapes;
mod spans;
mod svg;
mod text;

use fprev::arith::Arithmetic;
use fprev::document::TreeDocument;
use fprev::error::Result;
use fprev::formula::known;
use fprev::shape::{MATCH_LIMIT, Shape};
use fprev::skeleton::Skeleton;
use fprev::tree::SummationTree;

pub use caption::Caption;
pub use outline::Outline;
pub use shapes::Shapes;

/// Trees of up to this many summands are drawn whole; larger ones
/// collapsed, so no drawing holds much more than a whole tree of this size.
pub const DRAW_WHOLE: usize = 256;

/// A tree to draw and what to say with it: what its nodes compute and
/// where it comes from.
///
/// ```
/// use fprev_present::render::{Caption, Drawing};
/// use fprev::Order;
///
/// let t = Order::Sequential.tree(3);
/// let plain = Drawing::new(&t).dot();
/// assert_eq!(plain, fprev_present::render::dot(&t));
/// let captioned = Drawing::new(&t)
///     .caption(Caption { black_box: Some("native:sequential".into()), ..Caption::default() })
///     .dot();
/// assert!(captioned.contains("label=\"native:sequential, n = 3\""));
/// ```
#[derive(Clone, Debug)]
pub struct Drawing<'a> {
    tree: &'a SummationTree,
    model: Option<&'a Arithmetic>,
    caption: Option<Caption>,
    skeleton: Option<&'a Skeleton>,
}

impl<'a> Drawing<'a> {
    /// `tree` alone, as [`dot()`] draws it.
    pub fn new(tree: &'a SummationTree) -> Self {
        Drawing {
            tree,
            model: None,
            caption: None,
            skeleton: None,
        }
    }

    /// `doc`'s tree with all the document knows: its arithmetic and a
    /// caption of its black box, dtype and formula.
    pub fn of(doc: &'a TreeDocument) -> Self {
        let mut drawing = Self::new(doc.tree())
            .arithmetic(doc.arithmetic.as_ref())
            .caption(Caption::of(doc));
        drawing.skeleton = doc.varies.as_ref().and_then(|v| v.skeleton.as_deref());
        drawing
    }

    /// With what each node computes, as [`dot_with()`] draws it.
    pub fn arithmetic(mut self, model: Option<&'a Arithmetic>) -> Self {
        self.model = model;
        self
    }

    /// With `caption` above the tree.
    pub fn caption(mut self, caption: Caption) -> Self {
        self.caption = Some(caption);
        self
    }

    /// The DOT source.
    pub fn dot(&self) -> String {
        dot::source(self.tree, self.model, self.caption.as_ref(), self.skeleton)
    }

    /// The SVG drawing, by the `dot` program (Graphviz), which must be on
    /// `PATH`.
    pub fn svg(&self) -> Result<Vec<u8>> {
        svg::run_dot(self.dot())
    }
}

/// The DOT source of `tree`: summands `x0…` in boxes at the bottom,
/// additions `+` and fused nodes `Σk` above, arrows toward the root. Every
/// label is a number or a fixed symbol, so nothing needs quoting beyond
/// the quotes themselves. Past [`DRAW_WHOLE`] summands, collapsed.
pub fn dot(tree: &SummationTree) -> String {
    Drawing::new(tree).dot()
}

/// [`dot()`] with what each node computes: the model's default in the
/// graph's label, and under the symbol of each node that differs, its own
/// (`+` over `f64`, `+` over `f32 toward-zero`).
///
/// ```
/// use fprev::arith::{Arithmetic, NodeArithmetic, NodeKey};
/// use fprev_present::render;
/// use fprev::{Format, SummationTree};
///
/// let t: SummationTree = "((0+1)+2)".parse().unwrap();
/// let mut model = Arithmetic::uniform(NodeArithmetic::ieee(Format::F32));
/// model.nodes.insert(NodeKey { first: 0, size: 3 }, NodeArithmetic::ieee(Format::F64));
/// let dot = render::dot_with(&t, Some(&model));
/// assert!(dot.contains("label=\"arithmetic: f32\""));
/// assert!(dot.contains("label=\"+\\nf64\""));
/// ```
pub fn dot_with(tree: &SummationTree, model: Option<&Arithmetic>) -> String {
    Drawing::new(tree).arithmetic(model).dot()
}

/// `tree` drawn as SVG by the `dot` program (Graphviz), which must be on
/// `PATH`.
pub fn svg(tree: &SummationTree) -> Result<Vec<u8>> {
    Drawing::new(tree).svg()
}

/// [`svg()`] with what each node computes, as [`dot_with()`] draws it.
pub fn svg_with(tree: &SummationTree, model: Option<&Arithmetic>) -> Result<Vec<u8>> {
    Drawing::new(tree).arithmetic(model).svg()
}

/// The text form on the first line, then a summary line, then for a tree
/// too large to draw whole, a few lines on its outline. Where no reference
/// order gives the tree, the summary names the formula found for a real
/// library that does ([`fprev::formula::known`]), up to
/// [`MATCH_LIMIT`] summands.
///
/// ```
/// use fprev_present::render;
/// use fprev::Order;
/// use fprev::formula::Formula;
///
/// let small = render::text(&Order::Pairwise.tree(4));
/// assert_eq!(small.lines().count(), 2);
/// let numpy: Formula = "halves(128, 8, body(8, interleave(8, sequential, pairwise), then))"
///     .parse()
///     .unwrap();
/// let summary = render::text(&numpy.tree(1000)).lines().nth(1).unwrap().to_string();
/// assert!(summary.starts_with("# formula native:halves(128, "), "{summary}");
/// assert!(summary.contains("found for numpy:sum"), "{summary}");
/// let blocks = Order::Blocked(128).tree(8192);
/// let large = render::text(&blocks);
/// let lines: Vec<&str> = large.lines().collect();
/// assert_eq!(lines[0], blocks.to_text());
/// assert!(lines[2].starts_with("# outline: too large to draw whole"), "{}", lines[2]);
/// assert!(lines[3].starts_with("# shape A × 64: 128 summands each"), "{}", lines[3]);
/// ```
pub fn text(tree: &SummationTree) -> String {
    let shape = Shape::of(tree);
    let known = (shape.order.is_none() && (3..=MATCH_LIMIT).contains(&tree.n()))
        .then(|| known::matching(tree))
        .flatten();
    let formula = known.map_or(String::new(), |k| {
        format!(
            "formula native:{} (as fprev explain found for {}); ",
            k.formula, k.found_for
        )
    });
    format!(
        "{}\n# {formula}{shape}\n{}",
        tree.to_text(),
        text::outline(tree)
    )
}

/// The text form of a varying black box's skeleton: its nodes of more
/// than two children are joins whose order varies, not fused nodes.
///
/// ```
/// use fprev_present::render;
///
/// let skeleton = "(((0+1)+2)+((3+4)+5)+((6+7)+8))".parse().unwrap();
/// let text = render::skeleton_text(&skeleton);
/// assert_eq!(text.lines().nth(1), Some("# skeleton: depth 3; widest varying join 3 parts"));
/// ```
pub fn skeleton_text(tree: &SummationTree) -> String {
    format!(
        "{}\n# skeleton: depth {}; widest varying join {} parts\n{}",
        tree.to_text(),
        tree.depth(),
        tree.widest(),
        text::outline(tree)
    )
}
