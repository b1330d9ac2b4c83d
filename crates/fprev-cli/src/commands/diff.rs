//! `fprev diff`: compare two saved trees modulo child order.

use fprev::document::TreeDocument;
use fprev::error::Result;

use crate::args::DiffArgs;
use crate::write;

/// Runs `fprev diff`: 0 when the trees agree, 1 when they differ (with the
/// first subtrees where they part).
pub(super) fn run(a: DiffArgs) -> Result<i32> {
    let left = TreeDocument::read(&a.a)?.tree;
    let right = TreeDocument::read(&a.b)?.tree;
    let Some(d) = left.diff(&right) else {
        write::println(format_args!(
            "equal: the trees of {} summands agree modulo child order",
            left.n()
        ))?;
        return Ok(0);
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
    for (path, tree, node) in [(&a.a, &left, d.left), (&a.b, &right, d.right)] {
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
