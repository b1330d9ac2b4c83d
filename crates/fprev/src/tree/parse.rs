//! Reading the nested forms of a tree: `((0+1)+2)` and `[[0,1],2]` share one
//! grammar with different delimiters. Iterative, so depth is unbounded.

use petgraph::graph::NodeIndex;

use super::{SummationTree, TreeBuilder, TreeError};

/// An inner node read so far: its children and where it opened.
struct Open {
    children: Vec<Item>,
    at: usize,
}

enum Item {
    Leaf(usize),
    Node(NodeIndex),
}

/// Parses `text` in the grammar `tree := INT | OPEN tree (SEP tree)+ CLOSE`.
pub(super) fn nested(text: &str, open: u8, close: u8, sep: u8) -> Result<SummationTree, TreeError> {
    let bytes = text.as_bytes();
    let err =
        |at: usize, what: &str| TreeError(format!("{what} at character {} of the tree", at + 1));
    // Leaves are collected first; the builder needs n, so nodes are recorded
    // as (children) lists and built once the whole text is read.
    let mut pending: Vec<Vec<Item>> = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut top: Option<Item> = None;
    let mut i = 0;
    // Whether a tree (leaf or closed node) was just completed, so that the
    // next token must be a separator or a close.
    let mut after_tree = false;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if top.is_some() {
            return Err(err(i, "unexpected text after the tree"));
        }
        if b == open {
            if after_tree {
                return Err(err(
                    i,
                    &format!("expected '{}' or '{}'", sep as char, close as char),
                ));
            }
            stack.push(Open {
                children: Vec::new(),
                at: i,
            });
            i += 1;
            continue;
        } else if b == sep {
            if !after_tree || stack.is_empty() {
                return Err(err(i, &format!("unexpected '{}'", sep as char)));
            }
            after_tree = false;
            i += 1;
            continue;
        } else if b == close {
            if !after_tree {
                return Err(err(i, &format!("unexpected '{}'", close as char)));
            }
            let Some(node) = stack.pop() else {
                return Err(err(i, &format!("unbalanced '{}'", close as char)));
            };
            if node.children.len() < 2 {
                return Err(err(node.at, "a sum needs at least two terms"));
            }
            pending.push(node.children);
            let item = Item::Node(NodeIndex::new(pending.len() - 1));
            place(&mut stack, &mut top, item);
            i += 1;
        } else if b.is_ascii_digit() {
            if after_tree {
                return Err(err(
                    i,
                    &format!("expected '{}' or '{}'", sep as char, close as char),
                ));
            }
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let leaf: usize = text[start..i]
                .parse()
                .map_err(|_| err(start, "leaf index too large"))?;
            place(&mut stack, &mut top, Item::Leaf(leaf));
        } else {
            return Err(err(
                i,
                &format!(
                    "unexpected character '{}'",
                    text[i..].chars().next().unwrap_or('?')
                ),
            ));
        }
        after_tree = true;
    }
    if let Some(node) = stack.last() {
        return Err(err(node.at, &format!("'{}' is never closed", open as char)));
    }
    let Some(top) = top else {
        return Err(TreeError("the tree is empty".into()));
    };
    build(pending, top)
}

fn place(stack: &mut [Open], top: &mut Option<Item>, item: Item) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(item),
        None => *top = Some(item),
    }
}

/// Checks that the leaves are exactly `0..n` and builds the tree. Nodes in
/// `pending` are listed children-first, so one forward pass builds them.
fn build(pending: Vec<Vec<Item>>, top: Item) -> Result<SummationTree, TreeError> {
    let items = || pending.iter().flatten().chain(std::iter::once(&top));
    let leaves = items().filter(|i| matches!(i, Item::Leaf(_))).count();
    // A leaf index is bounded by the leaves the text holds before anything
    // is sized by it: `[0, 18446744073709551615]` is two leaves, not 2^64.
    let mut seen = vec![false; leaves];
    for item in items() {
        if let Item::Leaf(i) = *item {
            if i >= leaves {
                return Err(TreeError(format!(
                    "leaf {i} is out of range: a tree of {leaves} leaves numbers them 0..{}, \
                     each exactly once",
                    leaves - 1
                )));
            }
            if seen[i] {
                return Err(TreeError(format!("leaf {i} appears twice")));
            }
            seen[i] = true;
        }
    }
    let mut b = TreeBuilder::new(seen.len());
    let mut built: Vec<NodeIndex> = Vec::with_capacity(pending.len());
    let resolve = |item: &Item, built: &[NodeIndex], b: &TreeBuilder| match *item {
        Item::Leaf(i) => b.leaf(i),
        Item::Node(k) => built[k.index()],
    };
    for children in &pending {
        let kids: Vec<NodeIndex> = children.iter().map(|c| resolve(c, &built, &b)).collect();
        built.push(b.sum(&kids));
    }
    let root = resolve(&top, &built, &b);
    b.finish(root)
}

#[cfg(test)]
mod tests {
    use super::super::SummationTree;

    #[test]
    fn reads_both_forms_and_rejects_malformed_ones() {
        let t: SummationTree = " ( (1 + 0) + 2 ) ".parse().unwrap();
        assert_eq!(t.to_text(), "((0+1)+2)");
        let j = SummationTree::from_json_tree("[2,[1,0]]").unwrap();
        assert_eq!(j, t);
        assert_eq!("0".parse::<SummationTree>().unwrap().n(), 1);
        for (bad, why) in [
            ("", "empty"),
            ("(0+1", "never closed"),
            ("(0+1))", "unexpected text"),
            ("(0)", "two terms"),
            ("(0+0)", "twice"),
            (
                "(0+2)",
                "leaf 2 is out of range: a tree of 2 leaves numbers them 0..1",
            ),
            (
                "(0+18446744073709551615)",
                "leaf 18446744073709551615 is out of range: a tree of 2 leaves",
            ),
            ("(0++1)", "unexpected '+'"),
            ("(0+1)(2+3)", "unexpected text"),
            ("(0+x)", "unexpected character 'x'"),
            ("(0 1)", "expected"),
            ("(0+99999999999999999999999)", "too large"),
        ] {
            let e = bad.parse::<SummationTree>().unwrap_err().0;
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }

    #[test]
    fn deep_trees_do_not_recurse() {
        let n = 100_000;
        let text = format!(
            "{}0{}",
            "(".repeat(n - 1),
            (1..n).map(|i| format!("+{i})")).collect::<String>()
        );
        let t: SummationTree = text.parse().unwrap();
        assert_eq!(t.depth(), n - 1);
        assert_eq!(t.to_text(), text);
    }
}
