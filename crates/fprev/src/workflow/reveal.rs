//! Revealing one black box at one size: the tree (revealed, or predicted
//! and proven), its confirmation and arithmetic, as a tree document.

use crate::error::Result;
use crate::probe::Probe;
use crate::reveal::VARIATION_INPUTS;
use crate::variation;

use super::predict::reveal_by_prediction;
use super::size::reveal_size;
use super::varies::characterise;
use super::{FormulaCache, Note, Observer, Opener, Outcome, Request};

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
    if request.runs > 1 {
        let v = variation::measure(black_box, VARIATION_INPUTS, request.runs, 5)?;
        if v.varies() {
            return characterise(black_box, v, request.runs, request.skeleton, observer)
                .map(Outcome::Varies);
        }
        observer.note(Note::Deterministic(v));
    }
    match &request.infer {
        Some(infer) => reveal_by_prediction(black_box, label, request, infer, open, observer),
        None => reveal_size(black_box, label, request, observer),
    }
}

/// [`reveal`] with the formula `cache` of this black box: with
/// [`Request::infer`] and no formula given, the one the cache holds
/// predicts once its tree is proven at the sizes below `n` it was found
/// from; it is forgotten where it fails there or mispredicts `n` (and one
/// inferred afresh), and a formula inferred now is kept once it predicted
/// a tree the replay confirms. Each is told to `observer` as a [`Note`].
pub fn reveal_cached(
    black_box: &mut dyn Probe,
    label: &str,
    request: &Request,
    cache: &dyn FormulaCache,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Outcome> {
    let Some(infer) = request.infer.as_ref().filter(|i| i.known.is_none()) else {
        return reveal(black_box, label, request, open, observer);
    };
    let known = cache.known().map(|(f, from, _)| (f, from));
    let mut request = request.clone();
    if let Some((formula, from)) = &known {
        observer.note(Note::CacheHolds {
            formula: formula.to_string(),
            from: from.clone(),
        });
        request.infer = Some(super::Infer {
            known: known.clone(),
            ..infer.clone()
        });
    }
    let outcome = reveal(black_box, label, &request, open, observer)?;
    let Outcome::Revealed(revealed) = &outcome else {
        return Ok(outcome);
    };
    let inferred = revealed.document.inferred.as_ref();
    if let Some((formula, _)) = &known
        && !inferred.is_some_and(|i| i.cached)
    {
        cache.forget();
        observer.note(Note::CacheDropped {
            formula: formula.to_string(),
            why: None,
        });
    }
    if let Some(found) = inferred.filter(|i| !i.cached && revealed.confirmed())
        && let Ok(formula) = found.formula.parse()
        && let Err(e) = cache.keep(&formula, &found.from, &[])
    {
        observer.note(Note::CacheUnkept(e));
    }
    Ok(outcome)
}
