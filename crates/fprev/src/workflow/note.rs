//! What a workflow finds on the way, as data: each front end says it to its
//! users its own way (a `fprev: note:` line, a Python warning).

use crate::arith::Arithmetic;
use crate::error::Error;
use crate::format::Format;
use crate::inputs::Inputs;
use crate::reveal::{Effort, Finding};
use crate::variation::{Processes, Variation};

/// A finding of a workflow, told to its [`Observer`](super::Observer) as
/// it is made. `fprev_present::note` says it in one neutral line (no
/// command's flags); [`Note::is_warning`] says whether it puts the result
/// in doubt.
#[derive(Debug)]
pub enum Note {
    /// What the black box says of itself (the library and kernel it calls).
    About {
        /// The black box.
        label: String,
        /// What it says.
        about: String,
    },
    /// Its answers to the same random inputs are the same in each fresh
    /// process compared.
    Processes(Processes),
    /// Its answers vary within this process, from call to call, so fresh
    /// processes were not compared.
    ProcessesNotCompared,
    /// A finding of the reveal engine (rows of a GEMM that sum in other
    /// orders than row 0, queries unpacked).
    Engine(Finding),
    /// What each node computes, found and confirmed by its replay.
    Arithmetic {
        /// The model.
        model: Arithmetic,
        /// Nodes asked one by one.
        nodes_asked: usize,
        /// Products asked one by one, where the model says how products
        /// are rounded.
        products_asked: Option<usize>,
        /// Calls of the black box it took.
        calls: u64,
        /// Random inputs its replay matched.
        trials: usize,
    },
    /// No model of what the nodes compute was found.
    NoArithmetic {
        /// Why.
        why: Error,
        /// Whether it matters to the user: the black box multiplies (its
        /// products stay unexplained), or plain additions did not replay
        /// it either. Otherwise it is a detail for a log.
        worth_saying: bool,
    },
    /// The black box's own description gives an order for the output
    /// revealed ([`Probe::described`](crate::probe::Probe::described)):
    /// the revealed tree is that order's, or the black box departs from
    /// its description.
    Described {
        /// Whose description it is.
        what: String,
        /// The order it describes.
        formula: String,
        /// The output revealed.
        row: usize,
        /// Whether the revealed tree is the described order's.
        kept: bool,
    },
    /// A formula known from larger reveals regenerates every reveal a
    /// prediction rests on, as the inferred one does: the known one
    /// predicts.
    KnownFormula {
        /// The formula inferred.
        inferred: String,
        /// The known formula.
        known: String,
        /// What it is known for.
        found_for: &'static str,
        /// The sizes revealed.
        from: Vec<usize>,
    },
    /// The formula an explanation inferred fails at a size past those
    /// revealed, checked before it is claimed: inferred again with that
    /// tree (`None`: none gives every tree).
    Refitted {
        /// The size where it failed.
        failed_at: usize,
        /// The formula that gives every tree now.
        formula: Option<String>,
    },
    /// The tree at `n` is predicted by a formula.
    Predicted {
        /// The size predicted.
        n: usize,
        /// The formula.
        formula: String,
        /// The sizes it was inferred from (none: it was given), or proven
        /// at now where it is the cache's.
        from: Vec<usize>,
        /// Whether it is the cache's, found before.
        cached: bool,
    },
    /// A formula known beforehand (the cache's) does not hold now: a
    /// formula is inferred afresh.
    KnownFailed {
        /// The formula.
        formula: String,
        /// What the black box showed, and where.
        why: Unheld,
    },
    /// The cache holds a formula for this black box, found before: its
    /// tree is proven at the sizes below `n` it was found from before it
    /// predicts.
    CacheHolds {
        /// The formula.
        formula: String,
        /// The sizes it was found from.
        from: Vec<usize>,
    },
    /// The cache's formula is forgotten: it failed at a size it claims,
    /// or mispredicted the size revealed.
    CacheDropped {
        /// The formula.
        formula: String,
        /// How it failed.
        why: Unheld,
    },
    /// No formula is known for the black box: its order is found by an
    /// explanation first (which takes a while).
    Explaining(String),
    /// The formula found now could not be kept in the cache: why.
    CacheUnkept(Error),
    /// The prediction was not proven with masked inputs.
    NotProven(Error),
    /// The prediction is proven: every node's masked check answered as
    /// the predicted tree says.
    Proven {
        /// The size.
        n: usize,
        /// Masked checks asked, one per node.
        checks: u64,
        /// Calls of the black box.
        calls: u64,
    },
    /// A tree found nearby (another batch size, another output) is proven
    /// to be this one's by masked checks, one per node.
    ProvenNearby {
        /// The size.
        n: usize,
        /// Masked checks asked.
        checks: u64,
        /// Calls of the black box.
        calls: u64,
    },
    /// A prediction past the sizes proven was confirmed by a replay run
    /// from its formula, no node built: its arithmetic was asked at a
    /// smaller size of the same formula and is claimed at `n` only where
    /// that replay matched with it.
    Streamed {
        /// The size predicted.
        n: usize,
        /// The size the nodes were asked at.
        asked_at: usize,
        /// The model found there (`None`: none was).
        found: Option<Arithmetic>,
        /// Whether the replay at `n` matched with that model (else it
        /// matched in plain additions, or not at all).
        holds: bool,
        /// Random inputs replayed at `n`.
        trials: usize,
    },
    /// The tree a known formula gives (one found for a library) is proven
    /// to be this one's by masked checks, one per node, instead of
    /// revealed.
    ProvenKnown {
        /// The size.
        n: usize,
        /// The formula.
        formula: String,
        /// The black box it was found for.
        found_for: &'static str,
        /// Masked checks asked.
        checks: u64,
        /// Calls of the black box, the replays that chose the formula
        /// with them.
        calls: u64,
    },
    /// The formula mispredicts `n`: the tree was revealed in full.
    Mispredicted {
        /// The formula.
        formula: String,
        /// The size.
        n: usize,
        /// The black box's subtree the formula lacks, where short.
        adds: Option<String>,
        /// Calls of the full reveal.
        calls: u64,
    },
    /// The order is revealed, but its replay in plain rounded additions
    /// differs from the black box, and no model of the nodes replays it.
    Unconfirmed {
        /// The black box, as named.
        label: String,
        /// The format of its results: its inputs' unless it says (a
        /// tensor core's f16 inputs give f32 results).
        format: Format,
        /// The narrowest accumulator replayed.
        accumulator: Format,
        /// The trial that differed (0-based).
        trial: usize,
        /// The kind of input it was.
        kind: Inputs,
        /// What the replay gave.
        replayed: f64,
        /// What the black box gave.
        black_box: f64,
    },
    /// Repeating random inputs on purpose showed the same bits every call.
    Deterministic(Variation),
    /// The black box varies, as `variation` summarises (the verdict, told
    /// before the search): its skeleton is looked for with `effort`.
    Skeleton {
        /// What repeating random inputs showed.
        variation: Variation,
        /// How hard, and for how long, the skeleton is looked for.
        effort: Effort,
    },
    /// The skeleton of a varying black box could not be found.
    NoSkeleton(Error),
    /// Sizes an explanation could not reveal, so did not explain, each
    /// with why.
    NotRevealed(Vec<(usize, String)>),
}

