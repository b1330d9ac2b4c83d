//! Revealing one black box at one size: the tree (revealed, or predicted
//! and proven), its confirmation and arithmetic, as a tree document.

use crate::error::Result;
use crate::format::Format;
use crate::probe::Probe;
use crate::reveal::VARIATION_INPUTS;
use crate::variation::{self, Processes};

use super::predict::reveal_by_prediction;
use super::size::reveal_size;
use super::varies::characterise;
use super::{
    Caches, FormulaCache, Fresh, Note, Observer, Opener, Outcome, Request, Revealed, Unheld,
};

/// What [`reveal()`] ends with.
#[derive(Debug)]
pub enum Revealing {
    /// What the reveal of the black box, of values of this format, found.
    Outcome(Format, Outcome<Box<Revealed>>),
    /// Its answers to the same random inputs differ between fresh
    /// processes (an order chosen as each process starts): no one tree
    /// describes it.
    VariesBetweenProcesses(Processes),
}

/// Reveals the black box `label` as `request` says: opened by `open` with
/// [`Request::probe`] (what it says of itself told as [`Note::About`]);
/// with `processes`, its answers first compared with those of `P - 1`
/// fresh processes (`Fresh`), unless they vary within this one
/// ([`Note::ProcessesNotCompared`]); then revealed as [`reveal_opened`]
/// does, with [`Request::infer`] by the formula `caches` keeps for it
/// (proven at the sizes it was found from before it predicts, forgotten
/// where the black box refutes it, and one inferred now kept once its
/// prediction is confirmed, each told as a [`Note`]).
pub fn reveal(
    label: &str,
    request: &Request,
    open: &mut Opener,
    caches: &dyn Caches,
    processes: Option<(usize, &mut Fresh)>,
    observer: &mut dyn Observer,
) -> Result<Revealing> {
    let mut black_box = open(&request.probe)?;
    let about = black_box.about();
    if let Some(about) = &about {
        observer.note(Note::About {
            label: label.to_string(),
            about: about.clone(),
        });
    }
    if let Some((processes, fresh)) = processes {
        match across_processes(&mut *black_box, processes, fresh)? {
            Some(seen) if seen.varies() => return Ok(Revealing::VariesBetweenProcesses(seen)),
            Some(seen) => observer.note(Note::Processes(seen)),
            None => observer.note(Note::ProcessesNotCompared),
        }
    }
    let cache = match request.infer {
        Some(_) => caches.of(
            label,
            &request.probe,
            &mut || Ok(about.clone()),
            request.engine.row,
        )?,
        None => Box::new(super::NoCache),
    };
    let outcome = reveal_cached(&mut *black_box, label, request, &*cache, open, observer)?;
    Ok(Revealing::Outcome(black_box.format(), outcome))
}

/// The answers of `black_box` (open in this process) and of `processes -
/// 1` fresh processes to the same random inputs, compared; `None` where
/// this process answers them differently when asked twice (what differs
/// between processes then says nothing of them).
fn across_processes(
    black_box: &mut dyn Probe,
    processes: usize,
    fresh: &mut Fresh,
) -> Result<Option<Processes>> {
    let own = variation::answers(black_box, VARIATION_INPUTS, 0)?;
    if variation::answers(black_box, VARIATION_INPUTS, 0)? != own {
        return Ok(None);
    }
    let mut answers = vec![own];
    for _ in 1..processes {
        answers.push(fresh()?);
    }
    Ok(Some(Processes::compare(&answers)))
}

/// Reveals the tree of `black_box`, open already (named `label` in the document and
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
pub fn reveal_opened(
    black_box: &mut dyn Probe,
    label: &str,
    request: &Request,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Outcome<Box<Revealed>>> {
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

/// [`reveal_opened`] with the formula `cache` of this black box: with
/// [`Request::infer`] and no formula given, the one the cache holds
/// predicts once its tree is proven at the sizes below `n` it was found
/// from; it is forgotten where it fails there or mispredicts `n` (and one
/// inferred afresh), and a formula inferred now is kept once it predicted
/// a tree the replay confirms. Each is told to `observer` as a [`Note`].
fn reveal_cached(
    black_box: &mut dyn Probe,
    label: &str,
    request: &Request,
    cache: &dyn FormulaCache,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Outcome<Box<Revealed>>> {
    let Some(infer) = request.infer.as_ref().filter(|i| i.known.is_none()) else {
        return reveal_opened(black_box, label, request, open, observer);
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
    let outcome = reveal_opened(black_box, label, &request, open, observer)?;
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
            why: Unheld::Mispredicted,
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
