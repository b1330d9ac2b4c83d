//! Predicting a tree instead of revealing it: infer the formula from
//! reveals at smaller sizes, predict the tree at `n`, and prove it with one
//! masked check per node.

use crate::check::check_formula;
use crate::document::{Confirmation, Inferred, Stats, TreeDocument};
use crate::error::{Error, Fault, Result};
use crate::formula::Formula;
use crate::formula::known;
use crate::probe::{Probe, ProbeOptions};
use crate::reduce::Replay;
use crate::reveal::{Found, Options, OrderIndependent, Outcome, Silent, reveal_predicted};
use crate::sizes::runs;
use crate::tree::SummationTree;
use crate::variation::Variation;

use super::confirm::{Confirmed, Known, Seek};
use super::explain::{ExplainSizes, Explained, Proof, explain, prove_known};
use super::size::{conclude, finish};
use super::{Infer, Note, Observer, Opener, Request, Revealed, Unheld};

/// Reveals `black_box` by prediction: the tree at its size predicted by
/// the formula that reveals at smaller sizes follow (each opened by `open`
/// with [`Request::probe`] at its size), proven with masked checks up to
/// [`Infer::prove_up_to`] (a wrong prediction is revealed in full) and
/// confirmed by replay, past it by a replay run from the formula.
pub(super) fn reveal_by_prediction(
    black_box: &mut dyn Probe,
    label: &str,
    request: &Request,
    infer: &Infer,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Outcome<Box<Revealed>>> {
    let n = black_box.n();
    let (formula, mut inferred) = match predict(n, request, infer, label, open, observer)? {
        Prediction::Formula(formula, inferred) => (formula, inferred),
        Prediction::OrderIndependent(why) => return Ok(Outcome::OrderIndependent(why)),
        Prediction::Varies(v) => return Ok(Outcome::Varies(v)),
    };
    if n > infer.prove_up_to {
        // Nothing is proven at this size: a replay run from the formula
        // confirms it, and no node is built (unless its arithmetic needs
        // them).
        let mut stats = Stats::default();
        let streamed = confirm_streamed(black_box, &formula, request, &mut stats, open, observer)?;
        if let Some(confirmed) = streamed {
            let document = TreeDocument::predicted(formula, n, inferred);
            return finish(
                black_box, label, request, document, stats, confirmed, observer,
            );
        }
    }
    crate::memory::check_reveal(n)?;
    let tree = formula.tree(n);
    let proof = prove(
        black_box,
        &request.engine,
        infer.prove_up_to,
        &tree,
        &mut inferred,
        observer,
    );
    let (tree, stats, inferred) = match proof? {
        Some(Outcome::OrderIndependent(why)) => return Ok(Outcome::OrderIndependent(why)),
        Some(Outcome::Varies(v)) => return Ok(Outcome::Varies(v)),
        Some(Outcome::Revealed(r)) if r.tree == tree => (r.tree, r.stats, Some(inferred)),
        // The formula mispredicted this size: the reveal stands.
        Some(Outcome::Revealed(r)) => (r.tree, r.stats, None),
        None => (tree, Stats::default(), Some(inferred)),
    };
    conclude(black_box, label, request, tree, stats, inferred, observer)
}

/// A prediction, or why there is none to make.
pub(super) enum Prediction {
    /// The formula that predicts the tree, and how it was found.
    Formula(Formula, Inferred),
    /// The smaller sizes are order-independent: why.
    OrderIndependent(OrderIndependent),
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
        let prove_at: Vec<usize> = from.iter().copied().filter(|&k| k < n).collect();
        let proof = match prove_at.is_empty() {
            true => Proof::Holds {
                proven: Vec::new(),
                unchecked: None,
            },
            false => prove_known(
                formula,
                &prove_at,
                None,
                &request.probe,
                &request.engine,
                &request.confirm,
                label,
                open,
                observer,
            )?,
        };
        let failed = match proof {
            Proof::Holds {
                proven,
                unchecked: None,
            } => {
                let cached = !from.is_empty();
                observer.note(Note::Predicted {
                    n,
                    formula: formula.to_string(),
                    from: proven.clone(),
                    cached,
                });
                let inferred = Inferred {
                    formula: formula.to_string(),
                    from: proven,
                    proven: None,
                    cached,
                };
                return Ok(Prediction::Formula(formula.clone(), inferred));
            }
            Proof::Holds {
                unchecked: Some((at, why)),
                ..
            } => Unheld::Unproven(at, why),
            Proof::Refuted(at) => Unheld::Refuted(at),
            Proof::Varies(v) => return Ok(Prediction::Varies(v)),
        };
        observer.note(Note::KnownFailed {
            formula: formula.to_string(),
            why: failed,
        });
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
        return Err(Error::BlackBox(Fault::Unpredicted {
            label: label.to_string(),
            revealed: runs(&from),
            closest: found.closest.map(|(f, at)| (f.to_string(), at)),
            n,
        }));
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
        cached: false,
    });
    let inferred = Inferred {
        formula: formula.to_string(),
        from,
        proven: None,
        cached: false,
    };
    Ok(Prediction::Formula(formula, inferred))
}

