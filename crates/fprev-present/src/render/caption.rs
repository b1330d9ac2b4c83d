//! The caption written above a drawing: which black box, how many
//! summands, in what format, and the formula the tree follows.

use fprev::document::TreeDocument;
use fprev::format::Format;

/// Where a drawn tree comes from. Every part is optional; a caption
/// without any adds nothing to the drawing.
///
/// ```
/// use fprev_present::render::{Caption, Drawing};
/// use fprev::{Format, Order};
///
/// let t = Order::Pairwise.tree(4);
/// let caption = Caption {
///     black_box: Some("numpy:sum".into()),
///     dtype: Some(Format::F32),
///     formula: Some("pairwise".into()),
/// };
/// let dot = Drawing::new(&t).caption(caption).dot();
/// assert!(dot.contains("label=\"numpy:sum, n = 4, f32\\nformula: native:pairwise\""));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Caption {
    /// The black box's spec, e.g. `numpy:sum`.
    pub black_box: Option<String>,
    /// The format of its inputs.
    pub dtype: Option<Format>,
    /// A formula that gives the tree (a `native:` spec without its
    /// prefix), e.g. the one a prediction came from.
    pub formula: Option<String>,
}

impl Caption {
    /// What `doc` knows of its tree's origin: its probe, its dtype, and
    /// the formula it was predicted by, if it was.
    pub fn of(doc: &TreeDocument) -> Self {
        Caption {
            black_box: doc.probe.clone(),
            dtype: doc.dtype,
            formula: doc.inferred.as_ref().map(|i| i.formula.clone()),
        }
    }

    /// The caption's lines for a tree of `n` summands; none for an empty
    /// caption, whose `n` alone the drawing already shows.
    pub(crate) fn lines(&self, n: usize) -> Vec<String> {
        if *self == Caption::default() {
            return Vec::new();
        }
        let mut first = Vec::new();
        first.extend(self.black_box.clone());
        first.push(format!("n = {n}"));
        first.extend(self.dtype.map(|d| d.to_string()));
        let mut lines = vec![first.join(", ")];
        lines.extend(
            self.formula
                .as_ref()
                .map(|f| format!("formula: native:{f}")),
        );
        lines
    }
}
