//! `fprev explain`: reveal at several sizes, then name the one formula of
//! the order language that gives every revealed tree.

use fprev::error::Error;
use fprev::error::Result;
use fprev::probe::ProbeOptions;
use fprev::sizes::Sizes;
use fprev::workflow::{
    self, Confirm, ExplainSizes, Explained, Explanation, VERIFY_BUDGET, VERIFY_SIZES,
};

use super::{alignment, cache, open_guarded, order_independent, varies};
use crate::args::ExplainArgs;
use crate::watch::Watch;
use crate::write;
use fprev_present::explain::{Remedies, found, kept};

/// Runs `fprev explain`: 0 with a formula that regenerates every revealed
/// tree, 1 when no formula does (the closest is named, as not explaining),
/// 3 when no size past two summands could be revealed, 4 when those sizes
/// are order-independent.
pub(super) fn run(a: ExplainArgs) -> Result<i32> {
    let code = explained(&a)?;
    // Said with a formula only: a failure finds nothing to hold.
    if code == 0
        && let Some(line) = alignment(
            &a.spec,
            a.offset,
            a.number.options(a.spec.default_dtype()).format,
        )
    {
        eprintln!("fprev: note: {line}");
    }
    Ok(code)
}

/// [`run`] but for the note on the input's alignment.
fn explained(a: &ExplainArgs) -> Result<i32> {
    a.guard.start();
    let opts = ProbeOptions {
        shape: a.shape,
        offset: a.offset,
        ..a.number.options(a.spec.default_dtype())
    };
    let confirm = Confirm {
        trials: a.confirm,
        ..Confirm::default()
    };
    // The default sizes are checked within a budget; sizes given always.
    let (verify, budget) = match (&a.verify, a.no_verify) {
        (_, true) => (Vec::new(), None),
        (Some(given), false) => (given.0.clone(), None),
        (None, false) => {
            let sizes: Sizes = VERIFY_SIZES.parse().map_err(Error::Input)?;
            (sizes.0, Some(VERIFY_BUDGET))
        }
    };
    let sizes = ExplainSizes {
        reveal: a.sizes.0.clone(),
        verify,
        budget,
    };
    let explanation = workflow::explain_cached(
        &sizes,
        &opts,
        &a.engine.options(),
        &confirm,
        a.spec.as_str(),
        cache::caches(a.no_cache),
        &mut |o| open_guarded(&a.spec, o),
        &mut Watch::default(),
    )?;
    let remedies = Remedies {
        afresh: "--no-cache",
        verify: "--verify",
    };
    let explained = match explanation {
        Explanation::Kept {
            formula,
            from,
            proven,
            unchecked,
        } => {
            let text = kept(&formula, &from, &proven, unchecked.as_ref(), &remedies);
            write::print(text.as_bytes())?;
            return Ok(0);
        }
        Explanation::Now(explained) => explained,
    };
    let (found_now, trees, verified) = match explained {
        Explained::Found {
            inference,
            trees,
            verified,
        } => (inference, trees, verified),
        Explained::OrderIndependent(why) => return order_independent(&a.spec, &why),
        Explained::Varies(v) => return varies(&a.spec, &v),
    };
    let mut revealed: Vec<usize> = trees.iter().map(|t| t.n()).collect();
    revealed.sort_unstable();
    let text = found(&found_now, a.spec.as_str(), &revealed, &verified, &remedies);
    write::print(text.as_bytes())?;
    Ok(if found_now.formula.is_some() { 0 } else { 1 })
}
