//! Drawing trees: Graphviz DOT, SVG (through the `dot` program), and the
//! text form with a summary.
//!
//! ```
//! use fprev::{render, SummationTree};
//!
//! let t: SummationTree = "((0+1)+2)".parse().unwrap();
//! let dot = render::dot(&t);
//! assert!(dot.starts_with("digraph fprev"));
//! assert!(dot.contains("x2"));
//! ```

use graphviz_rust::cmd::Format as DotFormat;
use graphviz_rust::dot_structures::{
    Attribute, Edge, EdgeTy, Graph, GraphAttributes, Id, Node, NodeId, Stmt, Vertex,
};
use graphviz_rust::printer::PrinterContext;

use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tree::SummationTree;

fn attr(k: &str, v: &str) -> Attribute {
    Attribute(Id::Plain(k.into()), Id::Escaped(format!("\"{v}\"")))
}

fn id(node: petgraph::graph::NodeIndex) -> NodeId {
    NodeId(Id::Plain(format!("n{}", node.index())), None)
}

/// The Graphviz graph of `tree`: summands `x0…` in boxes at the bottom,
/// additions `+` and fused nodes `Σk` above, arrows toward the root.
pub fn graph(tree: &SummationTree) -> Graph {
    let mut stmts = vec![
        Stmt::GAttribute(GraphAttributes::Graph(vec![
            attr("rankdir", "BT"),
            attr("ordering", "in"),
        ])),
        Stmt::GAttribute(GraphAttributes::Node(vec![attr("fontname", "Helvetica")])),
    ];
    for i in 0..tree.n() {
        stmts.push(Stmt::Node(Node::new(
            id(tree.leaf(i)),
            vec![attr("label", &format!("x{i}")), attr("shape", "box")],
        )));
    }
    for node in tree.post_order() {
        let k = tree.children(node).len();
        let (label, shape) = if k == 2 {
            ("+".to_string(), "circle")
        } else {
            (format!("Σ{k}"), "doublecircle")
        };
        stmts.push(Stmt::Node(Node::new(
            id(node),
            vec![attr("label", &label), attr("shape", shape)],
        )));
        for &c in tree.children(node) {
            stmts.push(Stmt::Edge(Edge {
                ty: EdgeTy::Pair(Vertex::N(id(c)), Vertex::N(id(node))),
                attributes: vec![],
            }));
        }
    }
    Graph::DiGraph {
        id: Id::Plain("fprev".into()),
        strict: false,
        stmts,
    }
}

/// The DOT source of `tree`.
pub fn dot(tree: &SummationTree) -> String {
    graphviz_rust::print(graph(tree), &mut PrinterContext::default())
}

/// `tree` drawn as SVG by the `dot` program (Graphviz).
pub fn svg(tree: &SummationTree) -> Result<Vec<u8>> {
    graphviz_rust::exec(
        graph(tree),
        &mut PrinterContext::default(),
        vec![DotFormat::Svg.into()],
    )
    .map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::Input(
                "SVG needs the `dot` program from Graphviz, which is not installed \
                 (apt-get install graphviz); --format dot writes the source instead"
                    .into(),
            )
        } else {
            Error::Input(format!("the dot program failed: {e}"))
        }
    })
}

/// The text form on the first line, then a summary line.
pub fn text(tree: &SummationTree) -> String {
    format!("{}\n# {}\n", tree.to_text(), Shape::of(tree))
}
