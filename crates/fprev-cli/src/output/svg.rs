//! An SVG drawing of the tree, laid out by Graphviz's `dot`.

use fprev::document::TreeDocument;
use fprev::error::Result;
use fprev::render;

use super::Output;

/// The tree drawn as SVG, with its arithmetic where the file has one; an
/// error when `dot` is missing.
pub(crate) struct Svg;

impl Output for Svg {
    fn render(&self, doc: &TreeDocument) -> Result<Vec<u8>> {
        render::svg_with(&doc.tree, doc.arithmetic.as_ref())
    }
}
