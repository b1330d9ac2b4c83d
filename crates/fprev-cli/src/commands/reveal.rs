//! `fprev reveal`: reveal a black box's tree, confirm it by replay, and
//! print or save it.

use std::path::Path;

use fprev::Probe;
use fprev::check;
use fprev::document::TreeDocument;
use fprev::error::{Error, Report, Result};
use fprev::formula::Formula;
use fprev::reveal::arithmetic::{ArithOptions, confirm_arithmetic};
use fprev::reveal::{self};

use fprev::document::Inferred;
use fprev::probe::ProbeOptions;
use fprev::sweep::{Sizes, runs};
use fprev::{Options, SummationTree};

use super::check::save_mismatch;
use super::explain::{infer_from, order_independent};
use super::open_guarded;
use crate::args::{EXPLAIN_SIZES, FormatArgs, PREDICT_SIZES, RevealArgs};
use crate::progress::RevealBar;
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
    let options = a.engine.options();
    let (tree, mut stats, inferred) = if a.infer {
        let (tree, mut inferred) = match predict(&a, &opts, &options) {
            Err(Error::OrderIndependent(why)) => return order_independent(&a.spec, &why),
            r => r?,
        };
        match prove(&a, &mut black_box, &options, &tree, &mut inferred) {
            Err(Error::OrderIndependent(why)) => return order_independent(&a.spec, &why),
            Ok(Some(r)) if r.tree == tree => (r.tree, r.stats, Some(inferred)),
            // The formula mispredicted this size: the reveal stands.
            Ok(Some(r)) => (r.tree, r.stats, None),
            Ok(None) => (tree, fprev::reveal::Stats::default(), Some(inferred)),
            Err(e) => return Err(e),
        }
    } else {
        let r = match reveal::reveal_observed(&mut black_box, &options, &mut RevealBar::default()) {
            Err(Error::OrderIndependent(why)) => return order_independent(&a.spec, &why),
            Err(Error::BlackBox(why)) => {
                return Err(Error::BlackBox(
                    why + &format_hint(&a.spec, &a.black_box.format),
                ));
            }
            r => r?,
        };
        for note in &r.notes {
            eprintln!("fprev: note: {note}");
        }
        tracing::info!("revealed: {}", r.stats);
        (r.tree, r.stats, None)
    };
    let mut arithmetic = None;
    let mut confirmation = None;
    if a.confirm.confirm > 0 {
        let mut found = None;
        let report = if !a.confirm.no_arith && options.row == 0 {
            let arith = ArithOptions {
                trials: a.confirm.confirm,
                every_node: a.confirm.every_node,
                ..ArithOptions::default()
            };
            let parts = parts_of(&tree, inferred.as_ref());
            let confirmed =
                confirm_arithmetic(&mut black_box, &tree, parts.as_deref(), &arith, true)?;
            let report = confirmed.report;
            match confirmed.arithmetic {
                Some(Ok(f)) => {
                    stats.arithmetic_calls = f.calls;
                    let (products, inputs) = if f.model.products.is_some() {
                        (format!(", {} products", f.products_asked), "random x and y")
                    } else {
                        (String::new(), "random inputs")
                    };
                    eprintln!(
                        "fprev: note: arithmetic: {} ({} nodes{products} asked, {} calls; \
                         replayed on {} {inputs}, the same bits)",
                        f.model, f.nodes_asked, f.calls, f.confirmation.trials
                    );
                    found = Some(f);
                }
                // Plain additions replayed it, yet its products were not
                // explained: said, since the tree's confirmation had y = 1.
                Some(Err(e)) if black_box.multiplies() || report.mismatch.is_some() => {
                    eprintln!("fprev: note: arithmetic: {}", Report(&e));
                }
                Some(Err(e)) => tracing::info!("arithmetic: {}", Report(&e)),
                None => {}
            }
            report
        } else {
            check::check_row(&tree, &mut black_box, a.confirm.confirm, 0, options.row)?
        };
        confirmation = Some(match (&report.mismatch, found) {
            (_, Some(f)) => {
                let c = check::Confirmation::from(&f.confirmation);
                arithmetic = Some(f.model);
                c
            }
            (None, None) => check::Confirmation::from(&report),
            (Some(m), None) => {
                let mut c = check::Confirmation::from(&report);
                let file = &a.confirm.mismatch.mismatch_out;
                let saved = save_mismatch(file, &a.spec, black_box.format(), options.row, m);
                c.mismatch_file = saved.then(|| file.display().to_string());
                warn_unconfirmed(&a.spec, &black_box, m, saved.then_some(file));
                c
            }
        });
    }
    let code = match &confirmation {
        Some(c) if !c.confirmed() => 5,
        _ => 0,
    };
    let doc = TreeDocument {
        tree,
        dtype: Some(black_box.format()),
        probe: Some(a.spec.clone()),
        stats: Some(stats),
        confirmation,
        arithmetic,
        inferred,
    };
    a.output.write(&doc, format)?;
    Ok(code)
}

