//! Drawings of large trees: shape signatures, the collapsed outline, the
//! size of the DOT source and what the real `dot` program makes of it; and
//! small trees, which draw exactly as they always did.
//!
//! `cargo test -p fprev --test render -- --nocapture` prints the sizes and
//! times of the drawings.

use std::fmt::Write as _;
use std::time::Instant;

use fprev::arith::{Arithmetic, NodeArithmetic, NodeKey};
use fprev::document::{Inferred, TreeDocument};
use fprev::formula::Formula;
use fprev::{Format, Order, SummationTree};
use fprev_present::render::{self, Caption, Drawing, Outline, Shapes};

/// NumPy's pairwise sum without its small-`n` case: 128 blocks of 128
/// summands at n = 16,384, each 8 interleaved lanes.
fn numpy_like(n: usize) -> SummationTree {
    "halves(128, 8, body(8, interleave(8, sequential, pairwise), then))"
        .parse::<Formula>()
        .unwrap()
        .tree(n)
}

/// Whether Graphviz's `dot` is on the PATH.
fn have_dot() -> bool {
    std::process::Command::new("dot")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The SVG of `drawing` and how long `dot` took, printed for the record.
fn timed_svg(what: &str, drawing: &Drawing) -> Option<(Vec<u8>, f64)> {
    if !have_dot() {
        eprintln!("{what}: no dot program, SVG not drawn");
        return None;
    }
    let start = Instant::now();
    let svg = drawing.svg().unwrap();
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "{what}: DOT {} bytes, SVG {} bytes in {seconds:.2} s",
        drawing.dot().len(),
        svg.len()
    );
    assert!(String::from_utf8_lossy(&svg).contains("</svg>"));
    Some((svg, seconds))
}

#[test]
fn shifted_subtrees_share_a_shape() {
    let t = Order::Strided(8).tree(64);
    let shapes = Shapes::of(&t);
    let lanes: Vec<u32> = t
        .post_order()
        .into_iter()
        .filter(|n| t.node(*n).size == 8)
        .map(|n| shapes.id(n))
        .collect();
    assert_eq!(lanes.len(), 8);
    assert!(lanes.iter().all(|id| *id == lanes[0]), "{lanes:?}");
    // Leaf, 7 links of a lane, and the pairwise tree of 2, 4, 8 lanes.
    assert_eq!(shapes.count(), 1 + 7 + 3);
}

#[test]
fn different_subtrees_differ_in_shape() {
    // Pairwise over x0…x7, then sequential over x8…x15 and over x16…x23.
    let pairwise = "(((0+1)+(2+3))+((4+5)+(6+7)))";
    let seq =
        |from: usize| (from + 1..from + 8).fold(from.to_string(), |s, i| format!("({s}+{i})"));
    let t: SummationTree = format!("(({pairwise}+{})+{})", seq(8), seq(16))
        .parse()
        .unwrap();
    let shapes = Shapes::of(&t);
    let blocks: Vec<u32> = [0, 8, 16]
        .iter()
        .map(|first| {
            t.post_order()
                .into_iter()
                .find(|n| t.node(*n).size == 8 && t.node(*n).min_leaf == *first)
                .map(|n| shapes.id(n))
                .unwrap()
        })
        .collect();
    assert_ne!(blocks[0], blocks[1]);
    assert_eq!(blocks[1], blocks[2]);
    // A chain over every other summand is not a chain over neighbours.
    let t: SummationTree = "(((((0+2)+4)+6)+(((1+3)+5)+7))+((((8+9)+10)+11)+(((12+13)+14)+15)))"
        .parse()
        .unwrap();
    let shapes = Shapes::of(&t);
    let chain = |first: usize| {
        t.post_order()
            .into_iter()
            .find(|n| t.node(*n).size == 4 && t.node(*n).min_leaf == first)
            .map(|n| shapes.id(n))
            .unwrap()
    };
    assert_eq!(chain(0), chain(1));
    assert_eq!(chain(8), chain(12));
    assert_ne!(chain(0), chain(8));
}

