//! Asserting summation orders in a test suite: two black boxes have the same
//! order and give the same bits, or a black box still has the order saved in
//! a tree file.
//!
//! ```
//! use fprev::equivalence::{assert_same_order, same_order};
//! use fprev::{open, probe::ProbeOptions};
//!
//! let opts = ProbeOptions { n: Some(100), ..Default::default() };
//! let mut a = open("native:binary-tree", &opts).unwrap();
//! let mut b = open("reduce:binary-tree:4", &opts).unwrap();
//! assert_same_order(&mut a, &mut b);
//!
//! let mut c = open("native:pairwise", &opts).unwrap();
//! let parted = same_order(&mut a, &mut c).unwrap().unwrap_err();
//! assert!(parted.to_string().contains("the orders part"));
//!
//! // One order, other arithmetic: the same tree, but not the same bits.
//! let wide = ProbeOptions { accumulator: Some(fprev::Format::F64), ..opts.clone() };
//! let mut d = open("native:binary-tree", &wide).unwrap();
//! let parted = same_order(&mut a, &mut d).unwrap().unwrap_err();
//! assert!(parted.to_string().contains("same order, different bits"));
//! ```
//!
//! Masked inputs see only the order, so both checks also compare bits on
//! random inputs ([`same_bits`]): two black boxes with one order but other
//! arithmetic (a compensated sum and a plain one) are told apart, and a
//! black box whose bits are not its order's replay never matches a
//! snapshot. A saved tree works as a snapshot: [`assert_order`] compares
//! against the file, and writes it when it is missing and `FPREV_UPDATE=1`
//! is set (or rewrites it, when it differs, under the same variable).

use std::fmt;
use std::path::Path;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::check::{self, CONFIRM_TRIALS};
use crate::document::TreeDocument;
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::probe::Probe;
use crate::reveal::{Options, Outcome, reveal};
use crate::tree::SummationTree;
use crate::variation::Variation;

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

/// An input on which two black boxes (or a black box and a tree's replay)
/// return different bits.
#[derive(Clone, Debug)]
pub struct BitsDiffer {
    /// Name of the first.
    pub left_name: String,
    /// Name of the second.
    pub right_name: String,
    /// Which random input (0-based).
    pub trial: usize,
    /// What kind of input it was.
    pub kind: Inputs,
    /// The input.
    pub input: Vec<f64>,
    /// What the first returned.
    pub left: f64,
    /// What the second returned.
    pub right: f64,
}

impl fmt::Display for BitsDiffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "same order, different bits: on random input {} ({}, {} values) {} gave {:e} where {} \
             gave {:e}",
            self.trial + 1,
            self.kind,
            self.input.len(),
            self.left_name,
            self.left,
            self.right_name,
            self.right
        )
    }
}

/// Why two black boxes (or a black box and a saved order) are not one.
#[derive(Clone, Debug)]
pub enum Differ {
    /// Their orders differ.
    Order(Parted),
    /// Their orders agree, their bits do not.
    Bits(BitsDiffer),
    /// One sums order-independently (every order gives the same bits), so
    /// it has no order to agree with the other's: names it.
    OrderIndependent(String),
    /// One answers the same input differently on different calls, so no
    /// one order of it can agree with anything: names it, and what
    /// repeating inputs showed.
    Varies(String, Variation),
}

impl fmt::Display for Differ {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Differ::Order(p) => p.fmt(f),
            Differ::Bits(b) => b.fmt(f),
            Differ::Varies(which, v) => write!(
                f,
                "{which} adds in another order from call to call ({} of {} random inputs gave \
                 other bits on other calls); no one order of it can be the same as another",
                v.varied, v.inputs
            ),
            Differ::OrderIndependent(which) => write!(
                f,
                "{which} sums order-independently (every order of random inputs gives the same \
                 bits): no summation tree describes it, so it has no order to compare"
            ),
        }
    }
}

