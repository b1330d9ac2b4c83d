//! Graphviz DOT source of the tree, for `dot` to lay out.

use fprev::document::TreeDocument;
use fprev::error::Result;
use fprev_present::render;

use super::Output;

/// The tree as DOT source, with its arithmetic where the file has one and
/// a caption of its black box, size, dtype and formula; collapsed when too
/// large to draw whole.
pub(crate) struct Dot;

impl Output for Dot {
    fn render(&self, doc: &TreeDocument) -> Result<Vec<u8>> {
        Ok((render::Drawing::of(doc).dot() + "\n").into_bytes())
    }
}
