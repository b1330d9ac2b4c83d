//! Predicting a tree instead of revealing it: infer the formula from
//! reveals at smaller sizes, predict the tree at `n`, and prove it with one
//! masked check per node.

use crate::document::Inferred;
use crate::error::{Error, Result};
use crate::formula::Formula;
use crate::formula::infer::EXPLAIN_SIZES;
use crate::formula::known::{self, KNOWN};
use crate::probe::Probe;
use crate::reveal::{Options, Outcome, Revelation, reveal_predicted};
use crate::sizes::{Sizes, runs};
use crate::tree::SummationTree;
use crate::variation::Variation;

use super::explain::{ExplainSizes, Explained, explain};
use super::{Note, Observer, Opener, Request};

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
    /// A formula known beforehand (the cache's) and the sizes it was found
    /// from: it predicts, and nothing is revealed to infer one.
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
    fn sizes_below(&self, n: usize) -> Result<Vec<usize>> {
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

/// A prediction, or why there is none to make.
pub(super) enum Prediction {
    /// The tree predicted, and the formula that gave it.
    Tree(SummationTree, Inferred),
    /// The smaller sizes are order-independent: why.
    OrderIndependent(String),
    /// The smaller sizes vary from call to call.
    Varies(Variation),
}

/// The tree at `n` predicted by the formula that reveals at smaller sizes
/// follow.
pub(super) fn predict(
    n: usize,
    request: &Request,
    infer: &Infer,
    label: &str,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Prediction> {
    if let Some((formula, from)) = &infer.known {
        observer.note(Note::Predicted {
            n,
            formula: formula.to_string(),
            from: from.clone(),
        });
        let inferred = Inferred {
            formula: formula.to_string(),
            from: from.clone(),
            proven: None,
        };
        return Ok(Prediction::Tree(formula.tree(n), inferred));
    }
    let below = infer.sizes_below(n)?;
    if below.len() < 2 {
        return Err(Error::Input(format!(
            "a prediction rests on reveals at smaller sizes; n = {n} is too small for that: \
             reveal it"
        )));
    }
    // The prediction at `n` is itself proven, or confirmed by replay:
    // nothing between is checked.
    let sizes = ExplainSizes {
        reveal: below,
        verify: Vec::new(),
        known: None,
        budget: None,
    };
    let (found, trees) = match explain(
        &sizes,
        &request.probe,
        &request.engine,
        &request.confirm,
        label,
        open,
        observer,
    )? {
        Explained::Found {
            inference, trees, ..
        } => (inference, trees),
        Explained::OrderIndependent(why) => return Ok(Prediction::OrderIndependent(why)),
        Explained::Varies(v) => return Ok(Prediction::Varies(v)),
    };
    let from: Vec<usize> = trees.iter().map(|t| t.n()).collect();
    let Some(formula) = found.formula else {
        let closest = found
            .closest
            .map(|(f, at)| format!(" (the closest, native:{f}, fails at n = {at})"))
            .unwrap_or_default();
        return Err(Error::BlackBox(format!(
            "{label}: no formula of the order language regenerates the trees revealed at n = \
             {}{closest}, so nothing predicts n = {n}: reveal it in full",
            runs(&from)
        )));
    };
    // A known formula that regenerates every reveal as well was found from
    // larger reveals than these: it is the one to predict past them with.
    let known = known::giving_every(&trees).find(|(_, f)| *f != formula);
    let formula = match known {
        Some((k, f)) => {
            observer.note(Note::KnownFormula {
                inferred: formula.to_string(),
                known: f.to_string(),
                found_for: k.found_for,
                from: from.clone(),
            });
            f
        }
        None => formula,
    };
    observer.note(Note::Predicted {
        n,
        formula: formula.to_string(),
        from: from.clone(),
    });
    let tree = formula.tree(n);
    let inferred = Inferred {
        formula: formula.to_string(),
        from,
        proven: None,
    };
    Ok(Prediction::Tree(tree, inferred))
}

/// Proves the `predicted` tree with one masked query per node where `n` is
/// at most `prove_up_to` and the black box counts exactly enough for
/// packed queries; a wrong prediction is revealed in full (and said).
/// `None`: not proven, nothing revealed.
pub(super) fn prove(
    black_box: &mut dyn Probe,
    engine: &Options,
    prove_up_to: usize,
    predicted: &SummationTree,
    inferred: &mut Inferred,
    observer: &mut dyn Observer,
) -> Result<Option<Outcome<Revelation>>> {
    let n = predicted.n();
    if n > prove_up_to {
        return Ok(None);
    }
    let r = match reveal_predicted(black_box, engine, predicted, &mut *observer) {
        Err(why) if matches!(why.plain(), Error::Input(_)) => {
            observer.note(Note::NotProven(why));
            return Ok(None);
        }
        Ok(Outcome::Revealed(r)) => r,
        r => return r.map(Some),
    };
    if r.tree == *predicted {
        inferred.proven = Some(r.stats.queries);
        observer.note(Note::Proven {
            n,
            checks: r.stats.queries,
            calls: r.stats.calls,
        });
    } else {
        let adds = predicted
            .diff(&r.tree)
            .and_then(|d| d.right)
            .map(|node| r.tree.subtree_text(node))
            .filter(|text| text.len() <= 200);
        observer.note(Note::Mispredicted {
            formula: inferred.formula.clone(),
            n,
            adds,
            calls: r.stats.calls,
        });
    }
    Ok(Some(Outcome::Revealed(r)))
}

/// Each node's part of the formula that gives `tree`: the formula it was
/// predicted by, or a known one (as the summary matches them, to
/// `MATCH_LIMIT` summands) whose tree it is.
pub(super) fn parts_of(tree: &SummationTree, inferred: Option<&Inferred>) -> Option<Vec<u32>> {
    match inferred {
        Some(i) => i.formula.parse::<Formula>().ok()?.parts(tree),
        None if tree.n() <= crate::shape::MATCH_LIMIT => KNOWN
            .iter()
            .find_map(|k| k.formula.parse::<Formula>().ok()?.parts(tree)),
        None => None,
    }
}