/// Sums `trials` seeded random inputs (cycling through the kinds of
/// [`Inputs`]) with both black boxes and compares the results bit for bit:
/// `Ok(Ok(()))` when every one agreed.
pub fn same_bits(
    a: &mut dyn Probe,
    b: &mut dyn Probe,
    trials: usize,
    seed: u64,
) -> Result<Result<(), BitsDiffer>> {
    if a.n() != b.n() || a.format() != b.format() {
        return Err(Error::Input(format!(
            "the black boxes take {} values of {} and {} values of {}",
            a.n(),
            a.format(),
            b.n(),
            b.format()
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut left, mut right) = ([0.0], [0.0]);
    for trial in 0..trials {
        let kind = Inputs::ALL[trial % Inputs::ALL.len()];
        let input = kind.draw(a.format(), a.n(), &mut rng);
        a.sum(&input, &mut left)?;
        b.sum(&input, &mut right)?;
        let same =
            left[0].to_bits() == right[0].to_bits() || (left[0].is_nan() && right[0].is_nan());
        if !same {
            return Ok(Err(BitsDiffer {
                left_name: "the first black box".into(),
                right_name: "the second black box".into(),
                trial,
                kind,
                input,
                left: left[0],
                right: right[0],
            }));
        }
    }
    Ok(Ok(()))
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

/// Reveals both black boxes and compares their orders, then their bits on
/// [`CONFIRM_TRIALS`] random inputs: `Ok(Ok(()))` when both agree,
/// `Ok(Err(differ))` when either differs, `Err` when a reveal fails. Two
/// order-independent black boxes agree where their bits do; one alone
/// differs.
pub fn same_order(a: &mut dyn Probe, b: &mut dyn Probe) -> Result<Result<(), Differ>> {
    let (first, second) = ("the first black box", "the second black box");
    let left = reveal(a, &Options::default())?;
    let right = reveal(b, &Options::default())?;
    for (outcome, which) in [(&left, first), (&right, second)] {
        if let Outcome::Varies(v) = outcome {
            return Ok(Err(Differ::Varies(which.into(), v.clone())));
        }
    }
    match (left.revealed(), right.revealed()) {
        (Some(left), Some(right)) => {
            if let Err(parted) = compare(&left.tree, first, &right.tree, second) {
                return Ok(Err(Differ::Order(parted)));
            }
        }
        (None, None) => {}
        (None, Some(_)) => return Ok(Err(Differ::OrderIndependent("the first black box".into()))),
        (Some(_), None) => {
            return Ok(Err(Differ::OrderIndependent("the second black box".into())));
        }
    }
    Ok(same_bits(a, b, CONFIRM_TRIALS, 0)?.map_err(Differ::Bits))
}

/// Panics, naming the smallest subtree where they part or the input whose
/// bits differ, unless both black boxes sum in the same order to the same
/// bits.
///
/// # Panics
/// When the orders or the bits differ, or a reveal fails.
#[track_caller]
pub fn assert_same_order(a: &mut dyn Probe, b: &mut dyn Probe) {
    match same_order(a, b) {
        Ok(Ok(())) => {}
        Ok(Err(differ)) => panic!("{differ}"),
        Err(e) => panic!("reveal failed: {e}"),
    }
}

/// Reveals `probe`, compares its order with the tree saved at `path`, and
/// confirms that the black box's bits are that tree's replay on
/// [`CONFIRM_TRIALS`] random inputs. With [`UPDATE_VAR`] set to `1`, a
/// missing or different file is (re)written with the revealed tree
/// instead, and the order check passes (the bits are still checked).
pub fn check_order(probe: &mut dyn Probe, path: &Path) -> Result<Result<(), Differ>> {
    let revealed = match reveal(probe, &Options::default())? {
        Outcome::Revealed(r) => r,
        Outcome::OrderIndependent(_) => {
            return Ok(Err(Differ::OrderIndependent("the black box".into())));
        }
        Outcome::Varies(v) => return Ok(Err(Differ::Varies("the black box".into(), v))),
    };
    let revealed = revealed.tree;
    let report = check::check(&revealed, probe, CONFIRM_TRIALS, 0)?;
    if let Some(m) = report.mismatch {
        let name = format!(
            "the replay of its order (adding in {} or wider)",
            probe.accumulator()
        );
        return Ok(Err(Differ::Bits(BitsDiffer {
            left_name: "the black box".into(),
            right_name: name,
            trial: m.trial,
            kind: m.kind,
            input: m.input,
            left: m.black_box,
            right: m.replayed,
        })));
    }
    let update = std::env::var(UPDATE_VAR).is_ok_and(|v| v == "1");
    let saved = match TreeDocument::read(path) {
        Ok(doc) => Some(doc.into_tree()),
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
        Some(Err(parted)) if !update => Ok(Err(Differ::Order(parted))),
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
    std::fs::write(path, json).map_err(|e| Error::file("write", path, e))
}