impl Note {
    /// Whether the note puts the result in doubt (a warning, not a note).
    pub fn is_warning(&self) -> bool {
        matches!(
            self,
            Note::Mispredicted { .. }
                | Note::Unconfirmed { .. }
                | Note::CacheUnkept(_)
                | Note::Described { kept: false, .. }
        )
    }
}

/// Why a formula known beforehand (the cache's) does not hold now, and
/// where.
#[derive(Debug)]
pub enum Unheld {
    /// It mispredicted the size revealed.
    Mispredicted,
    /// The black box's tree at this size is another.
    Refuted(usize),
    /// Its tree could not be proven at this size: why (what stopped the
    /// check, an error's message).
    Unproven(usize, String),
    /// Code following it would not give the black box's bits at this size.
    NotConfirmed(usize, NotConfirmed),
}

/// Why a formula's tree, or its arithmetic, is not confirmed at a size
/// for emitted code.
#[derive(Clone, Debug)]
pub enum NotConfirmed {
    /// Its replay, with the arithmetic found, differs from the black box.
    ReplayDiffers,
    /// The black box's tree there is not the formula's (its text).
    TreeIsNot(String),
    /// The formula's (its text) tree could not be proven there: why (what
    /// stopped the check, an error's message).
    Unproven(String, String),
}
