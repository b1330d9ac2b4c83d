//! Revealing one black box at one size: the tree (revealed, or predicted
//! and proven), its confirmation and arithmetic, as a tree document.

use std::sync::Arc;
use std::time::Instant;

use crate::arith::{Arithmetic, NodeArithmetic};
use crate::check::Mismatch;
use crate::check::check_formula;
use crate::document::Stats;
use crate::document::TreeDocument;
use crate::error::Error;
use crate::error::Result;
use crate::formula::Formula;
use crate::formula::known::KNOWN;
use crate::probe::{Probe, ProbeOptions};
use crate::reduce::Replay;
use crate::reveal::Outcome as Found;
use crate::reveal::{Options, VARIATION_INPUTS, look_for_variation, reveal_observed};
use crate::reveal::{Revelation, reveal_predicted};
use crate::tree::SummationTree;
use crate::variation;

use super::confirm::{Confirm, Confirmed, Known, confirm};
use super::predict::{Infer, Prediction, confirm_streamed, parts_of, predict, prove};
use super::varies::characterise;
use super::{Note, Observer, Opener};

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
    /// purpose: each of [`VARIATION_INPUTS`] random inputs summed this
    /// many times, bit for bit (0: only where a reveal or its replay fails,
    /// which costs a deterministic black box nothing).
    pub runs: usize,
    /// Where the black box varies, summarise it over `runs` calls of each
    /// input (or [`SUMMARY_RUNS`](super::SUMMARY_RUNS)) and find its
    /// skeleton, each masked query asked `runs` times (or
    /// [`skeleton_repeats`](super::skeleton_repeats)): the subtrees every
    /// call shares. Not done for a prediction's smaller sizes.
    pub skeleton: bool,
    /// Documents found nearby (the same product at another batch size,
    /// another output of it), nearest first. The first tree of this size
    /// is proven with masked checks instead of revealed, and the arithmetic
    /// of those whose tree is the one found is replayed before any is
    /// searched for; what is wrong is found as usual (a refuted tree is
    /// revealed in full). Not used with [`Request::infer`].
    pub nearby: Vec<Arc<TreeDocument>>,
    /// Reveal afresh: from [`GUESS_KNOWN_FROM`] summands, do not first
    /// prove the tree of a known formula that a replay picks.
    pub afresh: bool,
}

/// How a reveal ended, when nothing failed: the tree document, or the
/// finding that the black box is order-independent.
pub type Outcome = crate::reveal::Outcome<Box<Revealed>>;

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

