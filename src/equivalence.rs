//! Asserting summation orders in a test suite: two black boxes have the same
//! order, or a black box still has the order saved in a tree file.
//!
//! ```
//! use fprev::equivalence::{assert_same_order, same_order};
//! use fprev::probe::{open, ProbeOptions};
//!
//! let opts = ProbeOptions { n: Some(100), ..Default::default() };
//! let mut a = open("native:binary-tree", &opts).unwrap();
//! let mut b = open("reduce:binary-tree:4", &opts).unwrap();
//! assert_same_order(&mut a, &mut b);
//!
//! let mut c = open("native:pairwise", &opts).unwrap();
//! let parted = same_order(&mut a, &mut c).unwrap().unwrap_err();
//! assert!(parted.to_string().contains("the orders part"));
//! ```
//!
//! A saved tree works as a snapshot: [`assert_order`] compares against the
//! file, and writes it when it is missing and `FPREV_UPDATE=1` is set (or
//! rewrites it, when it differs, under the same variable).

use std::fmt;
use std::path::Path;

use crate::document::TreeDocument;
use crate::error::{Error, Result};
use crate::probe::Probe;
use crate::reveal::{Options, reveal};
use crate::tree::SummationTree;

/// Environment variable that lets [`assert_order`] write its snapshot.
pub const UPDATE_VAR: &str = "FPREV_UPDATE";

/// Two orders that differ, with the smallest subtree where each departs
/// from the other.
#[derive(Clone, Debug)]
pub struct Parted {
    /// Name of the first order (a spec, a file, "left").
    pub left_name: String,
    /// Name of the second order.
    pub right_name: String,
    /// The smallest subtree of the first that the second lacks, text form.
    pub left: Option<String>,
    /// The smallest subtree of the second that the first lacks.
    pub right: Option<String>,
    /// Summand counts, when they differ.
    pub sizes: (usize, usize),
}

impl fmt::Display for Parted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.sizes.0 != self.sizes.1 {
            return write!(
                f,
                "the orders part: {} adds {} summands, {} adds {}",
                self.left_name, self.sizes.0, self.right_name, self.sizes.1
            );
        }
        write!(f, "the orders part: {} has ", self.left_name)?;
        match &self.left {
            Some(t) => write!(f, "{t}")?,
            None => f.write_str("no node the other lacks")?,
        }
        write!(f, " where {} has ", self.right_name)?;
        match &self.right {
            Some(t) => write!(f, "{t}"),
            None => f.write_str("no node the other lacks"),
        }
    }
}

/// Compares two trees modulo child order.
pub fn compare(
    left: &SummationTree,
    left_name: &str,
    right: &SummationTree,
    right_name: &str,
) -> Result<(), Parted> {
    let Some(d) = left.diff(right) else {
        return Ok(());
    };
    Err(Parted {
        left_name: left_name.to_string(),
        right_name: right_name.to_string(),
        left: d.left.map(|x| left.subtree_text(x)),
        right: d.right.map(|x| right.subtree_text(x)),
        sizes: (left.n(), right.n()),
    })
}

/// Reveals both black boxes and compares their orders: `Ok(Ok(()))` when
/// they are equal, `Ok(Err(parted))` when they differ, `Err` when a reveal
/// fails.
pub fn same_order(a: &mut dyn Probe, b: &mut dyn Probe) -> Result<Result<(), Parted>> {
    let left = reveal(a, &Options::default())?.tree;
    let right = reveal(b, &Options::default())?.tree;
    Ok(compare(
        &left,
        "the first black box",
        &right,
        "the second black box",
    ))
}

/// Panics, naming the smallest subtree where they part, unless both black
/// boxes sum in the same order.
///
/// # Panics
/// When the orders differ or a reveal fails.
#[track_caller]
pub fn assert_same_order(a: &mut dyn Probe, b: &mut dyn Probe) {
    match same_order(a, b) {
        Ok(Ok(())) => {}
        Ok(Err(parted)) => panic!("{parted}"),
        Err(e) => panic!("reveal failed: {e}"),
    }
}

/// Reveals `probe` and compares its order with the tree saved at `path`.
/// With [`UPDATE_VAR`] set to `1`, a missing or different file is
/// (re)written with the revealed tree instead, and the check passes.
pub fn check_order(probe: &mut dyn Probe, path: &Path) -> Result<Result<(), Parted>> {
    let revealed = reveal(probe, &Options::default())?.tree;
    let update = std::env::var(UPDATE_VAR).is_ok_and(|v| v == "1");
    let saved = match TreeDocument::read(path) {
        Ok(doc) => Some(doc.tree),
        Err(_) if update => None,
        Err(_) if !path.exists() => {
            return Err(Error::Input(format!(
                "no saved order at {}: run once with {UPDATE_VAR}=1 to write it",
                path.display()
            )));
        }
        Err(e) => return Err(e),
    };
    let name = path.display().to_string();
    match saved.map(|saved| compare(&revealed, "the black box", &saved, &name)) {
        Some(Ok(())) => Ok(Ok(())),
        Some(Err(parted)) if !update => Ok(Err(parted)),
        _ => {
            write_snapshot(path, revealed)?;
            Ok(Ok(()))
        }
    }
}

/// [`check_order`] as an assertion.
///
/// # Panics
/// When the order differs from the saved one, the file is missing (without
/// [`UPDATE_VAR`]), or the reveal fails.
#[track_caller]
pub fn assert_order(probe: &mut dyn Probe, path: impl AsRef<Path>) {
    match check_order(probe, path.as_ref()) {
        Ok(Ok(())) => {}
        Ok(Err(parted)) => panic!("{parted} (rerun with {UPDATE_VAR}=1 to accept the new order)"),
        Err(e) => panic!("{e}"),
    }
}

fn write_snapshot(path: &Path, tree: SummationTree) -> Result<()> {
    let json = TreeDocument::new(tree).to_json() + "\n";
    std::fs::write(path, json)
        .map_err(|e| Error::Input(format!("cannot write {}: {e}", path.display())))
}
