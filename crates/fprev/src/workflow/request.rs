//! What a reveal is asked to do, and how it ends: the request every
//! reveal, explanation and study passes down, and its outcome.

use std::sync::Arc;

use crate::check::Mismatch;
use crate::document::TreeDocument;
use crate::error::{Error, Result};
use crate::formula::Formula;
use crate::formula::infer::EXPLAIN_SIZES;
use crate::probe::ProbeOptions;
use crate::reveal::Options;
use crate::sizes::Sizes;

use super::Confirm;

/// What to do: how to reveal, how to confirm, and whether to predict.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The options the black box was opened with: the reveals at other
    /// sizes a prediction rests on are opened with them, at their size.
    pub probe: ProbeOptions,
    /// How the engine reveals.
    pub engine: Options,
    /// How the tree is confirmed.
    pub confirm: Confirm,
    /// Predict the tree from smaller sizes instead of revealing it in
    /// full (`None`: reveal it).
    pub infer: Option<Infer>,
    /// Before revealing, look for answers that vary from call to call on
    /// purpose: each of [`VARIATION_INPUTS`](crate::reveal::VARIATION_INPUTS)
    /// random inputs summed this many times, bit for bit (0: only where a
    /// reveal or its replay fails, which costs a deterministic black box
    /// nothing).
    pub runs: usize,
    /// Where the black box varies, summarise it over `runs` calls of each
    /// input (or [`SUMMARY_RUNS`](super::SUMMARY_RUNS)) and find its
    /// skeleton within this time (`None`: do not), each masked query asked
    /// `runs` times (or [`skeleton_repeats`](super::skeleton_repeats))
    /// in a subproblem where answers disagree: the subtrees every call
    /// shares.
    /// Not done for a prediction's smaller sizes.
    pub skeleton: Option<std::time::Duration>,
    /// Documents found nearby (the same product at another batch size,
    /// another output of it), nearest first. The first tree of this size
    /// is proven with masked checks instead of revealed, and the arithmetic
    /// of those whose tree is the one found is replayed before any is
    /// searched for; what is wrong is found as usual (a refuted tree is
    /// revealed in full). Not used with [`Request::infer`].
    pub nearby: Vec<Arc<TreeDocument>>,
    /// Reveal afresh: from [`GUESS_KNOWN_FROM`](super::GUESS_KNOWN_FROM)
    /// summands, do not first prove the tree of a known formula that a
    /// replay picks.
    pub afresh: bool,
}

/// A revealed (or predicted) tree and its confirmation.
#[derive(Debug)]
pub struct Revealed {
    /// The tree document: the tree, its stats, confirmation, arithmetic,
    /// and the formula it was predicted by.
    pub document: TreeDocument,
    /// The input on which the replay differed from the black box, where
    /// neither plain additions nor a model of its nodes replayed it (the
    /// document's confirmation then says not confirmed).
    pub mismatch: Option<Mismatch>,
}

impl Revealed {
    /// Whether the tree is confirmed by replay, or not asked to be.
    pub fn confirmed(&self) -> bool {
        self.document
            .confirmation
            .as_ref()
            .is_none_or(|c| c.confirmed())
    }
}

/// Sizes a prediction reveals beyond [`EXPLAIN_SIZES`] (those up to half
/// the size it predicts): past the blocks of 4,096 that OpenBLAS's GEMV
/// works in.
pub const PREDICT_SIZES: &str = "4095,4096,4097,5001,8193";

/// Up to this size a prediction is also proven with masked checks by
/// default: a proof costs about `n / 8` calls of an O(n) black box.
pub const PROVE_UP_TO: usize = 65_536;

/// How to predict a tree instead of revealing it in full.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Infer {
    /// The sizes revealed to infer the formula from; `None`: those of
    /// [`EXPLAIN_SIZES`] below `n` and of [`PREDICT_SIZES`] up to `n / 2`.
    pub sizes: Option<Vec<usize>>,
    /// Up to this `n`, the prediction is also proven with masked inputs,
    /// one check per node (0: never).
    pub prove_up_to: usize,
    /// A formula known beforehand and the sizes to prove it at before it
    /// predicts (the cache's, at the sizes it was found from below `n`;
    /// none: it was proven already, as emitted code's is): where it holds
    /// there, nothing is revealed to infer one; where it does not, one is
    /// inferred afresh (and said).
    pub known: Option<(Formula, Vec<usize>)>,
}

impl Default for Infer {
    fn default() -> Self {
        Infer {
            sizes: None,
            prove_up_to: PROVE_UP_TO,
            known: None,
        }
    }
}

impl Infer {
    /// The sizes to reveal below `n`.
    pub(super) fn sizes_below(&self, n: usize) -> Result<Vec<usize>> {
        if let Some(sizes) = &self.sizes {
            return Ok(sizes.clone());
        }
        let explain: Sizes = EXPLAIN_SIZES.parse().map_err(Error::Input)?;
        let more: Sizes = PREDICT_SIZES.parse().map_err(Error::Input)?;
        Ok(explain
            .0
            .into_iter()
            .filter(|&k| k < n)
            .chain(more.0.into_iter().filter(|&k| k <= n / 2))
            .collect())
    }
}
