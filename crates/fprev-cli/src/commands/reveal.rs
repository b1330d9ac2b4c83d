//! `fprev reveal`: reveal a black box's tree, confirm it by replay, and
//! print or save it: the library's reveal workflow, its notes said on
//! stderr, the differing input saved.

use std::path::Path;

use fprev::Spec;
use fprev::document::TreeDocument;
use fprev::error::{Error, Result};
use fprev::sizes::runs;
use fprev::workflow::{self, Infer, Outcome, Request, Revealed};

use super::cache;
use super::check::save_mismatch;
use super::{open_guarded, order_independent, varies, varies_line};
use crate::args::{FormatArgs, OutputFormat, RevealArgs};
use crate::watch::Watch;
use crate::write::check_writable;

/// Runs `fprev reveal`: 0, 4 (order-independent) or 5 (not confirmed).
pub(super) fn run(a: RevealArgs) -> Result<i32> {
    // Validate the output before spending time on the reveal.
    let format = a.output.resolve()?;
    check_writable(a.output.path())?;
    if a.confirm.confirm > 0 {
        check_writable(Some(&a.confirm.mismatch.mismatch_out))?;
    }
    let opts = a.black_box.options(None);
    a.guard.start();
    let mut black_box = open_guarded(&a.spec, &opts)?;
    if let Some(about) = black_box.about() {
        eprintln!("fprev: note: {}: {about}", a.spec);
    }
    let cached = a
        .infer
        .then(|| {
            cache::lookup(
                a.spec.as_str(),
                &opts,
                black_box.about(),
                a.engine.row,
                a.no_cache,
            )
        })
        .flatten();
    let known = cache::known(cached.as_ref());
    if let Some((f, from, _)) = &known {
        eprintln!(
            "fprev: note: the cache holds native:{f}, found before from n = {}: its tree is \
             proven at those sizes below n before it predicts (--no-cache infers afresh)",
            runs(from)
        );
    }
    let request = Request {
        probe: opts,
        engine: a.engine.options(),
        confirm: a.confirm.options(),
        infer: a.infer.then(|| Infer {
            sizes: None,
            prove_up_to: a.prove_up_to,
            known: known.as_ref().map(|(f, from, _)| (f.clone(), from.clone())),
        }),
        runs: a.runs,
        skeleton: !a.no_skeleton,
        nearby: Vec::new(),
        afresh: a.afresh,
    };
    let mut watch = Watch::default();
    let outcome = workflow::reveal(
        &mut black_box,
        a.spec.as_str(),
        &request,
        &mut |o| open_guarded(&a.spec, o),
        &mut watch,
    );
    let revealed = match outcome {
        Ok(Outcome::Revealed(r)) => r,
        Ok(Outcome::OrderIndependent(why)) => return order_independent(&a.spec, &why),
        Ok(Outcome::Varies(v)) => {
            // The skeleton is written as any tree; a JSON, DOT or SVG
            // document on stdout keeps stdout to itself.
            let alone = a.output.path().is_none() && format != OutputFormat::Text;
            let code = match v.skeleton.is_some() && alone {
                true => {
                    eprintln!("fprev: {}", varies_line(&a.spec, &v));
                    6
                }
                false => varies(&a.spec, &v)?,
            };
            if let Some(document) =
                TreeDocument::of_skeleton(v, a.spec.as_str(), black_box.format())
            {
                a.output.write(&document, format)?;
            }
            return Ok(code);
        }
        Err(e) if matches!(e.plain(), Error::BlackBox(_)) && !a.infer => {
            return Err(Error::BlackBox(
                e.to_string() + &format_hint(&a.spec, &a.black_box.format),
            ));
        }
        Err(e) => return Err(e),
    };
    // 5: the order is revealed, its replay differs from the black box.
    let code = if revealed.confirmed() { 0 } else { 5 };
    // A formula is kept once it predicted a confirmed tree; the cache's is
    // forgotten once it failed (at a size it claims, or mispredicting n).
    let inferred = revealed.document.inferred.as_ref();
    if let Some((f, _, _)) = &known
        && !inferred.is_some_and(|i| i.cached)
    {
        cache::forget(cached.as_ref());
        eprintln!("fprev: note: native:{f} is dropped from the cache: it does not hold now");
    }
    if let Some(found) = inferred.filter(|i| !i.cached && code == 0)
        && let Ok(f) = found.formula.parse()
    {
        cache::keep(cached.as_ref(), &f, &found.from, &[]);
    }
    let Revealed {
        mut document,
        mismatch,
    } = *revealed;
    if let (Some(m), Some(c)) = (&mismatch, document.confirmation.as_mut()) {
        let file = &a.confirm.mismatch.mismatch_out;
        let saved = save_mismatch(file, &a.spec, black_box.format(), request.engine.row, m);
        c.mismatch_file = saved.then(|| file.display().to_string());
        if let Some(warning) = watch.unconfirmed.take() {
            eprintln!(
                "fprev: warning: {warning}; {}",
                saved_to(saved.then_some(file))
            );
        }
    }
    a.output.write(&document, format)?;
    Ok(code)
}

/// Where the differing input went: `file`, or nowhere when it could not
/// be written (that error already said why).
pub(super) fn saved_to(file: Option<&Path>) -> String {
    match file {
        Some(file) => format!("the input is saved to {}", file.display()),
        None => "the input could not be saved".into(),
    }
}

/// What to try when a black box of arbitrary code answered nonsense: its
/// values may not be of the format it was given (a C function taking
/// `double` fed floats), or it may add in a wider format than its inputs
/// (Python's built-in `sum` of float32 values adds Python floats).
fn format_hint(spec: &Spec, given: &FormatArgs) -> String {
    let arbitrary = matches!(spec.prefix(), "dylib" | "python");
    if !arbitrary {
        return String::new();
    }
    let mut hints = Vec::new();
    if given.dtype.is_none() {
        hints.push(
            "if it takes double (float64) values, give --dtype f64 (the default is f32)"
                .to_string(),
        );
    }
    if given.acc.is_none() {
        hints.push(
            "if it adds in a wider format than its inputs (Python's built-in sum adds Python \
             floats, f64), declare it with --acc f64"
                .to_string(),
        );
    }
    if hints.is_empty() {
        String::new()
    } else {
        format!("; hint: {}", hints.join("; "))
    }
}