/// Where a streamed confirmation asks what the nodes compute: a size of
/// the same formula whose tree is a few megabytes.
pub const ARITHMETIC_AT: usize = 65_536;

/// Confirms the tree `formula` gives at the black box's `n` by a replay
/// run from the formula, no node built: the arithmetic is asked of the
/// nodes of the formula's tree at [`ARITHMETIC_AT`] summands (the black
/// box opened there by `open`) and claimed at `n` only where the replay
/// matches with it; otherwise the order is confirmed in plain additions,
/// as a replay of its tree would be. `None` where the model found needs
/// the nodes (it names some, or compensates) and they fit in memory: the
/// tree is then confirmed on its nodes, as after a reveal, and its
/// arithmetic asked there.
pub(super) fn confirm_streamed(
    black_box: &mut dyn Probe,
    formula: &Formula,
    request: &Request,
    stats: &mut Stats,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Option<Confirmed>> {
    let n = black_box.n();
    let confirm = &request.confirm;
    if confirm.trials == 0 {
        return Ok(Some(Confirmed::default()));
    }
    let asked_at = ARITHMETIC_AT.min(n);
    let row = request.engine.row;
    let found = match confirm.arithmetic {
        Seek::Never => None,
        _ => {
            let opts = ProbeOptions {
                n: Some(asked_at),
                ..request.probe.clone()
            };
            let mut smaller = open(&opts)?;
            let tree = formula.tree(asked_at);
            let parts = formula.parts(&tree);
            let known = Known {
                parts: parts.as_deref(),
                models: Vec::new(),
            };
            let mut there = Stats::default();
            let c = super::confirm::confirm(
                &mut *smaller,
                &tree,
                known,
                row,
                confirm,
                &mut there,
                &mut Silent,
            )?;
            stats.arithmetic_calls += there.arithmetic_calls;
            c.arithmetic
        }
    };
    let streams = found.as_ref().filter(|m| Replay::streams(m));
    if found.is_some() && streams.is_none() && crate::memory::too_large(n).is_none() {
        return Ok(None);
    }
    let mut report = None;
    if let Some(model) = streams {
        let r = check_formula(
            formula,
            std::slice::from_ref(model),
            black_box,
            confirm.trials,
            0,
            row,
        )?;
        stats.arithmetic_calls += r.trials as u64;
        report = Some(r).filter(|r| r.mismatch.is_none());
    }
    let report = match report {
        Some(r) => r,
        // The order in plain additions, as a replay of its nodes would.
        None => {
            let r = check_formula(formula, &[], black_box, confirm.trials, 0, row)?;
            stats.arithmetic_calls += r.trials as u64;
            r
        }
    };
    let holds = report.model.is_some();
    if confirm.arithmetic != Seek::Never {
        observer.note(Note::Streamed {
            n,
            asked_at,
            found,
            holds,
            trials: report.trials,
        });
    }
    Ok(Some(Confirmed {
        confirmation: Some(Confirmation::from(&report)),
        arithmetic: report.model.clone(),
        mismatch: report.mismatch,
        varies: None,
    }))
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
) -> Result<Option<Outcome<Found>>> {
    let n = predicted.n();
    if n > prove_up_to {
        return Ok(None);
    }
    let r = match reveal_predicted(black_box, engine, predicted, &mut *observer) {
        Err(why) if matches!(why.plain(), Error::Unprovable(_)) => {
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
