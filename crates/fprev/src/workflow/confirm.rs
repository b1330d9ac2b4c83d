//! Confirming a revealed tree by replay, with what each node computes: the
//! step after every reveal, of one size or of a sweep's.

use std::sync::{Arc, Mutex};

use crate::arith::Arithmetic;
use crate::check::{CONFIRM_TRIALS, CheckReport, Mismatch, check_models, check_row, with_power};
use crate::document::Confirmation;
use crate::document::Stats;
use crate::error::Result;
use crate::probe::Probe;
use crate::reveal::arithmetic::{ArithOptions, confirm_arithmetic, order_depends_on_values};
use crate::reveal::look_for_variation;
use crate::tree::SummationTree;
use crate::variation::Variation;

use super::{Note, Observer};

/// When to find what each node computes (its format and rounding).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Seek {
    /// Always: the tree document then keeps the model.
    #[default]
    Always,
    /// Only where plain rounded additions do not replay the black box, or
    /// it multiplies (its products must be explained): a sweep's and an
    /// explanation's reveals.
    WhereNeeded,
    /// Never: the order is confirmed in plain rounded additions only.
    Never,
}

/// How a revealed tree is confirmed.
#[derive(Clone, Debug)]
pub struct Confirm {
    /// Random inputs the tree is replayed on, compared with the black box
    /// bit for bit (0: not confirmed).
    pub trials: usize,
    /// When to find each node's arithmetic.
    pub arithmetic: Seek,
    /// Ask every node what it computes, not a sample.
    pub every_node: bool,
    /// Models of the black box's arithmetic its reveals at other sizes
    /// found, shared by every clone of this: each reveal replays those
    /// that fit its tree before searching for one, and keeps what it
    /// finds (an explanation's sizes, a prediction's and its own).
    pub models: Models,
}

/// Models of one black box's arithmetic, shared (see [`Confirm::models`]).
#[derive(Clone, Debug, Default)]
pub struct Models(Arc<Mutex<Vec<Arithmetic>>>);

/// Models a [`Models`] keeps, the latest first: a black box has one or
/// two (a chain's step, its last step).
const MODELS_KEPT: usize = 4;

impl Models {
    /// Those that fit `tree`, the latest found first.
    pub(super) fn fitting(&self, tree: &SummationTree) -> Vec<Arithmetic> {
        let kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter()
            .filter(|m| m.fits(tree).is_ok())
            .cloned()
            .collect()
    }

    /// Keeps `model`, found by a reveal, first.
    pub(super) fn keep(&self, model: &Arithmetic) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|m| m != model);
        kept.insert(0, model.clone());
        kept.truncate(MODELS_KEPT);
    }
}

impl Default for Confirm {
    fn default() -> Self {
        Confirm {
            trials: CONFIRM_TRIALS,
            arithmetic: Seek::Always,
            every_node: false,
            models: Models::default(),
        }
    }
}

/// A tree's confirmation: the replay's record, the model where one was
/// found, and the input the replay differed on where it did.
#[derive(Clone, Debug, Default)]
pub(super) struct Confirmed {
    /// The replay's record for the tree document (`None`: not confirmed,
    /// no trials asked).
    pub(super) confirmation: Option<Confirmation>,
    /// What each node computes, confirmed by its replay.
    pub(super) arithmetic: Option<Arithmetic>,
    /// The input whose bits differ, where neither plain additions nor a
    /// model replayed the black box.
    pub(super) mismatch: Option<Mismatch>,
    /// What repeating inputs showed of a black box that plain additions
    /// did not replay and a model did, where its answers vary: the model
    /// matched by luck of the calls, and no arithmetic is claimed.
    pub(super) varies: Option<Variation>,
}

/// What is known of a tree before it is confirmed.
pub(super) struct Known<'a> {
    /// The tree's parts of the formula it follows, where one is known (see
    /// [`reveal_arithmetic_by_parts`](crate::reveal::arithmetic::reveal_arithmetic_by_parts)).
    pub(super) parts: Option<&'a [u32]>,
    /// Models found for the same tree elsewhere (another batch size,
    /// another row): the first whose replay matches every trial is the
    /// arithmetic, and no node is asked.
    pub(super) models: Vec<&'a Arithmetic>,
}