#[test]
fn numpy_shaped_sum_of_16384_is_128_boxes_of_one_shape() {
    let t = numpy_like(16384);
    let start = Instant::now();
    let outline = Outline::of(&t);
    assert_eq!((outline.sums().len(), outline.boxes().len()), (127, 128));
    let dot = render::dot(&t);
    eprintln!(
        "numpy-shaped, n = 16384: outline and DOT in {:.3} s",
        start.elapsed().as_secs_f64()
    );
    assert!(dot.len() < 200_000, "{} bytes", dot.len());
    assert_eq!(dot.matches("× 128").count(), 1, "{dot}");
    assert_eq!(dot.matches("shape=\"box3d\"").count(), 128 + 8);
    assert!(dot.contains("x128…x255\\nshape A\""), "{dot}");
    assert!(dot.contains("8 interleaved lanes combined pairwise (native:strided:8)"));
    assert!(dot.contains("subgraph cluster_shapeA {"));
    // Within the legend, each lane is a box of every eighth summand.
    assert!(
        dot.contains("+1, +9, …, +121\\n16 summands\\nsequential\\ndepth 15\""),
        "{dot}"
    );
    if let Some((_, seconds)) = timed_svg("numpy-shaped, n = 16384", &Drawing::new(&t)) {
        assert!(seconds < 30.0, "dot took {seconds:.1} s");
    }
}

#[test]
fn numpy_shaped_text_keeps_the_tree_on_its_first_line() {
    let t = numpy_like(16384);
    let text = render::text(&t);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], t.to_text());
    assert!(lines[1].starts_with("# "));
    assert_eq!(
        lines[2],
        "# outline: too large to draw whole, drawn as 127 sums above 128 subtrees"
    );
    assert!(
        lines[3].starts_with(
            "# shape A × 128: 128 summands each, the first x0…x127; 8 interleaved lanes"
        ),
        "{}",
        lines[3]
    );
    assert_eq!(lines.len(), 4);
}

#[test]
fn a_random_tree_collapses_to_a_bounded_drawing() {
    for seed in [1, 2, 3] {
        for width in [2, 5] {
            let t = SummationTree::random(5000, width, seed);
            let outline = Outline::of(&t);
            assert!(
                outline.ends().len() <= 128 && !outline.boxes().is_empty(),
                "{} ends",
                outline.ends().len()
            );
            let dot = render::dot(&t);
            assert!(dot.len() < 200_000, "{} bytes", dot.len());
            let text = render::text(&t);
            assert!(text.lines().count() <= 10, "{text}");
        }
    }
    let t = SummationTree::random(5000, 2, 1);
    if let Some((_, seconds)) = timed_svg("random, n = 5000", &Drawing::new(&t)) {
        assert!(seconds < 30.0, "dot took {seconds:.1} s");
    }
}

#[test]
fn chains_stay_short() {
    // A sequential sum opens only a few links, then says what the rest is.
    let t = Order::Sequential.tree(16384);
    let outline = Outline::of(&t);
    assert!(outline.sums().len() <= 8, "{}", outline.sums().len());
    assert_eq!(outline.boxes().len(), 1);
    assert!(render::dot(&t).contains("16376 summands\\nsequential\\ndepth 16375\""));
    // Blocks summed one after another: a chain of blocks, each one box.
    let t = Order::Blocked(128).tree(8192);
    let outline = Outline::of(&t);
    assert_eq!((outline.sums().len(), outline.boxes().len()), (63, 64));
}

