//! The JSON tree document, the form that keeps all a reveal knew.

use fprev::document::TreeDocument;
use fprev::error::Result;

use super::Output;

/// The whole document (tree, dtype, probe, stats, confirmation) as JSON.
pub(crate) struct Json;

impl Output for Json {
    fn render(&self, doc: &TreeDocument) -> Result<Vec<u8>> {
        Ok((doc.to_json() + "\n").into_bytes())
    }
}
