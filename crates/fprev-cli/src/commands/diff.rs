//! `fprev diff`: compare two saved trees modulo child order.

use fprev::document::TreeDocument;
use fprev::error::Result;

use crate::args::DiffArgs;
use crate::write;

/// Runs `fprev diff`: 0 when the trees agree, 1 when they differ (with the
/// first subtrees where they part).
pub(super) fn run(a: DiffArgs) -> Result<i32> {
    let (left_doc, right_doc) = (TreeDocument::read(&a.a)?, TreeDocument::read(&a.b)?);
    let (left, right) = (&left_doc.tree, &right_doc.tree);
    let Some(d) = left.diff(right) else {
        return same_order(&a, &left_doc, &right_doc);
    };
    if left.n() != right.n() {
        write::println(format_args!(
            "different: {} has {} summands, {} has {}",
            a.a.display(),
            left.n(),
            a.b.display(),
            right.n()
        ))?;
        return Ok(1);
    }
    write::println("different: the trees part at")?;
    for (path, tree, node) in [(&a.a, left, d.left), (&a.b, right, d.right)] {
        match node {
            Some(node) => write::println(format_args!(
                "  {}: {}",
                path.display(),
                tree.subtree_text(node)
            ))?,
            None => write::println(format_args!(
                "  {}: (every node is in the other tree)",
                path.display()
            ))?,
        }
    }
    Ok(1)
}

/// Equal orders: equal, or the same order with different arithmetic (the
/// first node, from the leaves up, where the models part).
fn same_order(a: &DiffArgs, left: &TreeDocument, right: &TreeDocument) -> Result<i32> {
    let n = left.tree.n();
    match (&left.arithmetic, &right.arithmetic) {
        (Some(l), Some(r)) => {
            // Models name nodes by their leaves, so either tree serves.
            if let Some((key, x, y)) = l.first_difference(r, &left.tree) {
                write::println(format_args!(
                    "same order, different arithmetic: the trees of {n} summands agree modulo \
                     child order, but at {key} {} computes {x} and {} computes {y}",
                    a.a.display(),
                    a.b.display()
                ))?;
                return Ok(1);
            }
            if let Some(what) = l.leaf_difference(r) {
                write::println(format_args!(
                    "same order, different arithmetic: the trees of {n} summands agree modulo                      child order, and so do their nodes, but {what} ({} against {})",
                    a.a.display(),
                    a.b.display()
                ))?;
                return Ok(1);
            }
            write::println(format_args!(
                "equal: the trees of {n} summands agree modulo child order, and so does their \
                 arithmetic ({l})"
            ))?;
        }
        (None, None) => write::println(format_args!(
            "equal: the trees of {n} summands agree modulo child order"
        ))?,
        (l, _) => write::println(format_args!(
            "equal: the trees of {n} summands agree modulo child order (only {} carries an \
             arithmetic model, so their bits were not compared)",
            if l.is_some() {
                a.a.display()
            } else {
                a.b.display()
            }
        ))?,
    }
    Ok(0)
}
