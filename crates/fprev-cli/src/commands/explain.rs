//! `fprev explain`: reveal at several sizes, then name the one formula of
//! the order language that gives every revealed tree.

use fprev::error::Error;
use fprev::error::Result;
use fprev::probe::ProbeOptions;
use fprev::sizes::{Sizes, runs};
use fprev::workflow::{
    self, Confirm, ExplainSizes, Explained, Explanation, VERIFY_BUDGET, VERIFY_SIZES,
};

use super::{alignment, cache, open_guarded, order_independent, varies};
use crate::args::ExplainArgs;
use crate::watch::Watch;
use crate::write;

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
    let explained = match explanation {
        Explanation::Kept {
            formula,
            from,
            proven,
            unchecked,
        } => {
            write::println(format_args!("native:{formula}"))?;
            write::println(format_args!(
                "{}.",
                capitalised(&fprev_present::formula::sentence(&formula))
            ))?;
            write::println(format_args!(
                "# from the cache, not explained now: found before from n = {}; its tree \
                 proven again now at n = {} (masked checks, or revealed, and confirmed by \
                 replay); it speaks for the sizes checked, to n = {} (--no-cache explains \
                 afresh)",
                runs(&from),
                runs(&proven),
                proven.last().copied().unwrap_or(0)
            ))?;
            if let Some((n, why)) = unchecked {
                write::println(format_args!("# not checked from n = {n}: {why}"))?;
            }
            return Ok(0);
        }
        Explanation::Now(explained) => explained,
    };
    let (found, trees, verified) = match explained {
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
    let sizes = runs(&revealed);
    match (found.formula.clone(), found.closest.clone()) {
        (Some(formula), _) => {
            write::println(format_args!("native:{formula}"))?;
            write::println(format_args!(
                "{}.",
                capitalised(&fprev_present::formula::sentence(&formula))
            ))?;
            write::println(format_args!(
                "# regenerates the revealed tree of {} at each of {} sizes: n = {sizes}",
                a.spec,
                trees.len(),
            ))?;
            let largest = revealed.last().copied().unwrap_or(0);
            match verified.as_slice() {
                [] => write::println(format_args!(
                    "# checked at the sizes revealed only: it speaks for n <= {largest} (--verify \
                     checks larger sizes)"
                ))?,
                [.., last] => write::println(format_args!(
                    "# checked past them: its tree is the black box's at n = {} (proven with \
                     masked checks, or revealed, and confirmed by replay); it speaks for the \
                     sizes checked, to n = {last}",
                    runs(&verified)
                ))?,
            }
            for (lo, hi) in &found.gaps {
                write::println(format_args!(
                    "# the switch at n = {hi} may lie anywhere in {lo}..{hi}: sizes there \
                     were not revealed"
                ))?;
            }
            Ok(0)
        }
        (None, closest) => {
            let closest = match closest {
                Some((f, at)) => format!(
                    "; the closest, native:{f}, gives every revealed tree below n = {at} but \
                     not the one at {at}"
                ),
                None => "; it gave two different trees at one size".to_string(),
            };
            write::println(format_args!(
                "# not explained: no formula of the order language regenerates every tree \
                 {} revealed at n = {sizes}{closest}",
                a.spec,
            ))?;
            Ok(1)
        }
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