#[test]
fn a_box_counts_the_other_arithmetic_it_hides() {
    let t = numpy_like(16384);
    let mut model = Arithmetic::uniform(NodeArithmetic::ieee(Format::F32));
    // A node inside the second block.
    let inside = NodeKey::all(&t)
        .into_iter()
        .find(|k| k.first == 128 && k.size == 2)
        .unwrap();
    model
        .nodes
        .insert(inside, NodeArithmetic::ieee(Format::F64));
    let dot = render::dot_with(&t, Some(&model));
    assert!(dot.contains("label=\"arithmetic: f32\\n16384 summands, too many"));
    assert_eq!(dot.matches("other arithmetic at 1 of its sums").count(), 1);
}

#[test]
fn a_document_captions_its_drawing() {
    let mut doc = TreeDocument::new(numpy_like(16384));
    doc.probe = Some("numpy:sum".into());
    doc.dtype = Some(Format::F32);
    doc.inferred = Some(Inferred {
        formula: "halves(128, 8, body(8, interleave(8, sequential, pairwise), then))".into(),
        from: vec![1024, 2048],
        proven: None,
        cached: false,
    });
    let dot = Drawing::of(&doc).dot();
    assert!(
        dot.contains(
            "label=\"numpy:sum, n = 16384, f32\\nformula: native:halves(128, 8, body(8, \
             interleave(8, sequential, pairwise), then))\\n16384 summands, too many"
        ),
        "{dot}"
    );
    // Quotes in a spec stay inside the label.
    let quoted = Caption {
        black_box: Some("python:\"f\"".into()),
        ..Caption::default()
    };
    let small = Order::Pairwise.tree(2);
    let dot = Drawing::new(&small).caption(quoted).dot();
    assert!(dot.contains("label=\"python:\\\"f\\\", n = 2\""), "{dot}");
}

/// The DOT source as `dot_with` wrote it before trees were collapsed: small
/// trees must still draw exactly so.
fn dot_before(tree: &SummationTree, model: Option<&Arithmetic>) -> String {
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

#[test]
fn small_trees_draw_as_before() {
    let t: SummationTree = "((0+1)+2)".parse().unwrap();
    assert_eq!(
        render::dot(&t),
        "digraph fprev {\n  graph[rankdir=\"BT\" ordering=\"in\"]\n  \
         node[fontname=\"Helvetica\"]\n  n0[label=\"x0\" shape=\"box\"]\n  \
         n1[label=\"x1\" shape=\"box\"]\n  n2[label=\"x2\" shape=\"box\"]\n  \
         n3[label=\"+\" shape=\"circle\"]\n  n0 -> n3\n  n1 -> n3\n  \
         n4[label=\"+\" shape=\"circle\"]\n  n3 -> n4\n  n2 -> n4\n}"
    );
    let mut trees: Vec<SummationTree> = [1, 2, 3, 17, 100, 255, 256]
        .iter()
        .flat_map(|n| {
            [
                SummationTree::random(*n, 2, 9),
                SummationTree::random(*n, 5, 9),
            ]
        })
        .collect();
    trees.push(Order::Strided(8).tree(256));
    trees.push(numpy_like(256));
    for t in &trees {
        assert_eq!(render::dot(t), dot_before(t, None), "n = {}", t.n());
        let mut model = Arithmetic::uniform(NodeArithmetic::ieee(Format::F32));
        model.inputs = Some(Format::Bf16);
        for key in NodeKey::all(t)
            .into_iter()
            .filter(|k| k.size > 1)
            .step_by(7)
        {
            model.nodes.insert(key, NodeArithmetic::ieee(Format::F64));
        }
        assert_eq!(
            render::dot_with(t, Some(&model)),
            dot_before(t, Some(&model)),
            "n = {}",
            t.n()
        );
    }
}

#[test]
fn a_bare_document_draws_as_its_tree() {
    // Python's `_repr_svg_` draws the document, `to_svg` the tree: the same
    // picture when the document knows nothing more.
    let t = Order::Pairwise.tree(8);
    let doc = TreeDocument::new(t.clone());
    assert_eq!(Drawing::of(&doc).dot(), render::dot(&t));
}