/// The tree at `-n` predicted from reveals at the sizes of `fprev explain`
/// below it (and a few larger ones up to half of it), by the formula they
/// follow.
fn predict(
    a: &RevealArgs,
    opts: &ProbeOptions,
    engine: &Options,
) -> Result<(SummationTree, Inferred)> {
    let n = opts.n.unwrap_or(fprev::probe::DEFAULT_N);
    let explain: Sizes = EXPLAIN_SIZES.parse().map_err(Error::Input)?;
    let more: Sizes = PREDICT_SIZES.parse().map_err(Error::Input)?;
    let below: Vec<usize> = explain
        .0
        .into_iter()
        .filter(|&k| k < n)
        .chain(more.0.into_iter().filter(|&k| k <= n / 2))
        .collect();
    if below.len() < 2 {
        return Err(Error::Input(format!(
            "--infer predicts a size from smaller ones; n = {n} is too small for that: reveal it"
        )));
    }
    let small = ProbeOptions {
        n: None,
        ..opts.clone()
    };
    let (found, trees) = infer_from(&a.spec, &small, &Sizes(below), engine, a.confirm.confirm)?;
    let from: Vec<usize> = trees.iter().map(|t| t.n()).collect();
    let Some(formula) = found.formula else {
        let closest = found
            .closest
            .map(|(f, at)| format!(" (the closest, native:{f}, fails at n = {at})"))
            .unwrap_or_default();
        return Err(Error::BlackBox(format!(
            "{}: no formula of the order language regenerates the trees revealed at n = {}{closest}, \
             so nothing predicts n = {n}: reveal it without --infer",
            a.spec,
            runs(&from)
        )));
    };
    // A known formula that regenerates every reveal as well was found from
    // larger reveals than these: it is the one to predict past them with.
    let known = fprev::formula::known::KNOWN.iter().find_map(|k| {
        let f: Formula = k.formula.parse().ok()?;
        (f != formula && trees.iter().all(|t| f.tree(t.n()) == *t)).then_some((k, f))
    });
    let formula = match known {
        Some((k, f)) => {
            eprintln!(
                "fprev: note: native:{formula} is inferred from reveals at n = {}, and \
                 native:{f}, known for {}, regenerates each of them too: the known one, \
                 found from larger reveals, predicts",
                runs(&from),
                k.found_for
            );
            f
        }
        None => formula,
    };
    eprintln!(
        "fprev: note: n = {n} predicted by native:{formula}, inferred from reveals at n = {}",
        runs(&from)
    );
    let tree = formula.tree(n);
    Ok((
        tree,
        Inferred {
            formula: formula.to_string(),
            from,
            proven: None,
        },
    ))
}

