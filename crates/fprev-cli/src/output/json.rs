//! The JSON tree document, the form that keeps all a reveal knew.

use fprev::document::{TreeDocument, Written};
use fprev::error::Result;

use super::Output;

/// The whole document (tree, dtype, probe, stats, confirmation) as JSON,
/// the run's times and a predicted tree's leaves only where `written`
/// asks.
pub(crate) struct Json {
    pub(crate) written: Written,
}

impl Output for Json {
    fn render(&self, doc: &TreeDocument) -> Result<Vec<u8>> {
        Ok((doc.to_json_written(self.written) + "\n").into_bytes())
    }
}
