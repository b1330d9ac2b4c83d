//! The DOT source of a drawing: the outline's sums and ends, the caption
//! above, and for a collapsed tree one cluster per lettered shape.

use std::collections::HashMap;
use std::fmt::Write as _;

use petgraph::graph::NodeIndex;

use fprev::arith::{Arithmetic, NodeKey};
use fprev::shape::Shape;
use fprev::skeleton::Skeleton;
use fprev::tree::SummationTree;

use super::caption::Caption;
use super::legend::{self, Entry, Legend};
use super::outline::{Limits, Outline};
use super::shapes::Shapes;
use super::spans::Spans;

/// Shapes of this many summands or fewer are drawn whole in the legend.
const LEGEND_WHOLE: usize = 64;

/// Larger ones are drawn collapsed to a handful of boxes.
const LEGEND: Limits = Limits {
    ends: 8,
    smallest: 2,
    peels: 2,
};

/// The DOT source of `tree` as [`super::Drawing`] describes it.
pub(super) fn source(
    tree: &SummationTree,
    model: Option<&Arithmetic>,
    caption: Option<&Caption>,
    skeleton: Option<&Skeleton>,
) -> String {
    let outline = Outline::of(tree);
    let mut boxes = (!outline.boxes().is_empty()).then(|| Boxes::new(tree, &outline));
    let mut s = String::from(
        "digraph fprev {\n  graph[rankdir=\"BT\" ordering=\"in\"]\n  node[fontname=\"Helvetica\"]\n",
    );
    let mut lines = caption.map_or_else(Vec::new, |c| c.lines(tree.n()));
    lines.extend(model.map(|m| format!("arithmetic: {}", title(m))));
    if skeleton.is_some() {
        lines.push("the subtrees every call shares; dashed: a join whose order varies".into());
    }
    if let Some(b) = &boxes {
        // Many boxes side by side: keep them close and their labels small.
        s.push_str("  graph[nodesep=\"0.1\"]\n  node[fontsize=\"10\"]\n");
        let legend = match b.legend.entries().is_empty() {
            true => "",
            false => ", the shapes they share drawn once at the side",
        };
        lines.push(format!(
            "{} summands, too many to draw whole: each 3-D box is a subtree{legend}",
            tree.n()
        ));
    }
    if !lines.is_empty() {
        let label: Vec<String> = lines.iter().map(|l| escape(l)).collect();
        let _ = writeln!(
            s,
            "  label=\"{}\" labelloc=\"t\" fontname=\"Helvetica\"",
            label.join("\\n")
        );
    }
    let keys = model.map(|_| NodeKey::all(tree));
    let model = model.zip(keys.as_deref());
    for &end in outline.ends() {
        if let Some(i) = tree.node(end).leaf {
            // A summand whose product is rounded otherwise than the rest says so.
            let own = model
                .and_then(|(m, _)| m.products.as_ref())
                .and_then(|p| p.leaves.get(&i))
                .map_or(String::new(), |p| format!("\\nproduct {p}"));
            let _ = writeln!(s, "  n{}[label=\"x{i}{own}\" shape=\"box\"]", end.index());
            continue;
        }
        let b = boxes
            .as_mut()
            .expect("an outline with boxes has their labels");
        let label = b.label(end, 0, "x") + &model.map_or(String::new(), |m| differs(tree, end, m));
        let _ = writeln!(s, "  n{}[label=\"{label}\" shape=\"box3d\"]", end.index());
    }
    let varying = |node: NodeIndex| skeleton.is_some_and(|sk| sk.is_varying(node));
    for &node in outline.sums() {
        if varying(node) {
            let k = tree.children(node).len();
            let _ = writeln!(
                s,
                "  n{}[label=\"varies\\n{k} parts\" shape=\"octagon\" style=\"dashed\"]",
                node.index()
            );
            for c in tree.children(node) {
                let _ = writeln!(s, "  n{} -> n{}[style=\"dashed\"]", c.index(), node.index());
            }
            continue;
        }
        let mut label = sum_label(tree, node);
        if let Some((m, keys)) = model {
            let own = m.at(&keys[node.index()]);
            if own != m.default {
                label += &format!("\\n{own}");
            }
        }
        let _ = writeln!(
            s,
            "  n{}[label=\"{label}\" shape=\"{}\"]",
            node.index(),
            sum_shape(tree, node)
        );
        for c in tree.children(node) {
            let _ = writeln!(s, "  n{} -> n{}", c.index(), node.index());
        }
    }
    if let Some(b) = &mut boxes {
        for e in b.legend.entries().to_vec() {
            b.cluster(&mut s, &e);
        }
    }
    s.push('}');
    s
}

/// The model's default, and what inputs and products round to.
fn title(m: &Arithmetic) -> String {
    let mut title = m.default.to_string();
    if let Some(inputs) = m.inputs {
        title += &format!(", inputs rounded to {inputs}");
    }
    if let Some(p) = &m.products {
        title += &format!(", products {}", p.default);
    }
    title
}

/// `+` for an addition, `Σk` for a fused node of `k` terms.
fn sum_label(tree: &SummationTree, node: NodeIndex) -> String {
    match tree.children(node).len() {
        2 => "+".to_string(),
        k => format!("Σ{k}"),
    }
}

