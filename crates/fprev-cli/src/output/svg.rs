//! An SVG drawing of the tree, laid out by Graphviz's `dot`.

use fprev::document::TreeDocument;
use fprev::error::Result;
use fprev_present::render;

use super::Output;

/// The tree drawn as SVG, as [`super::dot::Dot`] writes its source; an
/// error when `dot` is missing.
pub(crate) struct Svg;

impl Output for Svg {
    fn render(&self, doc: &TreeDocument) -> Result<Vec<u8>> {
        render::Drawing::of(doc).svg()
    }
}