/// Confirms `tree`, revealed from `probe` at `row`, as `confirm` says,
/// with what is `known` of it, telling `observer` the arithmetic found
/// (or why none was) and adding its calls to `stats`.
///
/// A row other than 0 is otherwise confirmed by replay in plain
/// additions: the arithmetic reveal asks row 0.
pub(super) fn confirm(
    probe: &mut dyn Probe,
    tree: &SummationTree,
    known: Known,
    row: usize,
    confirm: &Confirm,
    stats: &mut Stats,
    observer: &mut dyn Observer,
) -> Result<Confirmed> {
    if confirm.trials == 0 {
        return Ok(Confirmed::default());
    }
    let parts = known.parts;
    let nearby: Vec<Arithmetic> = known
        .models
        .iter()
        .filter(|m| m.fits(tree).is_ok())
        .map(|&m| m.clone())
        .collect();
    if confirm.arithmetic != Seek::Never && !nearby.is_empty() {
        let (report, found) = check_models(tree, &nearby, probe, confirm.trials, 0, row)?;
        if let Some(k) = found {
            stats.arithmetic_calls = report.trials as u64;
            let report = match powered(report, tree, probe, row, stats.calls)? {
                Ok(report) => report,
                Err(varies) => return Ok(varies),
            };
            return Ok(Confirmed {
                confirmation: Some(Confirmation::from(&report)),
                arithmetic: report.mismatch.is_none().then(|| nearby[k].clone()),
                mismatch: report.mismatch,
                varies: None,
            });
        }
    }
    if confirm.arithmetic == Seek::Never || row != 0 {
        let report = check_row(tree, probe, confirm.trials, 0, row)?;
        if report.mismatch.is_some()
            && row == 0
            && let Some(e) = order_depends_on_values(probe, tree)?
        {
            return Err(e);
        }
        let report = match powered(report, tree, probe, row, stats.calls)? {
            Ok(report) => report,
            Err(varies) => return Ok(varies),
        };
        return Ok(Confirmed {
            confirmation: Some(Confirmation::from(&report)),
            mismatch: report.mismatch,
            arithmetic: None,
            varies: None,
        });
    }
    let arith = ArithOptions {
        trials: confirm.trials,
        every_node: confirm.every_node,
        ..ArithOptions::default()
    };
    let seek = confirm.arithmetic == Seek::Always;
    let confirmed = confirm_arithmetic(probe, tree, parts, &arith, seek)?;
    let report = confirmed.report;
    // A model found where plain additions did not replay the black box
    // may have matched by luck of the calls of one that varies.
    if report.mismatch.is_some() && matches!(confirmed.arithmetic, Some(Ok(_))) {
        let v = look_for_variation(probe, stats.calls)?;
        if v.varies() {
            return Ok(Confirmed {
                varies: Some(v),
                ..Confirmed::default()
            });
        }
    }
    match confirmed.arithmetic {
        Some(Ok(found)) => {
            stats.arithmetic_calls = found.calls;
            observer.note(Note::Arithmetic {
                model: found.model.clone(),
                nodes_asked: found.nodes_asked,
                products_asked: found
                    .model
                    .products
                    .is_some()
                    .then_some(found.products_asked),
                calls: found.calls,
                trials: found.confirmation.trials,
            });
            let report = match powered(found.confirmation, tree, probe, row, stats.calls)? {
                Ok(report) => report,
                Err(varies) => return Ok(varies),
            };
            Ok(Confirmed {
                confirmation: Some(Confirmation::from(&report)),
                arithmetic: report.mismatch.is_none().then_some(found.model),
                mismatch: report.mismatch,
                varies: None,
            })
        }
        not_found => {
            // No model is a finding, not a failure: the order stands,
            // confirmed or not by plain additions.
            if let Some(Err(why)) = not_found {
                // Plain additions replayed it, yet its products were not
                // explained: worth saying, since the tree's confirmation
                // had y = 1.
                let worth_saying = probe.as_dot().is_some() || report.mismatch.is_some();
                observer.note(Note::NoArithmetic { why, worth_saying });
            }
            let report = match powered(report, tree, probe, row, stats.calls)? {
                Ok(report) => report,
                Err(varies) => return Ok(varies),
            };
            Ok(Confirmed {
                confirmation: Some(Confirmation::from(&report)),
                arithmetic: None,
                mismatch: report.mismatch,
                varies: None,
            })
        }
    }
}

/// `report`, a replay of `tree` from `probe` at `row`, with what its inputs
/// told its model from ([`with_power`]); where the black box failed an
/// input made to tell them apart and its answers vary from call to call
/// (`calls` made so far), that instead: a mismatch by luck of the calls.
fn powered(
    report: CheckReport,
    tree: &SummationTree,
    probe: &mut dyn Probe,
    row: usize,
    calls: u64,
) -> Result<std::result::Result<CheckReport, Confirmed>> {
    let report = with_power(report, tree, probe, 0, row)?;
    if report.mismatch.is_some() {
        let v = look_for_variation(probe, calls)?;
        if v.varies() {
            return Ok(Err(Confirmed {
                varies: Some(v),
                ..Confirmed::default()
            }));
        }
    }
    Ok(Ok(report))
}