/// Reveals the tree of `black_box` (named `label` in the document and
/// notes) as `request` says, confirms it by replay and finds what its
/// nodes compute, telling `observer` what it finds. With
/// [`Request::infer`], the tree is predicted by the formula that reveals
/// at smaller sizes follow (each opened by `open` with
/// [`Request::probe`] at its size) and proven with masked checks where it
/// can be; otherwise `open` is not called.
///
/// A black box that breaks an assumption of the method fails with
/// [`Error::BlackBox`](crate::Error::BlackBox); one whose bits do not
/// depend on the order is [`Outcome::OrderIndependent`], and one whose
/// answer to an input changes from call to call is [`Outcome::Varies`].
pub fn reveal(
    black_box: &mut dyn Probe,
    label: &str,
    request: &Request,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Outcome> {
    let engine = &request.engine;
    if request.runs > 1 {
        let v = variation::measure(black_box, VARIATION_INPUTS, request.runs, 5)?;
        if v.varies() {
            return characterise(black_box, v, request.runs, request.skeleton, observer)
                .map(Outcome::Varies);
        }
        observer.note(Note::Deterministic(v));
    }
    let (tree, mut stats, inferred) = match &request.infer {
        Some(infer) => {
            let n = black_box.n();
            let predicted = predict(n, request, infer, label, open, observer)?;
            let (formula, mut inferred) = match predicted {
                Prediction::Formula(formula, inferred) => (formula, inferred),
                Prediction::OrderIndependent(why) => return Ok(Outcome::OrderIndependent(why)),
                Prediction::Varies(v) => return Ok(Outcome::Varies(v)),
            };
            if n > infer.prove_up_to {
                // Nothing is proven at this size: a replay run from the
                // formula confirms it, and no node is built (unless its
                // arithmetic needs them).
                let mut stats = Stats::default();
                let streamed =
                    confirm_streamed(black_box, &formula, request, &mut stats, open, observer)?;
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
                engine,
                infer.prove_up_to,
                &tree,
                &mut inferred,
                observer,
            );
            match proof? {
                Some(Found::OrderIndependent(why)) => return Ok(Outcome::OrderIndependent(why)),
                Some(Found::Varies(v)) => return Ok(Outcome::Varies(v)),
                Some(Found::Revealed(r)) if r.tree == tree => (r.tree, r.stats, Some(inferred)),
                // The formula mispredicted this size: the reveal stands.
                Some(Found::Revealed(r)) => (r.tree, r.stats, None),
                None => (tree, Stats::default(), Some(inferred)),
            }
        }
        None => {
            let near = request.nearby.iter().find(|d| d.n() == black_box.n());
            let near = near.map(|d| d.tree());
            let r = match reveal_near(black_box, engine, near, !request.afresh, observer)? {
                Found::Revealed(r) => r,
                Found::OrderIndependent(why) => return Ok(Outcome::OrderIndependent(why)),
                Found::Varies(v) => {
                    return characterise(black_box, v, request.runs, request.skeleton, observer)
                        .map(Outcome::Varies);
                }
            };
            for note in r.notes {
                observer.note(Note::Engine(note));
            }
            tracing::info!("revealed: {}", r.stats);
            (r.tree, r.stats, None)
        }
    };
    let parts = parts_of(&tree, inferred.as_ref());
    let found_before = request.confirm.models.fitting(&tree);
    let models: Vec<&Arithmetic> = request
        .nearby
        .iter()
        .filter(|d| d.n() == tree.n() && *d.tree() == tree)
        .filter_map(|d| d.arithmetic.as_ref())
        .chain(&found_before)
        .collect();
    let known = Known {
        parts: parts.as_deref(),
        models,
    };
    let confirmed = confirm(
        black_box,
        &tree,
        known,
        engine.row,
        &request.confirm,
        &mut stats,
        observer,
    )?;
    let mut document = TreeDocument::new(tree);
    document.inferred = inferred;
    finish(
        black_box, label, request, document, stats, confirmed, observer,
    )
}

/// The outcome of a tree `document` (revealed, or predicted) once
/// `confirmed`: the document with its confirmation and arithmetic, or how
/// the black box varies where a replay that differed showed it does.
fn finish(
    black_box: &mut dyn Probe,
    label: &str,
    request: &Request,
    mut document: TreeDocument,
    stats: Stats,
    confirmed: Confirmed,
    observer: &mut dyn Observer,
) -> Result<Outcome> {
    if let Some(v) = confirmed.varies {
        return characterise(black_box, v, request.runs, request.skeleton, observer)
            .map(Outcome::Varies);
    }
    if let Some(m) = &confirmed.mismatch {
        // A replay that differs from a black box that answers one input
        // differently on different calls says nothing of precision.
        let v = look_for_variation(black_box, stats.calls)?;
        if v.varies() {
            return characterise(black_box, v, request.runs, request.skeleton, observer)
                .map(Outcome::Varies);
        }
        observer.note(Note::Unconfirmed {
            label: label.to_string(),
            format: black_box.result(),
            accumulator: black_box.accumulator(),
            trial: m.trial,
            kind: m.kind,
            replayed: m.replayed,
            black_box: m.black_box,
        });
    }
    if let Some((what, formula)) = black_box.described(request.engine.row) {
        let kept = formula.tree(black_box.n()) == *document.tree();
        observer.note(Note::Described {
            what,
            formula: formula.to_string(),
            row: request.engine.row,
            kept,
        });
    }
    document.dtype = Some(black_box.format());
    document.probe = Some(label.to_string());
    document.offset = request.probe.offset;
    document.stats = Some(stats);
    document.confirmation = confirmed.confirmation;
    if let Some(model) = &confirmed.arithmetic {
        request.confirm.models.keep(model);
    }
    document.arithmetic = confirmed.arithmetic;
    Ok(Outcome::Revealed(Box::new(Revealed {
        document,
        mismatch: confirmed.mismatch,
    })))
}

/// From this many summands a reveal first tries the trees of the known
/// formulas ([`KNOWN`]): below it, a reveal costs about what the tries
/// would.
pub const GUESS_KNOWN_FROM: usize = 1024;

/// Reveals `black_box` in full, or proves `near` to be its tree where
/// masked checks can (and reveals it in full where they refute it); with
/// no tree `near`, tries the `known` formulas first ([`prove_known`]).
fn reveal_near(
    black_box: &mut dyn Probe,
    engine: &Options,
    near: Option<&SummationTree>,
    known: bool,
    observer: &mut dyn Observer,
) -> Result<Found<Revelation>> {
    if near.is_none() && known && black_box.n() >= GUESS_KNOWN_FROM {
        let started = Instant::now();
        let (found, tried) = prove_known(black_box, engine, observer)?;
        // The tries' calls are the reveal's, whatever ends it.
        let found = match found {
            Some(found) => found,
            None => reveal_observed(black_box, engine, observer)?,
        };
        return Ok(match found {
            Found::Revealed(mut r) => {
                r.stats.calls += tried;
                r.stats.inputs += tried;
                r.stats.seconds = started.elapsed().as_secs_f64();
                Found::Revealed(r)
            }
            other => other,
        });
    }
    if let Some(tree) = near {
        match reveal_predicted(black_box, engine, tree, &mut *observer) {
            Err(why) if matches!(why.plain(), Error::Input(_)) => {}
            Ok(Found::Revealed(r)) if r.tree == *tree => {
                observer.note(Note::ProvenNearby {
                    n: tree.n(),
                    checks: r.stats.queries,
                    calls: r.stats.calls,
                });
                return Ok(Found::Revealed(r));
            }
            found => return found,
        }
    }
    reveal_observed(black_box, engine, observer)
}

/// Tries the tree of each known formula at the black box's size: replays
/// on two random inputs (close magnitudes, then a wide range, which tells
/// orders apart even in a wide accumulator), run from the formula in the
/// black box's declared accumulator, rule most out in a call or two each;
/// the first that replays is proven with masked checks, one a node (the
/// black box's tree is then that tree, as a reveal would find it;
/// docs/ALGORITHMS.md, Proven predictions), or refuted, and the black box
/// revealed in full with it as the guess. `None` where none replayed or
/// no proof can be made; and the calls the replays took.
fn prove_known(
    black_box: &mut dyn Probe,
    engine: &Options,
    observer: &mut dyn Observer,
) -> Result<(Option<Found<Revelation>>, u64)> {
    let n = black_box.n();
    let declared = Arithmetic::uniform(NodeArithmetic::ieee(black_box.accumulator()));
    // An accumulator no formula's replay adds in (x87) picks none.
    if !Replay::streams(&declared) {
        return Ok((None, 0));
    }
    let declared = std::slice::from_ref(&declared);
    let mut tried = 0;
    for known in KNOWN {
        let formula: Formula = known.formula.parse().expect("a known formula parses");
        let replay = check_formula(&formula, declared, black_box, 2, 0, engine.row)?;
        tried += replay.trials as u64;
        if replay.mismatch.is_some() {
            continue;
        }
        let tree = formula.tree(n);
        return Ok(
            match reveal_predicted(black_box, engine, &tree, &mut *observer) {
                Err(why) if matches!(why.plain(), Error::Input(_)) => (None, tried),
                Ok(Found::Revealed(r)) if r.tree == tree => {
                    observer.note(Note::ProvenKnown {
                        n,
                        formula: known.formula.to_string(),
                        found_for: known.found_for,
                        checks: r.stats.queries,
                        calls: r.stats.calls + tried,
                    });
                    (Some(Found::Revealed(r)), tried)
                }
                found => (Some(found?), tried),
            },
        );
    }
    Ok((None, tried))
}
