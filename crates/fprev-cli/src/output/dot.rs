//! Graphviz DOT source of the tree, for `dot` to lay out.

use fprev::document::TreeDocument;
use fprev::error::Result;
use fprev::render;

use super::Output;

/// The tree alone as DOT source.
pub(crate) struct Dot;

impl Output for Dot {
    fn render(&self, doc: &TreeDocument) -> Result<Vec<u8>> {
        Ok((render::dot(&doc.tree) + "\n").into_bytes())
    }
}
