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

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::{Command, Stdio};

use crate::arith::{Arithmetic, NodeKey};
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tree::SummationTree;

/// The DOT source of `tree`: summands `x0…` in boxes at the bottom,
/// additions `+` and fused nodes `Σk` above, arrows toward the root. Every
/// label is a number or a fixed symbol, so nothing needs quoting beyond
/// the quotes themselves.
pub fn dot(tree: &SummationTree) -> String {
    dot_with(tree, None)
}

/// [`dot()`] with what each node computes: the model's default in the
/// graph's label, and under the symbol of each node that differs, its own
/// (`+` over `f64`, `+` over `f32 toward-zero`).
///
/// ```
/// use fprev::arith::{Arithmetic, NodeArithmetic, NodeKey};
/// use fprev::{render, Format, SummationTree};
///
/// let t: SummationTree = "((0+1)+2)".parse().unwrap();
/// let mut model = Arithmetic::uniform(NodeArithmetic::ieee(Format::F32));
/// model.nodes.insert(NodeKey { first: 0, size: 3 }, NodeArithmetic::ieee(Format::F64));
/// let dot = render::dot_with(&t, Some(&model));
/// assert!(dot.contains("label=\"arithmetic: f32\""));
/// assert!(dot.contains("label=\"+\\nf64\""));
/// ```
pub fn dot_with(tree: &SummationTree, model: Option<&Arithmetic>) -> String {
    let mut s = String::from(
        "digraph fprev {\n  graph[rankdir=\"BT\" ordering=\"in\"]\n  node[fontname=\"Helvetica\"]\n",
    );
    let keys = model.map(|_| NodeKey::all(tree));
    if let Some(m) = model {
        let mut title = m.default.to_string();
        if let Some(inputs) = m.inputs {
            title += &format!(", inputs rounded to {inputs}");
        }
        if let Some(p) = &m.products {
            title += &format!(", products {}", p.default);
        }
        let _ = writeln!(
            s,
            "  label=\"arithmetic: {title}\" labelloc=\"t\" fontname=\"Helvetica\""
        );
    }
    for i in 0..tree.n() {
        // A summand whose product is rounded otherwise than the rest says so.
        let own = model
            .and_then(|m| m.products.as_ref())
            .and_then(|p| p.leaves.get(&i))
            .map_or(String::new(), |p| format!("\\nproduct {p}"));
        let _ = writeln!(
            s,
            "  n{}[label=\"x{i}{own}\" shape=\"box\"]",
            tree.leaf(i).index()
        );
    }
    for node in tree.post_order() {
        let children = tree.children(node);
        let (mut label, shape) = match children.len() {
            2 => ("+".to_string(), "circle"),
            k => (format!("Σ{k}"), "doublecircle"),
        };
        if let (Some(m), Some(keys)) = (model, &keys) {
            let own = m.at(&keys[node.index()]);
            if own != m.default {
                label += &format!("\\n{own}");
            }
        }
        let _ = writeln!(
            s,
            "  n{}[label=\"{label}\" shape=\"{shape}\"]",
            node.index()
        );
        for c in children {
            let _ = writeln!(s, "  n{} -> n{}", c.index(), node.index());
        }
    }
    s.push('}');
    s
}

/// `tree` drawn as SVG by the `dot` program (Graphviz), which must be on
/// `PATH`.
pub fn svg(tree: &SummationTree) -> Result<Vec<u8>> {
    svg_with(tree, None)
}

/// [`svg()`] with what each node computes, as [`dot_with()`] draws it.
pub fn svg_with(tree: &SummationTree, model: Option<&Arithmetic>) -> Result<Vec<u8>> {
    let missing = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::Input(
                "SVG needs the `dot` program from Graphviz, which is not installed \
                 (apt-get install graphviz); --format dot writes the source instead"
                    .into(),
            )
        } else {
            Error::Input(format!("the dot program failed: {e}"))
        }
    };
    let mut child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(missing)?;
    let source = dot_with(tree, model);
    let mut stdin = child.stdin.take().expect("stdin is piped");
    // Write from a thread: dot may fill its output pipe before it has read
    // all of a large graph.
    let writer = std::thread::spawn(move || stdin.write_all(source.as_bytes()));
    let output = child.wait_with_output().map_err(missing)?;
    let written = writer.join().expect("the writer does not panic");
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        return Err(Error::Input(format!(
            "the dot program failed ({}): {}",
            output.status,
            said.trim()
        )));
    }
    written.map_err(missing)?;
    Ok(output.stdout)
}

/// The text form on the first line, then a summary line.
pub fn text(tree: &SummationTree) -> String {
    format!("{}\n# {}\n", tree.to_text(), Shape::of(tree))
}