/// Each node's part of the formula that gives `tree`: the formula it was
/// predicted by, or a known one (as the summary matches them, to
/// `MATCH_LIMIT` summands) whose tree it is.
fn parts_of(tree: &SummationTree, inferred: Option<&Inferred>) -> Option<Vec<u32>> {
    match inferred {
        Some(i) => i.formula.parse::<Formula>().ok()?.parts(tree),
        None if tree.n() <= fprev::shape::MATCH_LIMIT => fprev::formula::known::KNOWN
            .iter()
            .find_map(|k| k.formula.parse::<Formula>().ok()?.parts(tree)),
        None => None,
    }
}

/// Proves the `predicted` tree with one masked query per node where `-n`
/// is at most `--prove-up-to` and the black box counts exactly enough for
/// packed queries; a wrong prediction is revealed in full (and said).
fn prove(
    a: &RevealArgs,
    black_box: &mut Box<dyn Probe>,
    options: &Options,
    predicted: &SummationTree,
    inferred: &mut Inferred,
) -> Result<Option<reveal::Revelation>> {
    let n = predicted.n();
    if n > a.prove_up_to {
        return Ok(None);
    }
    let bar = &mut RevealBar::default();
    let r = match reveal::reveal_predicted(&mut **black_box, options, predicted, bar) {
        Err(Error::Input(why)) => {
            eprintln!("fprev: note: not proven: {why}");
            return Ok(None);
        }
        r => r?,
    };
    if r.tree == *predicted {
        inferred.proven = Some(r.stats.queries);
        eprintln!(
            "fprev: note: n = {n} revealed: the prediction is proven by {} masked checks \
             ({} calls)",
            r.stats.queries, r.stats.calls
        );
    } else {
        let at = predicted
            .diff(&r.tree)
            .and_then(|d| d.right)
            .map(|node| r.tree.subtree_text(node))
            .filter(|text| text.len() <= 200)
            .map(|text| format!(": the black box adds {text}, which the formula does not"))
            .unwrap_or_default();
        eprintln!(
            "fprev: warning: native:{} mispredicts n = {n}{at}; the tree is revealed in full \
             ({} calls)",
            inferred.formula, r.stats.calls
        );
    }
    Ok(Some(r))
}

/// Where the differing input went: `file`, or nowhere when it could not
/// be written (that error already said why).
pub(super) fn saved_to(file: Option<&Path>) -> String {
    match file {
        Some(file) => format!("the input is saved to {}", file.display()),
        None => "the input could not be saved".into(),
    }
}

/// The warning for an order whose replay, in plain additions and with no
/// arithmetic model found, differs from the black box on input `m`.
fn warn_unconfirmed(spec: &str, black_box: &dyn Probe, m: &check::Mismatch, file: Option<&Path>) {
    let format = black_box.format();
    let why = if format.round(m.black_box) != m.black_box {
        format!(
            "its result {:e} is not a {format} value: it returns a wider result than its \
             inputs (Python's built-in sum of x.tolist() adds and returns Python floats, f64); \
             give --dtype f64 to reveal it on f64 inputs",
            m.black_box
        )
    } else {
        "it does not add as a tree of plain additions (a compensated sum? parts in other \
         precisions?)"
            .to_string()
    };
    eprintln!(
        "fprev: warning: {spec}: the order is revealed, but a replay of it in plain rounded \
         additions ({} or wider) differs from the black box on random input {} ({}): {why}; \
         {}",
        black_box.accumulator(),
        m.trial + 1,
        m.kind,
        saved_to(file)
    );
}

/// What to try when a black box of arbitrary code answered nonsense: its
/// values may not be of the format it was given (a C function taking
/// `double` fed floats), or it may add in a wider format than its inputs
/// (Python's built-in `sum` of float32 values adds Python floats).
fn format_hint(spec: &str, given: &FormatArgs) -> String {
    let arbitrary = spec.starts_with("dylib:") || spec.starts_with("python:");
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
