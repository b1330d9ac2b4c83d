//! A reveal at one size: the tree revealed in full (or proven, where a
//! tree found nearby or a known formula says what it is), confirmed by
//! replay with its nodes' arithmetic, as a tree document.

use std::time::Instant;

use crate::arith::{Arithmetic, NodeArithmetic};
use crate::check::check_formula;
use crate::document::{Inferred, Stats, TreeDocument};
use crate::error::{Error, Result};
use crate::formula::Formula;
use crate::formula::known::KNOWN;
use crate::probe::Probe;
use crate::reduce::Replay;
use crate::reveal::{Found, Options, look_for_variation, reveal_observed, reveal_predicted};
use crate::tree::SummationTree;

use super::confirm::{Confirmed, Known, confirm};
use super::varies::characterise;
use super::{Note, Observer, Outcome, Request, Revealed};

/// Reveals the tree of `black_box` (named `label` in the document and
/// notes) at its size, as `request` says (its [`Request::infer`] unused),
/// confirms it by replay and finds what its nodes compute, telling
/// `observer` what it finds.
pub(super) fn reveal_size(
    black_box: &mut dyn Probe,
    label: &str,
    request: &Request,
    observer: &mut dyn Observer,
) -> Result<Outcome<Box<Revealed>>> {
    let near = request.nearby.iter().find(|d| d.n() == black_box.n());
    let near = near.map(|d| d.tree());
    let r = match reveal_near(black_box, &request.engine, near, !request.afresh, observer)? {
        Outcome::Revealed(r) => r,
        Outcome::OrderIndependent(why) => return Ok(Outcome::OrderIndependent(why)),
        Outcome::Varies(v) => {
            return characterise(black_box, v, request.runs, request.skeleton, observer)
                .map(Outcome::Varies);
        }
    };
    for note in r.notes {
        observer.note(Note::Engine(note));
    }
    tracing::info!("revealed: {}", r.stats);
    conclude(black_box, label, request, r.tree, r.stats, None, observer)
}

/// The outcome of `tree`, revealed or proven (by a prediction `inferred`,
/// where one gave it): confirmed by replay, with the arithmetic known
/// before (of a nearby tree that is this one, or found earlier) replayed
/// before any is searched for.
pub(super) fn conclude(
    black_box: &mut dyn Probe,
    label: &str,
    request: &Request,
    tree: SummationTree,
    mut stats: Stats,
    inferred: Option<Inferred>,
    observer: &mut dyn Observer,
) -> Result<Outcome<Box<Revealed>>> {
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
        request.engine.row,
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
pub(super) fn finish(
    black_box: &mut dyn Probe,
    label: &str,
    request: &Request,
    mut document: TreeDocument,
    stats: Stats,
    confirmed: Confirmed,
    observer: &mut dyn Observer,
) -> Result<Outcome<Box<Revealed>>> {
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
/// no tree `near`, tries the `known` formulas first ([`try_known`]).
fn reveal_near(
    black_box: &mut dyn Probe,
    engine: &Options,
    near: Option<&SummationTree>,
    known: bool,
    observer: &mut dyn Observer,
) -> Result<Outcome<Found>> {
    if near.is_none() && known && black_box.n() >= GUESS_KNOWN_FROM {
        let started = Instant::now();
        let (found, tried) = try_known(black_box, engine, observer)?;
        // The tries' calls are the reveal's, whatever ends it.
        let found = match found {
            Some(found) => found,
            None => reveal_observed(black_box, engine, observer)?,
        };
        return Ok(match found {
            Outcome::Revealed(mut r) => {
                r.stats.calls += tried;
                r.stats.inputs += tried;
                r.stats.seconds = started.elapsed().as_secs_f64();
                Outcome::Revealed(r)
            }
            other => other,
        });
    }
    if let Some(tree) = near {
        match reveal_predicted(black_box, engine, tree, &mut *observer) {
            Err(why) if matches!(why.plain(), Error::Unprovable(_)) => {}
            Ok(Outcome::Revealed(r)) if r.tree == *tree => {
                observer.note(Note::ProvenNearby {
                    n: tree.n(),
                    checks: r.stats.queries,
                    calls: r.stats.calls,
                });
                return Ok(Outcome::Revealed(r));
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
fn try_known(
    black_box: &mut dyn Probe,
    engine: &Options,
    observer: &mut dyn Observer,
) -> Result<(Option<Outcome<Found>>, u64)> {
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
                Err(why) if matches!(why.plain(), Error::Unprovable(_)) => (None, tried),
                Ok(Outcome::Revealed(r)) if r.tree == tree => {
                    observer.note(Note::ProvenKnown {
                        n,
                        formula: known.formula.to_string(),
                        found_for: known.found_for,
                        checks: r.stats.queries,
                        calls: r.stats.calls + tried,
                    });
                    (Some(Outcome::Revealed(r)), tried)
                }
                found => (Some(found?), tried),
            },
        );
    }
    Ok((None, tried))
}

/// Each node's part of the formula that gives `tree`: the formula it was
/// predicted by, or a known one (as the summary matches them, to
/// `MATCH_LIMIT` summands) whose tree it is.
fn parts_of(tree: &SummationTree, inferred: Option<&Inferred>) -> Option<Vec<u32>> {
    match inferred {
        Some(i) => i.formula.parse::<Formula>().ok()?.parts(tree),
        None if tree.n() <= crate::shape::MATCH_LIMIT => KNOWN
            .iter()
            .find_map(|k| k.formula.parse::<Formula>().ok()?.parts(tree)),
        None => None,
    }
}