/// A circle for an addition, a double one for a fused node.
fn sum_shape(tree: &SummationTree, node: NodeIndex) -> &'static str {
    match tree.children(node).len() {
        2 => "circle",
        _ => "doublecircle",
    }
}

/// The lines a box adds when nodes inside it compute otherwise than the
/// default: the box hides them, so it counts them.
fn differs(tree: &SummationTree, top: NodeIndex, (m, keys): (&Arithmetic, &[NodeKey])) -> String {
    let inside = Outline::whole(tree, top);
    let sums = inside
        .sums()
        .iter()
        .filter(|s| m.at(&keys[s.index()]) != m.default)
        .count();
    let products = m.products.as_ref().map_or(0, |p| {
        inside
            .ends()
            .iter()
            .filter(|e| p.leaves.contains_key(&tree.node(**e).min_leaf))
            .count()
    });
    let mut out = String::new();
    if sums > 0 {
        out += &format!("\\nother arithmetic at {sums} of its sums");
    }
    if products > 0 {
        out += &format!("\\nproducts rounded otherwise at {products} of its summands");
    }
    out
}

/// `text` inside a quoted DOT string.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// What a collapsed drawing needs to label its boxes and draw its legend.
struct Boxes<'a> {
    tree: &'a SummationTree,
    shapes: Shapes,
    spans: Spans,
    legend: Legend,
    /// Unlettered shapes in words, each worked out once.
    words: HashMap<u32, String>,
}

impl<'a> Boxes<'a> {
    fn new(tree: &'a SummationTree, outline: &Outline) -> Self {
        let shapes = Shapes::of(tree);
        let legend = Legend::of(tree, &shapes, outline);
        Boxes {
            tree,
            spans: Spans::of(tree),
            shapes,
            legend,
            words: HashMap::new(),
        }
    }

    /// A box's label: its summands (numbered from `base`, written with
    /// `prefix`), and its shape's letter or, unlettered, how many and its
    /// shape in words.
    fn label(&mut self, node: NodeIndex, base: usize, prefix: &str) -> String {
        let id = self.shapes.id(node);
        let span = self.spans.label(self.tree, node, base, prefix);
        // A lettered box's size is in the legend; it stays narrow.
        if let Some(letter) = self.legend.letter(id) {
            return format!("{span}\\nshape {letter}");
        }
        let tree = self.tree;
        let words = self
            .words
            .entry(id)
            .or_insert_with(|| short(&legend::describe(tree, node)));
        format!("{span}\\n{} summands\\n{words}", tree.node(node).size)
    }

    /// The cluster that draws shape `e` once: its first box in full when
    /// small, else collapsed, summands numbered from the box's first.
    fn cluster(&mut self, s: &mut String, e: &Entry) {
        let tree = self.tree;
        let size = tree.node(e.first).size;
        let base = tree.node(e.first).min_leaf;
        let inside = if size <= LEGEND_WHOLE {
            Outline::whole(tree, e.first)
        } else {
            Outline::collapsed(tree, e.first, LEGEND)
        };
        let l = e.letter;
        let _ = writeln!(s, "  subgraph cluster_shape{l} {{");
        // Drawn bottom to top, a cluster's "b" is its top.
        let _ = writeln!(
            s,
            "    label=\"shape {l} × {}\\n{size} summands, counted from each box's first\\n{}\" \
             labelloc=\"b\" style=\"dashed\"",
            e.count,
            lines(&e.summary)
        );
        for &end in inside.ends() {
            match tree.node(end).leaf {
                Some(i) => {
                    let _ = writeln!(
                        s,
                        "    {l}{}[label=\"+{}\" shape=\"box\"]",
                        end.index(),
                        i - base
                    );
                }
                None => {
                    let label = self.label(end, base, "+");
                    let _ = writeln!(
                        s,
                        "    {l}{}[label=\"{label}\" shape=\"box3d\"]",
                        end.index()
                    );
                }
            }
        }
        for &node in inside.sums() {
            let _ = writeln!(
                s,
                "    {l}{}[label=\"{}\" shape=\"{}\"]",
                node.index(),
                sum_label(tree, node),
                sum_shape(tree, node)
            );
            for c in tree.children(node) {
                let _ = writeln!(s, "    {l}{} -> {l}{}", c.index(), node.index());
            }
        }
        s.push_str("  }\n");
    }
}

/// A shape in a box's few words: the reference order it is, its depth,
/// and its widest fused node if it has one.
fn short(shape: &Shape) -> String {
    let mut words: Vec<String> = shape.order.iter().map(|o| o.to_string()).collect();
    words.push(format!("depth {}", shape.depth));
    if shape.widest > 2 {
        words.push(format!("widest Σ{}", shape.widest));
    }
    words.join("\\n")
}

/// A shape's summary as label lines, one clause a line; "binary", the
/// common case, goes without saying.
fn lines(shape: &Shape) -> String {
    let summary = shape.to_string();
    let clauses: Vec<&str> = summary.split("; ").filter(|c| *c != "binary").collect();
    clauses.join("\\n")
}
