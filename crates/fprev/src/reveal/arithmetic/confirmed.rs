//! A revealed tree's confirmation by replay and its arithmetic together,
//! as `fprev reveal`, `fprev sweep` and the Python package make them: of a
//! black box that multiplies, one replay of its model on random `x` and
//! `y`; of one that only adds, the replay in plain additions first, which
//! stands for the model's where the model is plain additions.

use crate::check::{CheckReport, check_row};
use crate::error::{Error, Result};
use crate::probe::Probe;
use crate::tree::SummationTree;

use super::compensated::order_depends_on_values;
use super::{ArithOptions, ArithmeticRevelation, parts_fit, reveal_with_parts};

/// A revealed tree's confirmation by replay, and its arithmetic.
#[derive(Debug)]
pub struct Confirmed {
    /// The replay that says whether the tree is confirmed: the model's,
    /// where one was found, else the one in plain additions.
    pub report: CheckReport,
    /// The tree replayed in plain additions, in the formats
    /// [`check_row`](crate::check::check_row) tries; `None` where the
    /// model's own replay confirmed the tree instead (of a black box that
    /// multiplies, on random `x` and `y`).
    pub plain: Option<CheckReport>,
    /// The arithmetic, where it was sought: always of a black box that
    /// multiplies, else where `seek` said so or plain additions did not
    /// replay the black box.
    pub arithmetic: Option<Result<ArithmeticRevelation>>,
}

/// Confirms `tree`, the black box's revealed order, and reveals what its
/// nodes compute, as `fprev reveal` and `fprev sweep` do, with
/// `opts.trials` random inputs each replay.
///
/// A black box that multiplies (dot, GEMV, GEMM) has its model replayed on
/// random `x` and `y`, products included, which confirms the order too: a
/// sample of nodes saying every node adds in plain additions is not
/// replayed apart first, and no replay in plain additions with `y = 1` is
/// made, unless that model fails (then the reveal is made again, as for a
/// black box that only adds). One replay then does the work of two.
/// Otherwise the tree is replayed in plain additions first, and the
/// arithmetic (with `parts` of a formula's tree, see
/// [`reveal_arithmetic_by_parts`](super::reveal_arithmetic_by_parts)) is sought where `seek` or where those
/// do not replay the black box, reusing that replay where its sample says
/// every node adds so.
///
/// ```
/// use fprev::reveal::arithmetic::{ArithOptions, confirm_arithmetic};
/// use fprev::{Order, probe::ProbeOptions};
///
/// let opts = ProbeOptions { n: Some(64), ..Default::default() };
/// let mut bb = fprev::open("native:pairwise", &opts).unwrap();
/// let tree = Order::Pairwise.tree(64);
/// let confirmed = confirm_arithmetic(&mut bb, &tree, None, &ArithOptions::default(), true)
///     .unwrap();
/// // A sum: plain additions replayed it, and their replay confirms the model.
/// assert!(confirmed.plain.as_ref().unwrap().mismatch.is_none());
/// let found = confirmed.arithmetic.unwrap().unwrap();
/// assert!(found.model.is_uniform());
/// ```
pub fn confirm_arithmetic(
    probe: &mut dyn Probe,
    tree: &SummationTree,
    parts: Option<&[u32]>,
    opts: &ArithOptions,
    seek: bool,
) -> Result<Confirmed> {
    if let Some(parts) = parts {
        parts_fit(tree, parts)?;
    }
    let multiplies = probe.as_dot().is_some();
    if multiplies && opts.trials > 0 {
        match reveal_with_parts(probe, tree, parts, opts, true) {
            Ok(found) => {
                return Ok(Confirmed {
                    report: found.confirmation.clone(),
                    plain: None,
                    arithmetic: Some(Ok(found)),
                });
            }
            Err(e) if matches!(e.plain(), Error::BlackBox(_)) => {}
            Err(e) => return Err(e),
        }
    }
    let plain = check_row(tree, probe, opts.trials, 0, 0)?;
    let arithmetic =
        (opts.trials > 0 && (seek || multiplies || plain.mismatch.is_some())).then(|| {
            let opts = ArithOptions {
                confirmed_plain: ArithOptions::after(&plain, opts.trials).confirmed_plain,
                ..*opts
            };
            reveal_with_parts(probe, tree, parts, &opts, false)
        });
    // Neither plain additions nor a model replays it: an order that
    // depends on the values is said as such, not as a tree.
    if plain.mismatch.is_some()
        && !matches!(arithmetic, Some(Ok(_)))
        && let Some(e) = order_depends_on_values(probe, tree)?
    {
        return Err(e);
    }
    let report = match &arithmetic {
        Some(Ok(found)) => found.confirmation.clone(),
        _ => plain.clone(),
    };
    Ok(Confirmed {
        report,
        plain: Some(plain),
        arithmetic,
    })
}
