//! The JSON tree document, the form that keeps all a reveal knew.

use fprev::document::TreeDocument;
use fprev::error::Result;

use super::Output;

/// The whole document (tree, dtype, probe, stats, confirmation) as JSON,
/// the run's times only with `timings`.
pub(crate) struct Json {
    pub(crate) timings: bool,
}

impl Output for Json {
    fn render(&self, doc: &TreeDocument) -> Result<Vec<u8>> {
        let json = if self.timings {
            doc.to_json_with_timings()
        } else {
            doc.to_json()
        };
        Ok((json + "\n").into_bytes())
    }
}
