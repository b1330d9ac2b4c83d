//! Graphviz DOT source of the tree, for `dot` to lay out.

use fprev::document::TreeDocument;
use fprev::error::Result;
use fprev::render;

use super::Output;

/// The tree as DOT source, with its arithmetic where the file has one.
pub(crate) struct Dot;

impl Output for Dot {
    fn render(&self, doc: &TreeDocument) -> Result<Vec<u8>> {
        Ok((render::dot_with(&doc.tree, doc.arithmetic.as_ref()) + "\n").into_bytes())
    }
}
