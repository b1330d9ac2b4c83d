//! Checking a tree file against a black box (`fprev check`, Python's
//! `check`): the file's tree replayed on random inputs with its
//! arithmetic, bit for bit, and told from its nearest alternatives.

use crate::check::{CheckReport, check_document};
use crate::document::TreeDocument;
use crate::error::Result;
use crate::format::Format;
use crate::probe::{Offset, ProbeOptions};

use super::Opener;

/// What [`check`] found.
#[derive(Debug)]
pub struct Checked {
    /// The replays and what they were told apart from.
    pub report: CheckReport,
    /// Where the input array started: the offset given, else the file's.
    pub offset: Option<Offset>,
    /// Whether that offset is the file's (taken from it, not given).
    pub offset_of_file: bool,
    /// The black box's input format.
    pub format: Format,
    /// The format it declares it accumulates in.
    pub declared: Format,
}

/// Checks the tree of `doc` (a file named `name`) against the black box
/// `open` opens with `probe` at `row`, on `trials` random inputs drawn
/// from `seed`: at the file's size unless `probe` names one, and, for a
/// black box that `takes_offset`, at the offset the file's tree was found
/// at unless `probe` names one (a view at another alignment may add in
/// another order). A varying black box's skeleton has no one order to
/// check, and fails.
///
/// ```
/// use fprev::probe::ProbeOptions;
/// use fprev::document::TreeDocument;
///
/// let doc = TreeDocument::new(fprev::Order::Pairwise.tree(64));
/// let mut open = |o: &ProbeOptions| fprev::open("native:pairwise", o);
/// let checked = fprev::workflow::check::check(
///     &doc, "pairwise.json", ProbeOptions::default(), false, 100, 1, 0, &mut open,
/// ).unwrap();
/// assert!(checked.report.mismatch.is_none());
/// ```
#[allow(clippy::too_many_arguments)]
pub fn check(
    doc: &TreeDocument,
    name: &str,
    mut probe: ProbeOptions,
    takes_offset: bool,
    trials: usize,
    seed: u64,
    row: usize,
    open: &mut Opener,
) -> Result<Checked> {
    doc.one_order(name)?;
    probe.n = probe.n.or(Some(doc.n()));
    let offset_of_file = takes_offset && probe.offset.is_none() && doc.offset.is_some();
    if offset_of_file {
        probe.offset = doc.offset;
    }
    let mut black_box = open(&probe)?;
    let report = check_document(doc, &mut *black_box, trials, seed, row)?;
    Ok(Checked {
        report,
        offset: probe.offset,
        offset_of_file,
        format: black_box.format(),
        declared: black_box.accumulator(),
    })
}
