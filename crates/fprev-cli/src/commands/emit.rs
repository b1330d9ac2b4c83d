//! `fprev emit`: a function that reproduces a black box's bits, written
//! from its formula and the arithmetic of each part (the library's
//! `workflow::emit` and `emit`), checked against the black box on request.

use std::path::Path;

use fprev::Spec;
use fprev::document::TreeDocument;
use fprev::emit::{self, Plan};
use fprev::error::{Error, Result};
use fprev::formula::Formula;
use fprev::probe::{Offset, ProbeOptions};
use fprev::sizes::runs;
use fprev::workflow::emit::{CheckOn, Emitted, FromFile, Prepared};
use fprev::workflow::{self};
use fprev_present::front::FrontEnd;

use super::{cache, open_guarded, order_independent};
use crate::args::EmitArgs;
use crate::watch::Watch;
use crate::write;

/// Runs `fprev emit`: 0 with the source written (and checked, with
/// --check), 1 where no formula is known or the check found a difference,
/// 5 where the tree the code would follow is not confirmed.
pub(super) fn run(a: EmitArgs) -> Result<i32> {
    write::check_writable(a.output.as_deref())?;
    if let Some(name) = &a.name {
        emit::valid_name(name, a.language)?;
    }
    a.guard.start();
    let from_file = a.source.ends_with(".json") && Path::new(&a.source).is_file();
    let (plan, spec, offset, mut what) = match from_file {
        true => match of_document(&a)? {
            Ok(found) => found,
            Err(code) => return Ok(code),
        },
        false => match of_spec(&a)? {
            Ok(found) => found,
            Err(code) => return Ok(code),
        },
    };
    // The code follows the order found on an input at one alignment:
    // said in it, since a view at another offset may differ.
    if spec.parse().is_ok_and(|s: Spec| s.takes_offset()) {
        let line = fprev_present::alignment::matched(&spec, offset, plan.element);
        eprintln!("fprev: note: {line}");
        what.push(format!("{line}."));
    }
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| emit::default_name(&spec, plan.element));
    let check = a.check.then(|| CheckOn {
        sizes: a.check_sizes.as_ref().map(|s| s.0.clone()),
        trials: usize::from(a.trials),
    });
    let parsed: Spec = spec.parse()?;
    // Checked where the order was found.
    let found = ProbeOptions {
        offset,
        shape: a.shape,
        ..ProbeOptions::default()
    };
    let emitted = workflow::emit::write(
        &plan,
        a.language,
        &name,
        &what,
        &spec,
        check.as_ref(),
        &mut |o| open_guarded(&parsed, &o.where_found(&found)),
        &mut |done, all| {
            if done % 256 == 0 || done == all {
                eprintln!("fprev: checking: {done} of {all} sizes");
            }
        },
    )?;
    let source = match emitted {
        Emitted::Differs(checked) => {
            if let Some(difference) = checked.difference(a.language, &spec) {
                eprintln!(
                    "fprev: error: {difference}; nothing is written (it held at n = {})",
                    runs(&checked.sizes)
                );
            }
            return Ok(1);
        }
        Emitted::Source { source, checked } => {
            if let Some((checked, seconds)) = checked {
                eprintln!("fprev: note: {} ({seconds:.1} s).", checked.passed(&spec));
            }
            source
        }
    };
    write::write_out(source.as_bytes(), a.output.as_deref())?;
    Ok(0)
}

/// The plan, its black box's spec, the offset its input was found at,
/// and what the code's comment says of it; or the exit status.
type Found = std::result::Result<(Plan, String, Option<Offset>, Vec<String>), i32>;

/// The plan of a spec: its formula (given, the cache's, or explained now)
/// and its arithmetic at the reference sizes (`workflow::emit::prepare`).
fn of_spec(a: &EmitArgs) -> Result<Found> {
    let spec: Spec = a.source.parse()?;
    let opts = ProbeOptions {
        offset: a.offset,
        shape: a.shape,
        ..a.number.options(spec.default_dtype())
    };
    emit::element_ok(opts.format)?;
    let given = match &a.formula {
        Some(f) => Some((
            given_formula(f)?,
            "The order was given (--formula)".to_string(),
        )),
        None => None,
    };
    let done = workflow::emit::prepare_cached(
        spec.as_str(),
        &opts,
        given,
        cache::caches(a.no_cache),
        &mut |o| open_guarded(&spec, o),
        &mut Watch::default(),
    )?;
    if let Some(e) = done.unkept {
        eprintln!("fprev: warning: {e}");
    }
    let prepared = done.prepared;
    planned(prepared, &spec, opts.offset)
}

/// What `fprev emit` says of a prepared plan, and its exit status where
/// no code is written.
fn planned(prepared: Prepared, spec: &Spec, offset: Option<Offset>) -> Result<Found> {
    match prepared {
        Prepared::Ready { plan, what, .. } => {
            eprintln!("fprev: note: the order is native:{}", plan.formula);
            Ok(Ok((*plan, spec.to_string(), offset, what)))
        }
        Prepared::NoFormula => {
            eprintln!(
                "fprev: error: {}",
                fprev_present::emit::no_formula(spec.as_str(), FrontEnd::Cli)
            );
            Ok(Err(1))
        }
        Prepared::OrderIndependent(why) => Ok(Err(order_independent(spec, &why)?)),
        Prepared::NotConfirmed(n, why) => {
            eprintln!(
                "fprev: error: {}",
                fprev_present::emit::not_confirmed(n, &why, spec.as_str(), FrontEnd::Cli)
            );
            Ok(Err(5))
        }
    }
}

/// The plan of a confirmed tree file (`workflow::emit::prepare_file`):
/// its formula proven on the file's black box, its arithmetic found there
/// again.
fn of_document(a: &EmitArgs) -> Result<Found> {
    let doc = TreeDocument::read(Path::new(&a.source))?;
    let given = a.formula.as_deref().map(given_formula).transpose()?;
    let from_file = workflow::emit::prepare_file(
        &doc,
        &a.source,
        given,
        a.number.options(None),
        a.number.dtype,
        a.offset,
        &mut |spec, o| open_guarded(spec, o),
        &mut Watch::default(),
    )?;
    let n = doc.n();
    let file = &a.source;
    match from_file {
        FromFile::Prepared {
            spec,
            probe,
            prepared,
        } => planned(*prepared, &spec, probe.offset),
        FromFile::Unconfirmed => {
            eprintln!(
                "fprev: error: {file} is not confirmed: its replay did not give the black box's \
                 bits (or it was never replayed), so code written from it would not either; \
                 reveal it again, or fprev check it"
            );
            Ok(Err(5))
        }
        FromFile::NoFormula => {
            eprintln!(
                "fprev: error: {}",
                fprev_present::emit::file_no_formula(file, n, FrontEnd::Cli)
            );
            Ok(Err(1))
        }
        FromFile::Differs(formula) => {
            eprintln!("fprev: error: native:{formula} does not give the tree in {file} (n = {n})");
            Ok(Err(1))
        }
        FromFile::NoBlackBox(formula) => Err(Error::Input(format!(
            "{file} names no black box (\"probe\") to prove its formula on: emitted code follows \
             a formula proven on the black box; emit from the spec (fprev emit SPEC --formula \
             {formula})"
        ))),
    }
}

/// `--formula`, as the order language writes it or as fprev prints it
/// (`native:fused:17`).
fn given_formula(f: &str) -> Result<Formula> {
    let f = f.strip_prefix("native:").unwrap_or(f);
    f.parse::<Formula>().map_err(Error::Input)
}
