//! Confirming a tree: replay it on random inputs and compare with the black
//! box bit for bit (`fprev check`).
//!
//! ```
//! use fprev::{check, probe, Format, Order};
//!
//! let opts = probe::ProbeOptions { n: Some(64), ..Default::default() };
//! let mut bb = fprev::open("native:pairwise", &opts).unwrap();
//! let right = check::check(&Order::Pairwise.tree(64), &mut bb, 50, 1).unwrap();
//! assert!(right.mismatch.is_none());
//! let wrong = check::check(&Order::Sequential.tree(64), &mut bb, 50, 1).unwrap();
//! assert!(wrong.mismatch.is_some());
//! ```

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use petgraph::graph::NodeIndex;

use crate::arith::{Arithmetic, NodeArithmetic, NodeKey, Product};
use crate::document::{Confirmation, TreeDocument};
use crate::error::{Error, Result, Summands};
use crate::format::{FUSED_FRACTION_BITS, Format, Summand};
use crate::formula::Formula;
use crate::inputs::Inputs;
use crate::probe::Probe;
use crate::reduce::Replay;
use crate::tree::{SummationTree, TreeBuilder};

/// The input on which the last replay that had matched every input before
/// it disagreed with the black box: no replay matches from there on.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Which trial (0-based).
    pub trial: usize,
    /// What kind of input it was.
    pub kind: Inputs,
    /// The input.
    pub input: Vec<f64>,
    /// The vector it was multiplied by, for a black box that multiplies
    /// and a model that says how it rounds products (`None`: ones).
    pub weights: Option<Vec<f64>>,
    /// What the tree's replay gave.
    pub replayed: f64,
    /// The accumulator that replay added in.
    pub accumulator: Format,
    /// What the black box gave.
    pub black_box: f64,
    /// Of an input made to tell the model from one of its nearest
    /// alternatives ([`power`]): that alternative, and what its replay gave.
    pub against: Option<(Alternative, f64)>,
}

/// Outcome of [`check()`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckReport {
    /// Trials run (all of them when nothing mismatched).
    pub trials: usize,
    /// Where the last accumulator still reproducing the black box failed,
    /// if none reproduced it (every trial before matched that replay).
    pub mismatch: Option<Mismatch>,
    /// The accumulator whose replay matched every trial.
    pub accumulator: Option<Format>,
    /// The arithmetic model whose replay matched every trial, when models
    /// were checked ([`check_models`]).
    pub model: Option<Arithmetic>,
    /// What the trials told that model from, where it was sought
    /// ([`power`]).
    pub power: Option<Power>,
}

impl CheckReport {
    /// Trials that matched bit for bit before the first mismatch (all of
    /// them when none did).
    pub fn passed(&self) -> usize {
        self.trials - usize::from(self.mismatch.is_some())
    }
}

/// Random inputs a reveal replays its tree on by default, to confirm that
/// the black box does what the tree says (and not only in that order).
pub const CONFIRM_TRIALS: usize = 48;

/// The most trials one check runs ([`crate::bounds::MOST_TRIALS`]).
pub const MAX_TRIALS: usize = crate::error::bounds::MOST_TRIALS as usize;

impl From<&CheckReport> for Confirmation {
    fn from(report: &CheckReport) -> Self {
        Confirmation {
            trials: report.trials,
            passed: report.passed(),
            accumulator: report.accumulator.map(|f| f.name().to_string()),
            mismatch_file: None,
            distinguished_from: words(report.power.as_ref().map(|p| &p.distinguished)),
            not_distinguished_from: words(report.power.as_ref().map(|p| &p.undistinguished)),
        }
    }
}

/// Each alternative's words, for the tree file.
fn words(models: Option<&Vec<Alternative>>) -> Vec<String> {
    models
        .into_iter()
        .flatten()
        .map(|m| m.to_string())
        .collect()
}

/// Replays `tree` on `trials` seeded random inputs, cycling through the
/// kinds of [`Inputs`], and compares each result with the black box's, bit
/// for bit.
///
/// The order is the tree's; the precision of the partial sums is not always
/// the input format's (NumPy sums f16 in f32, OpenBLAS's sdot accumulates in
/// f64). So the replay runs in the probe's declared accumulator and in every
/// wider one, each result rounded once to the input format at the end, and
/// the check passes when one of them matches every trial.
pub fn check(
    tree: &SummationTree,
    probe: &mut dyn Probe,
    trials: usize,
    seed: u64,
) -> Result<CheckReport> {
    check_row(tree, probe, trials, seed, 0)
}

/// [`check()`] against row `row` of a batched black box (a GEMM's row, an
/// MPI vector's element), whose order `fprev reveal --row` reveals: each
/// trial's input goes into rows 0 to `row`, and row `row`'s sum is compared.
pub fn check_row(
    tree: &SummationTree,
    probe: &mut dyn Probe,
    trials: usize,
    seed: u64,
    row: usize,
) -> Result<CheckReport> {
    check_shape(tree.n(), probe, row)?;
    let candidates: Vec<Replay> = accumulators(probe)
        .map(|acc| Replay::new(tree, acc))
        .collect();
    let (report, _) = check_replays(candidates, probe, trials, seed, row)?;
    Ok(report)
}

/// The accumulators a plain replay of `probe` tries: its declared one,
/// then each wider one that holds its inputs.
fn accumulators(probe: &dyn Probe) -> impl Iterator<Item = Format> {
    let (format, declared) = (probe.format(), probe.accumulator());
    std::iter::once(declared).chain([Format::F32, Format::F64].into_iter().filter(move |f| {
        f.precision() > declared.precision() && f.precision() >= format.precision()
    }))
}

/// Checks a tree file's tree against `probe` at `row`: with its
/// arithmetic model where it has one, bit for bit ([`check_models`]),
/// else in plain additions ([`check_row`]); replayed straight from its
/// formula where the file holds one and the model streams
/// ([`check_formula`]), else on its nodes, where they fit in memory. Then
/// told from its nearest alternatives as a tree is ([`with_power`]), its
/// nodes built for that up to [`BUILT_FOR_POWER`] summands; past that,
/// from its nearest models replayed from the formula, its regroupings
/// said not tried ([`Alternative::Unbuilt`]).
pub fn check_document(
    doc: &TreeDocument,
    probe: &mut dyn Probe,
    trials: usize,
    seed: u64,
    row: usize,
) -> Result<CheckReport> {
    let models: Vec<Arithmetic> = doc.arithmetic.iter().cloned().collect();
    if let Some(formula) = doc.formula()
        && models.iter().all(Replay::streams)
    {
        let report = check_formula(formula, &models, probe, trials, seed, row)?;
        return match doc.n() <= BUILT_FOR_POWER {
            true => with_power(report, doc.tree(), probe, seed, row),
            false => with_streamed_power(report, formula, probe, seed, row),
        };
    }
    let tree = doc.buildable().map_err(|why| match doc.formula() {
        Some(_) => Error::Input(format!(
            "its arithmetic model needs the tree's nodes (it names some, compensates, adds in \
             x87 registers or rounds products), and {why}"
        )),
        None => Error::Input(why),
    })?;
    let report = match models.is_empty() {
        true => check_row(tree, probe, trials, seed, row)?,
        false => check_models(tree, &models, probe, trials, seed, row)?.0,
    };
    with_power(report, tree, probe, seed, row)
}

/// The most summands of a tree a formula gives whose nodes a check builds
/// to tell it from its nearest alternatives (its regroupings need them):
/// every regrouping of a pairwise tree fits the search's work to about
/// here ([`GROUPING_WORK`]).
pub const BUILT_FOR_POWER: usize = 1 << 16;

/// [`with_power`] of a tree `formula` gives, its nodes not built: its
/// nearest models are replayed from the formula (they stream, as the
/// model does), and its regroupings are said not tried.
pub fn with_streamed_power(
    mut report: CheckReport,
    formula: &Formula,
    probe: &mut dyn Probe,
    seed: u64,
    row: usize,
) -> Result<CheckReport> {
    let Some(model) = claimed_model(&report) else {
        return Ok(report);
    };
    let (n, format, result) = (probe.n(), probe.format(), probe.result());
    let Some(claimed) = Replay::of_formula(formula, n, &model) else {
        return Ok(report);
    };
    let mut teller = Teller::new(claimed.returning(result), probe, seed, row, false, None);
    let draws = ((1 << 20) / n.max(1)).clamp(1, POWER_DRAWS);
    let mut mismatch = None;
    for m in nearest_models(&model, formula.may_fuse(), format) {
        let Some(theirs) = Replay::of_formula(formula, n, &m) else {
            teller.power.undistinguished.push(Alternative::Model(m));
            continue;
        };
        mismatch = teller.tell(Alternative::Model(m), theirs, None, draws)?;
        if mismatch.is_some() {
            break;
        }
    }
    let mut power = teller.power;
    if mismatch.is_none() {
        power.undistinguished.push(Alternative::Unbuilt { n });
    }
    Ok(report_with(&mut report, power, mismatch))
}

/// The model a check that matched every trial claims: its model, or plain
/// additions in its accumulator; `None` after a mismatch, no trial, or
/// neither.
fn claimed_model(report: &CheckReport) -> Option<Arithmetic> {
    if report.mismatch.is_some() || report.trials == 0 {
        return None;
    }
    match (&report.model, report.accumulator) {
        (Some(m), _) => Some(m.clone()),
        (None, Some(acc)) => Some(Arithmetic::uniform(NodeArithmetic::ieee(acc))),
        (None, None) => None,
    }
}

/// `report` with `power` and, where an input made to tell an alternative
/// apart failed, that mismatch (the trials counting those calls, no model
/// or accumulator left).
fn report_with(report: &mut CheckReport, power: Power, mismatch: Option<Mismatch>) -> CheckReport {
    let mut report = std::mem::take(report);
    if let Some(m) = mismatch {
        report.trials += power.calls;
        report.mismatch = Some(Mismatch {
            trial: report.trials - 1,
            ..m
        });
        report.model = None;
        report.accumulator = None;
    }
    report.power = Some(power);
    report
}

/// `report`, a check of `tree` that matched every trial, with what its
/// trials told its model (or its plain additions) from ([`power`]); a
/// mismatch where the black box failed an input made to tell them apart.
pub fn with_power(
    mut report: CheckReport,
    tree: &SummationTree,
    probe: &mut dyn Probe,
    seed: u64,
    row: usize,
) -> Result<CheckReport> {
    let Some(model) = claimed_model(&report) else {
        return Ok(report);
    };
    let (power, mismatch) = power(tree, &model, probe, seed, row)?;
    Ok(report_with(&mut report, power, mismatch))
}

/// [`check_models()`] of the tree `formula` gives at the black box's `n`,
/// or, without models, [`check_row()`]: replayed from the formula as it
/// streams, no node built, so a check of `2^27` summands holds little
/// more than one input. Only models that stream are tried (those naming
/// no node, compensating no error, adding in no x87 register and rounding
/// no product: see [`check_document`] for the rest); the report's `model`
/// is the first whose replay matched every trial.
///
/// ```
/// use fprev::{check, formula::Formula, probe};
///
/// let f: Formula = "blocks(64, sequential, pairwise)".parse().unwrap();
/// let opts = probe::ProbeOptions { n: Some(100_000), ..Default::default() };
/// let mut bb = fprev::open(&format!("native:{f}"), &opts).unwrap();
/// let report = check::check_formula(&f, &[], &mut bb, 8, 1, 0).unwrap();
/// assert!(report.mismatch.is_none());
/// let pairwise: Formula = "pairwise".parse().unwrap();
/// assert!(check::check_formula(&pairwise, &[], &mut bb, 8, 1, 0).unwrap().mismatch.is_some());
/// ```
pub fn check_formula(
    formula: &Formula,
    models: &[Arithmetic],
    probe: &mut dyn Probe,
    trials: usize,
    seed: u64,
    row: usize,
) -> Result<CheckReport> {
    let n = probe.n();
    check_shape(n, probe, row)?;
    let streamed: Vec<(&Arithmetic, Replay)> = models
        .iter()
        .filter_map(|m| Some((m, Replay::of_formula(formula, n, m)?)))
        .collect();
    if !models.is_empty() && streamed.is_empty() {
        return Err(Error::Input(
            "no model given streams from a formula: each names nodes, compensates, adds in \
             x87 registers or rounds products"
                .into(),
        ));
    }
    let candidates = match streamed.is_empty() {
        true => accumulators(probe)
            .filter_map(|acc| {
                let ieee = Arithmetic::uniform(crate::arith::NodeArithmetic::ieee(acc));
                Replay::of_formula(formula, n, &ieee)
            })
            .collect(),
        false => streamed.iter().map(|(_, r)| r.clone()).collect(),
    };
    let (mut report, left) = check_replays(candidates, probe, trials, seed, row)?;
    report.model = left
        .first()
        .and_then(|&k| streamed.get(k))
        .map(|(m, _)| (*m).clone());
    Ok(report)
}

/// [`check_row()`] for arithmetic models: replays `tree` with each of
/// `models` and returns the report with the index of the first model that
/// matched every trial (`None` when none did).
pub fn check_models(
    tree: &SummationTree,
    models: &[Arithmetic],
    probe: &mut dyn Probe,
    trials: usize,
    seed: u64,
    row: usize,
) -> Result<(CheckReport, Option<usize>)> {
    check_shape(tree.n(), probe, row)?;
    let candidates = models
        .iter()
        .map(|m| Replay::with_arithmetic(tree, m))
        .collect();
    let (mut report, left) = check_replays(candidates, probe, trials, seed, row)?;
    let first = left.first().copied();
    report.model = first.map(|k| models[k].clone());
    Ok((report, first))
}

/// [`check_models()`] that returns every model that matched every trial
/// (in the order given), not only the first.
pub(crate) fn check_models_all(
    tree: &SummationTree,
    models: &[Arithmetic],
    probe: &mut dyn Probe,
    trials: usize,
    seed: u64,
) -> Result<(CheckReport, Vec<usize>)> {
    check_shape(tree.n(), probe, 0)?;
    let candidates = models
        .iter()
        .map(|m| Replay::with_arithmetic(tree, m))
        .collect();
    let (mut report, left) = check_replays(candidates, probe, trials, seed, 0)?;
    report.model = left.first().map(|&k| models[k].clone());
    Ok((report, left))
}

fn check_shape(n: usize, probe: &dyn Probe, row: usize) -> Result<()> {
    if row >= probe.max_batch().max(1) {
        return Err(Error::Input(format!(
            "no row {row}: this black box sums {} rows a call",
            probe.max_batch().max(1)
        )));
    }
    if n != probe.n() {
        return Err(Error::Summands(Summands {
            predicted: false,
            tree: n,
            black_box: probe.n(),
        }));
    }
    Ok(())
}

/// From this many summands a trial's replay runs beside the black box's
/// call, on another thread: below it, a thread costs more than it saves.
const OVERLAP_FROM: usize = 1 << 16;

/// Replays every candidate on the same seeded random inputs, dropping each
/// at its first mismatch; the indices returned are the candidates left.
fn check_replays(
    candidates: Vec<Replay>,
    probe: &mut dyn Probe,
    trials: usize,
    seed: u64,
    row: usize,
) -> Result<(CheckReport, Vec<usize>)> {
    if trials > MAX_TRIALS {
        return Err(Error::Input(format!(
            "{trials} trials: a check runs at most {MAX_TRIALS}"
        )));
    }
    let n = probe.n();
    let (format, result) = (probe.format(), probe.result());
    let y_format = crate::probe::second_operand(probe);
    let spread = reach(probe);
    // Each candidate returning the black box's result format, and (made once the
    // black box returns a value wider than that: Python's built-in sum of
    // float32 values returns a Python float) returning its root in f64.
    let mut candidates: Vec<(usize, Replay, Option<Replay>)> = candidates
        .into_iter()
        .enumerate()
        .map(|(k, r)| (k, r.returning(result), None))
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut scratch = Vec::new();
    let mut out = vec![0.0; row + 1];
    let starts = vec![0; row + 2];
    let mut last_failure = None;
    // Products are only asked of a black box that forms them, and only
    // when a model says how it rounds them.
    let multiplies =
        probe.as_dot().is_some() && candidates.iter().any(|(_, r, _)| r.has_products());
    let (mut input, mut y) = (Vec::new(), Vec::new());
    // Matrix instructions often flush subnormal values, which random
    // inputs never hold: the last trial of a black box that multiplies
    // operands fprev chooses holds only some.
    let flushes_asked = probe.operands().is_some() && trials >= 2;
    for trial in 0..trials {
        let kind = match Inputs::ALL[trial % Inputs::ALL.len()] {
            _ if flushes_asked && trial == trials - 1 => Inputs::Subnormal,
            kind => kind,
        };
        // Products summed in a wider accumulator leave each factor its
        // whole range ([`reach`] bounds the products' sum).
        kind.draw_summing(format, n, spread.map_or(n, |_| 1), &mut rng, &mut input);
        let weights = multiplies.then(|| {
            kind.draw_weights(y_format, spread, n, &mut rng, &mut y);
            &y
        });
        let run = |r: &Replay, scratch: &mut Vec<f64>| match weights {
            Some(y) => r.dot_with(&input, y, scratch),
            None => r.sum_with(&input, scratch),
        };
        // Each candidate's result, and its result in f64 where that
        // replay is made already.
        let replay_all = |scratch: &mut Vec<f64>| -> Vec<(f64, Option<f64>)> {
            candidates
                .iter()
                .map(|(_, narrow, wide)| {
                    (run(narrow, scratch), wide.as_ref().map(|w| run(w, scratch)))
                })
                .collect()
        };
        let call = |probe: &mut dyn Probe, out: &mut Vec<f64>| {
            call_row(
                probe,
                &input,
                weights.map(|y| y.as_slice()),
                row,
                &starts,
                out,
            )
        };
        let (got, mut replayed) = if n >= OVERLAP_FROM {
            // A large input is replayed on a second core while the black
            // box sums it: a trial then costs the slower of the two.
            std::thread::scope(|s| {
                let replaying = s.spawn(|| replay_all(&mut scratch));
                let got = call(&mut *probe, &mut out);
                let replayed = replaying.join().expect("a replay does not panic");
                got.map(|got| (got, replayed))
            })?
        } else {
            let got = call(&mut *probe, &mut out)?;
            (got, replay_all(&mut scratch))
        };
        let wider = got.is_finite() && result.round(got) != got;
        if wider {
            for ((_, narrow, wide), (_, result)) in candidates.iter_mut().zip(&mut replayed) {
                if wide.is_none() {
                    let w = narrow.clone().returning(Format::F64);
                    *result = Some(run(&w, &mut scratch));
                    *wide = Some(w);
                }
            }
        }
        let mut results = replayed.into_iter();
        candidates.retain(|(_, narrow, wide)| {
            let (narrow_result, wide_result) = results.next().expect("a result a candidate");
            let (replay, replayed) = match (wide, wide_result) {
                (Some(wide), Some(r)) if wider => (wide, r),
                _ => (narrow, narrow_result),
            };
            let same = replayed.to_bits() == got.to_bits() || (replayed.is_nan() && got.is_nan());
            if !same {
                // The input is kept only once no candidate is left: a
                // copy of 2^27 values is a GiB.
                last_failure = Some(Mismatch {
                    trial,
                    kind,
                    input: Vec::new(),
                    weights: None,
                    replayed,
                    accumulator: replay.accumulator(),
                    black_box: got,
                    against: None,
                });
            }
            same
        });
        if candidates.is_empty() {
            // The last candidate failed on this trial's input.
            let mismatch = last_failure.take().map(|m| Mismatch {
                input: std::mem::take(&mut input),
                weights: weights.cloned(),
                ..m
            });
            let report = CheckReport {
                trials: trial + 1,
                mismatch,
                accumulator: None,
                model: None,
                power: None,
            };
            return Ok((report, Vec::new()));
        }
    }
    let report = CheckReport {
        trials,
        mismatch: None,
        accumulator: candidates.first().map(|(_, r, _)| r.accumulator()),
        model: None,
        power: None,
    };
    Ok((report, candidates.iter().map(|(k, _, _)| *k).collect()))
}

/// The black box's sum of `input` (times `weights`, where given, for one
/// that multiplies) in row `row`: the input goes into every row up to
/// `row`; `starts` holds `row + 2` zeros.
fn call_row(
    probe: &mut dyn Probe,
    input: &[f64],
    weights: Option<&[f64]>,
    row: usize,
    starts: &[usize],
    out: &mut [f64],
) -> Result<f64> {
    if let Some(y) = weights
        && let Some(dot) = probe.as_dot()
    {
        if row == 0 {
            dot.dot(input, y, out)?;
        } else {
            dot.dot(&input.repeat(row + 1), y, out)?;
        }
    } else if row == 0 {
        probe.sum(input, out)?;
    } else {
        let batch = crate::probe::Batch {
            base: input,
            starts,
            positions: &[],
            values: &[],
            continues: false,
        };
        probe.sum_batch(&batch, out)?;
    }
    Ok(out[row])
}

/// What a confirmation's inputs told its model from: the model's nearest
/// alternatives ([`nearest_models`]), each either told apart by an input
/// on which the two replays differ and the black box gave the model's
/// bits, or not told apart by any input searched.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Power {
    /// Alternatives an input told apart.
    pub distinguished: Vec<Alternative>,
    /// Alternatives no input searched told apart: the check cannot rule
    /// them out.
    pub undistinguished: Vec<Alternative>,
    /// Calls of the black box the inputs that told them apart took.
    pub calls: usize,
}

impl Power {
    /// How many alternatives were told apart, one input each.
    pub fn told(&self) -> usize {
        self.distinguished
            .iter()
            .map(|a| match a {
                Alternative::Regroupings { count } => *count,
                _ => 1,
            })
            .sum()
    }
}

/// One of a tree and model's nearest alternatives.
#[derive(Clone, Debug, PartialEq)]
pub enum Alternative {
    /// The same tree, another model ([`nearest_models`]).
    Model(Arithmetic),
    /// The same model, the tree regrouped at one node ([`grouping`]).
    Grouping {
        /// The node regrouped, by its leaves.
        node: NodeKey,
        /// Its subtree so regrouped, as text (empty where long).
        text: String,
    },
    /// The same model, the tree regrouped at any one node, each way
    /// ([`grouping_sites`]) searched and told apart on its own input: so
    /// many of them.
    Regroupings {
        /// How many.
        count: usize,
    },
    /// Regroupings of a tree a formula gives whose nodes were not built
    /// ([`BUILT_FOR_POWER`]): none was tried.
    Unbuilt {
        /// The tree's summands.
        n: usize,
    },
    /// Groups of differing nodes whose edges were not moved, past
    /// [`GROUPS`] of one kind ([`nearest_groups`]).
    GroupsNotTried {
        /// How many groups.
        left: usize,
    },
    /// Regroupings at one node the search did not try: all but each
    /// `every`-th of the tree's `of` along [`grouping_sites`]' list
    /// (`every` 0: none was tried), and why.
    NotTried {
        /// How many were not tried.
        untried: usize,
        /// How many the tree has.
        of: usize,
        /// Which were: the first and each `every`-th after it.
        every: usize,
        /// Why the others were not.
        why: Untried,
    },
}

/// Why regroupings were not tried ([`Alternative::NotTried`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Untried {
    /// Their work is bounded ([`GROUPING_WORK`]).
    Work,
    /// A compensated model's chain would end at the node searched, which
    /// in the tree it does not.
    Compensated,
}

/// `2nd`, `8th`, `32nd`.
fn ordinal(k: usize) -> String {
    let suffix = match (k % 100, k % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    format!("{k}{suffix}")
}

/// `f32 toward-zero`; `the node of 3 summands from x4 added as ((4+5)+6)`;
/// `the tree regrouped at one node, each of 15 ways`; `3582 of the tree's
/// 4094 regroupings at one node, all but every 8th by node in post-order:
/// not tried, …`.
impl std::fmt::Display for Alternative {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Alternative::Model(m) => write!(f, "{m}"),
            Alternative::Grouping { node, text } if text.is_empty() => {
                write!(f, "{node} regrouped")
            }
            Alternative::Grouping { node, text } => write!(f, "{node} added as {text}"),
            Alternative::Regroupings { count } => {
                write!(f, "the tree regrouped at one node, each of {count} ways")
            }
            Alternative::Unbuilt { n } => write!(
                f,
                "the tree regrouped at one node, any way: none tried, the nodes of a \
                 tree of {n} summands not built"
            ),
            Alternative::GroupsNotTried { left } => write!(
                f,
                "{left} more groups of nodes that differ from the default, each changed: \
                 not tried"
            ),
            Alternative::NotTried {
                of,
                every,
                untried,
                why,
            } => {
                let why = match why {
                    Untried::Work => "the search's work bounded",
                    Untried::Compensated => "a compensated chain's steps are searched only whole",
                };
                match every {
                    0 => write!(
                        f,
                        "the tree regrouped at one node, any of {of} ways: none tried, {why}"
                    ),
                    _ => write!(
                        f,
                        "{untried} of the tree's {of} regroupings at one node, all but every \
                         {} by node in post-order: not tried, {why}",
                        ordinal(*every)
                    ),
                }
            }
        }
    }
}

/// The work, in summands, the regroupings' search may take in all, at
/// most: each tried costs the black box's `n` (its call, the claimed
/// replay) and its node's summands four times (copied, compiled) and
/// twice a draw, at least [`GROUPING_DRAWS`] of them, more while half the
/// work is left ([`power`]); where all would take more, every `every`-th
/// is tried ([`Alternative::NotTried`]). The longest subtree text an
/// alternative names.
const GROUPING_WORK: usize = 1 << 24;
const GROUPING_DRAWS: usize = 2;
const GROUPING_TEXT: usize = 60;

/// How a tree regroups at one node ([`grouping_sites`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// A node adding `a` to an addition `c + d` adds `(a + c) + d`; a
    /// fused node adds its first two children first.
    Regroup,
    /// A fused node's fused child hands its last child up to it.
    Up,
    /// A fused node hands its first other child down to its fused child.
    Down,
}

/// A node of a tree and its subtree changed there, as trees of their own
/// over the node's summands (numbered `0..` in their order: `leaves`).
pub struct Grouping {
    /// The node, by its leaves.
    pub node: NodeKey,
    /// The summands under it.
    pub leaves: Vec<usize>,
    /// Its subtree.
    pub subtree: SummationTree,
    /// Its subtree changed at its root.
    pub regrouped: SummationTree,
    /// Three summands (of the subtree's), one in each of three parts the
    /// change makes meet otherwise: given `v`, `-v` and a small `r`, the
    /// subtree or its change adds `v` and `-v` first and keeps `r`, the
    /// other rounds `r` to the scale of `v` ([`Teller::tell`]).
    pub parts: [usize; 3],
}

/// Whether `v`'s children are two and one of them is an addition of two:
/// that one's place.
fn binary_child(t: &SummationTree, v: NodeIndex) -> Option<usize> {
    let ch = t.children(v);
    (ch.len() == 2)
        .then(|| ch.iter().position(|&c| t.children(c).len() == 2))
        .flatten()
}

/// The first fused child of a fused node `v`, where it has one.
fn fused_child(t: &SummationTree, v: NodeIndex) -> Option<usize> {
    let ch = t.children(v);
    (ch.len() > 2)
        .then(|| ch.iter().position(|&c| t.children(c).len() > 2))
        .flatten()
}

/// Every way `tree` regroups at one node, by node in post-order: a node
/// adding to an addition of two, or a fused node, regrouped
/// ([`Change::Regroup`]); a fused node with a fused child, a child moved
/// between the two either way ([`Change::Up`], [`Change::Down`]), as a
/// tensor core's chain of fused nodes taking one term early or late.
pub fn grouping_sites(tree: &SummationTree) -> Vec<(NodeIndex, Change)> {
    let mut sites = Vec::new();
    for v in tree.post_order() {
        if fused_child(tree, v).is_some() {
            sites.push((v, Change::Up));
            sites.push((v, Change::Down));
        }
        if tree.children(v).len() > 2 || binary_child(tree, v).is_some() {
            sites.push((v, Change::Regroup));
        }
    }
    sites
}

/// `tree`'s subtree at `v` and that subtree changed at its root as
/// `change` says; `keys` are the tree's ([`NodeKey::all`]).
pub fn grouping(tree: &SummationTree, keys: &[NodeKey], v: NodeIndex, change: Change) -> Grouping {
    let subtree = tree.subtree(v);
    let root = subtree.root();
    let ch = subtree.children(root).to_vec();
    // The child of the root that is not built as it is.
    let changed = match change {
        Change::Regroup => binary_child(&subtree, root).map(|k| ch[k]),
        Change::Up | Change::Down => fused_child(&subtree, root).map(|k| ch[k]),
    };
    let mut b = TreeBuilder::new(subtree.n());
    let mut new: Vec<Option<NodeIndex>> = vec![None; subtree.graph().node_count()];
    for i in 0..subtree.n() {
        new[subtree.leaf(i).index()] = Some(b.leaf(i));
    }
    let at = |new: &[Option<NodeIndex>], c: NodeIndex| new[c.index()].expect("built");
    for node in subtree.post_order() {
        if Some(node) == changed || node == root {
            continue;
        }
        let children: Vec<NodeIndex> = subtree
            .children(node)
            .iter()
            .map(|&c| at(&new, c))
            .collect();
        new[node.index()] = Some(b.sum(&children));
    }
    let top = match (change, changed) {
        (Change::Regroup, Some(inner)) => {
            let a = *ch.iter().find(|&&c| c != inner).expect("two children");
            let (c, d) = (subtree.children(inner)[0], subtree.children(inner)[1]);
            let ac = b.sum(&[at(&new, a), at(&new, c)]);
            b.sum(&[ac, at(&new, d)])
        }
        (Change::Regroup, None) => {
            let pair = b.sum(&[at(&new, ch[0]), at(&new, ch[1])]);
            let mut rest = vec![pair];
            rest.extend(ch[2..].iter().map(|&c| at(&new, c)));
            b.sum(&rest)
        }
        (Change::Up, Some(w)) => {
            let inner = subtree.children(w);
            let (moved, kept) = inner.split_last().expect("a fused child");
            let kept: Vec<NodeIndex> = kept.iter().map(|&c| at(&new, c)).collect();
            let w2 = b.sum(&kept);
            let mut top = Vec::with_capacity(ch.len() + 1);
            for &c in &ch {
                match c == w {
                    true => top.extend([w2, at(&new, *moved)]),
                    false => top.push(at(&new, c)),
                }
            }
            b.sum(&top)
        }
        (Change::Down, Some(w)) => {
            let moved = *ch.iter().find(|&&c| c != w).expect("three children");
            let mut inner: Vec<NodeIndex> =
                subtree.children(w).iter().map(|&c| at(&new, c)).collect();
            inner.push(at(&new, moved));
            let w2 = b.sum(&inner);
            let top: Vec<NodeIndex> = ch
                .iter()
                .filter(|&&c| c != moved)
                .map(|&c| if c == w { w2 } else { at(&new, c) })
                .collect();
            b.sum(&top)
        }
        (Change::Up | Change::Down, None) => unreachable!("a site has a fused child"),
    };
    let regrouped = b.finish(top).expect("the same summands");
    // Regrouped, `a` meets `c` before `d`; the fused root's first two
    // children meet first; moved up, the child meets the fused child's
    // first one at the root, not inside; moved down, the child meets it
    // inside, not at the root.
    let first = |c: NodeIndex| subtree.node(c).min_leaf;
    let others: Vec<NodeIndex> = ch.iter().copied().filter(|&c| Some(c) != changed).collect();
    let parts = match (change, changed) {
        (Change::Regroup, Some(inner)) => {
            let (c, d) = (subtree.children(inner)[0], subtree.children(inner)[1]);
            [first(others[0]), first(c), first(d)]
        }
        (Change::Regroup, None) => [first(ch[0]), first(ch[1]), first(ch[2])],
        (Change::Up, Some(w)) => {
            let inner = subtree.children(w);
            [
                first(inner[0]),
                first(inner[inner.len() - 1]),
                first(others[0]),
            ]
        }
        (Change::Down, Some(w)) => [
            first(subtree.children(w)[0]),
            first(others[0]),
            first(others[1]),
        ],
        (Change::Up | Change::Down, None) => unreachable!("a site has a fused child"),
    };
    Grouping {
        node: keys[v.index()],
        leaves: tree.leaves_under(v),
        subtree,
        regrouped,
        parts,
    }
}

/// Which of a tree's regroupings at one node ([`grouping_sites`]) the
/// search tries: each `every`-th along the list (1: all), so that they
/// take at most [`GROUPING_WORK`]; 0 where none fits.
fn grouping_stride(tree: &SummationTree, sites: &[(NodeIndex, Change)]) -> usize {
    let cost =
        |&(v, _): &(NodeIndex, Change)| tree.n() + (4 + 2 * GROUPING_DRAWS) * tree.node(v).size;
    let mut every = 1;
    while every <= sites.len() {
        let work: usize = sites.iter().step_by(every).map(cost).sum();
        if work <= GROUPING_WORK {
            return every;
        }
        every *= 2;
    }
    0
}

/// `text` (a tree's over summands `0..`) with each summand `i` written as
/// `leaves[i]`; empty where longer than [`GROUPING_TEXT`].
fn relabelled(text: &str, leaves: &[usize]) -> String {
    if text.len() > GROUPING_TEXT {
        return String::new();
    }
    let mut out = String::new();
    let mut digits = String::new();
    for ch in text.chars().chain(std::iter::once(' ')) {
        if ch.is_ascii_digit() {
            digits.push(ch);
            continue;
        }
        if let Ok(i) = digits.parse::<usize>() {
            out += &leaves[i].to_string();
        }
        digits.clear();
        if ch != ' ' {
            out.push(ch);
        }
    }
    out
}

/// The nearest alternatives of `model` on a tree (`fused`: with fused
/// nodes): for each kind of node it has (its default, each other one),
/// the same model with those nodes rounding the other way, keeping one
/// bit more or one fewer below a fused node's largest term (where the tree
/// has fused nodes), aligning its products the other way (at their
/// factors' exponents or their own), or in the
/// next narrower or wider format; and where the model says how the
/// black box rounds its inputs (of `format`) or products, the next way
/// either side ([`product_neighbours`], [`input_neighbours`]); each once,
/// the model itself never.
pub fn nearest_models(model: &Arithmetic, fused: bool, format: Format) -> Vec<Arithmetic> {
    use crate::arith::{MAX_FUSED_BITS, NodeArithmetic, Rounding};
    let multiplies = model.products.is_some();
    let neighbours = |a: NodeArithmetic| -> Vec<NodeArithmetic> {
        let mut out = vec![NodeArithmetic {
            rounding: match a.rounding {
                Rounding::NearestEven => Rounding::TowardZero,
                Rounding::TowardZero => Rounding::NearestEven,
            },
            ..a
        }];
        if fused && !a.compensated {
            let bits = a.fused_bits.unwrap_or(FUSED_FRACTION_BITS as u32);
            for b in [bits - 1, bits + 1] {
                if (1..=MAX_FUSED_BITS).contains(&b) {
                    out.push(NodeArithmetic {
                        fused_bits: Some(b),
                        ..a
                    });
                }
            }
        }
        // A window aligned at its products' factors, or at the products
        // themselves: a tensor core's and the plain fused model.
        if a.aligns_factors.is_some() {
            out.push(NodeArithmetic {
                aligns_factors: None,
                ..a
            });
        } else if multiplies && a.fused_bits.is_some() {
            out.push(NodeArithmetic {
                aligns_factors: Some(format),
                ..a
            });
        }
        let ladder: &[Format] = match a.fused_bits {
            Some(_) => &FUSED_LADDER,
            None => &LADDER,
        };
        if let Some(at) = ladder.iter().position(|f| *f == a.format) {
            let near = [
                at.checked_sub(1),
                Some(at + 1).filter(|&k| k < ladder.len()),
            ];
            out.extend(near.into_iter().flatten().map(|k| NodeArithmetic {
                format: ladder[k],
                ..a
            }));
        }
        out
    };
    let mut kinds = vec![model.default];
    for a in model.nodes.values() {
        if !kinds.contains(a) {
            kinds.push(*a);
        }
    }
    let mut models: Vec<Arithmetic> = Vec::new();
    let mut push = |m: Arithmetic| {
        if m != *model && !models.contains(&m) {
            models.push(m);
        }
    };
    for (k, kind) in kinds.iter().enumerate() {
        for other in neighbours(*kind) {
            let mut m = model.clone();
            if k == 0 {
                m.default = other;
            } else {
                for a in m.nodes.values_mut().filter(|a| *a == kind) {
                    *a = other;
                }
            }
            // A node changed into the default is no longer named.
            let default = m.default;
            m.nodes.retain(|_, a| *a != default);
            push(m);
        }
    }
    if let Some(products) = &model.products {
        let wide = std::iter::once(&model.default)
            .chain(model.nodes.values())
            .any(|a| a.format == Format::X87);
        for p in product_neighbours(products.default, model.default.format, format, wide) {
            push(Arithmetic {
                products: Some(crate::arith::Products {
                    default: p,
                    ..products.clone()
                }),
                ..model.clone()
            });
        }
        if !products.leaves.is_empty() {
            push(Arithmetic {
                products: Some(crate::arith::Products {
                    default: products.default,
                    leaves: Default::default(),
                }),
                ..model.clone()
            });
        }
    }
    if let Some(inputs) = model.inputs {
        for i in input_neighbours(inputs, format) {
            push(Arithmetic {
                inputs: i,
                ..model.clone()
            });
        }
    }
    models
}

/// Where the black box takes products of operands too narrow to round
/// alone (fp8), the exponent of the largest `y` a trial may multiply its
/// inputs by, every partial sum of `n` such products staying finite in its
/// accumulator ([`Inputs::draw_weights`]); `None` elsewhere.
fn reach(probe: &dyn Probe) -> Option<i32> {
    let Summand::Product(a, _) = crate::probe::summand(probe) else {
        return None;
    };
    // Each `x` may reach its format's largest value.
    let room = probe.accumulator().max_finite() / (probe.n().max(1) as f64 * a.max_finite());
    Some(room.log2().floor() as i32)
}

/// Formats a node, an input or a product rounds to, narrowest first.
const LADDER: [Format; 5] = [
    Format::Bf16,
    Format::F16,
    Format::F32,
    Format::F64,
    Format::X87,
];

/// Formats a fused node rounds its sum to, narrowest first: E8M13 (f32's
/// range, 14 bits) beside f32, as Ada's and Hopper's fp8 instructions round.
const FUSED_LADDER: [Format; 6] = [
    Format::Bf16,
    Format::F16,
    Format::E8m13,
    Format::F32,
    Format::F64,
    Format::X87,
];

/// The ways next to `product` of passing a product of two values of
/// `format` to its addition, in a model whose nodes add in `acc`: along
/// rounded to bf16, f16, f32, f64, x87 (where a node is `wide`, x87: only
/// x87 nodes take a product's 64 bits), then exact, the one either side,
/// and for an exact product, one rounded to `acc` (a multiply apart from
/// the add); none that holds every such product whole where `product`
/// does too (f32 products in f64 are exact), which no input tells apart.
fn product_neighbours(product: Product, acc: Format, format: Format, wide: bool) -> Vec<Product> {
    let whole = |p: Product| match p {
        Product::Exact => true,
        Product::Rounded(f) => f.precision() >= 2 * format.precision(),
    };
    let rungs: Vec<Product> = LADDER
        .iter()
        .filter(|&&f| wide || f != Format::X87)
        .map(|&f| Product::Rounded(f))
        .chain([Product::Exact])
        .collect();
    let mut out = Vec::new();
    if let Some(at) = rungs.iter().position(|p| *p == product) {
        out.extend(at.checked_sub(1).map(|k| rungs[k]));
        out.extend(rungs.get(at + 1).copied());
    }
    if product == Product::Exact {
        out.push(Product::Rounded(acc));
    }
    out.retain(|p| *p != product && !(whole(*p) && whole(product)));
    out.dedup();
    out
}

/// The ways next to rounding inputs of `format` to `inputs` first: using
/// them as given, or rounding them to the next narrower or wider format,
/// where that rounds them at all.
fn input_neighbours(inputs: Format, format: Format) -> Vec<Option<Format>> {
    let mut out = vec![None];
    if let Some(at) = LADDER.iter().position(|f| *f == inputs) {
        let near = [at.checked_sub(1), Some(at + 1)];
        out.extend(
            near.into_iter()
                .flatten()
                .filter_map(|k| LADDER.get(k))
                .filter(|f| f.precision() < format.precision())
                .map(|&f| Some(f)),
        );
    }
    out
}

/// Groups of differing nodes whose alternatives are searched, at most,
/// for each kind of node a model has besides its default.
const GROUPS: usize = 16;

/// The nearest alternatives of a model whose nodes differ (a SIMD body in
/// f32 and its tail in f64), each with the node its search is rooted at:
/// for each group of nodes (connected, of one kind other than the
/// default), up to [`GROUPS`] of a kind, the group in the default's
/// arithmetic, and its edges moved by one node: its top node in the
/// default's, or its parent in the group's; its lowest nodes in the
/// default's, or their inner children in the group's. The root is the
/// parent of the highest node changed (a node rounding as its parent does
/// changes nothing until another term meets it), or the tree's root. Also
/// how many groups were left out.
pub fn nearest_groups(
    model: &Arithmetic,
    tree: &SummationTree,
) -> (Vec<(Arithmetic, NodeIndex)>, usize) {
    if model.is_uniform() {
        return (Vec::new(), 0);
    }
    let keys = NodeKey::all(tree);
    let at = |v: NodeIndex| model.at(&keys[v.index()]);
    let differs = |v: NodeIndex| !tree.children(v).is_empty() && at(v) != model.default;
    // Each differing node's group, by its top node: parents first.
    let mut top: Vec<Option<NodeIndex>> = vec![None; tree.graph().node_count()];
    let mut groups: Vec<(NodeIndex, Vec<NodeIndex>)> = Vec::new();
    let mut order = tree.post_order();
    order.reverse();
    for &v in &order {
        if !differs(v) {
            continue;
        }
        let joined = tree
            .parent(v)
            .filter(|&p| differs(p) && at(p) == at(v))
            .and_then(|p| top[p.index()]);
        let t = joined.unwrap_or(v);
        top[v.index()] = Some(t);
        match groups.iter_mut().find(|(g, _)| *g == t) {
            Some((_, members)) => members.push(v),
            None => groups.push((t, vec![v])),
        }
    }
    let mut kept: Vec<(NodeIndex, Vec<NodeIndex>)> = Vec::new();
    let mut left = 0;
    for g in groups {
        match kept.iter().filter(|(t, _)| at(*t) == at(g.0)).count() < GROUPS {
            true => kept.push(g),
            false => left += 1,
        }
    }
    let above = |v: NodeIndex| tree.parent(v).unwrap_or(v);
    let mut out: Vec<(Arithmetic, NodeIndex)> = Vec::new();
    for (t, members) in &kept {
        let kind = at(*t);
        let with = |changes: &[(NodeIndex, NodeArithmetic)]| {
            let mut m = model.clone();
            for &(v, a) in changes {
                let key = keys[v.index()];
                match a == m.default {
                    true => m.nodes.remove(&key),
                    false => m.nodes.insert(key, a),
                };
            }
            m
        };
        let lowest: Vec<NodeIndex> = members
            .iter()
            .copied()
            .filter(|&v| !tree.children(v).iter().any(|c| members.contains(c)))
            .collect();
        let below: Vec<NodeIndex> = lowest
            .iter()
            .flat_map(|&v| tree.children(v))
            .copied()
            .filter(|&c| !tree.children(c).is_empty() && !differs(c))
            .collect();
        let default = model.default;
        let mut candidates = vec![
            (
                with(&members.iter().map(|&v| (v, default)).collect::<Vec<_>>()),
                above(*t),
            ),
            (with(&[(*t, default)]), above(*t)),
            (
                with(&lowest.iter().map(|&v| (v, default)).collect::<Vec<_>>()),
                above(*t),
            ),
            (
                with(&below.iter().map(|&v| (v, kind)).collect::<Vec<_>>()),
                above(*t),
            ),
        ];
        if let Some(p) = tree.parent(*t).filter(|&p| !differs(p)) {
            candidates.push((with(&[(p, kind)]), above(p)));
        }
        for (m, root) in candidates {
            if m != *model && !out.iter().any(|(o, _)| *o == m) {
                out.push((m, root));
            }
        }
    }
    (out, left)
}

/// Random inputs searched, at most, for one that tells a model from each
/// of its nearest alternatives (fewer for long inputs: see [`power`]).
pub const POWER_DRAWS: usize = 1024;

/// Seeks, for each of `model`'s nearest alternatives ([`nearest_models`]),
/// an input on which the two replays of `tree` differ (random inputs of
/// each kind, and of each with every summand positive, whose sums carry
/// past their largest term and round where cancelling ones do not), and
/// asks the black box in row `row` each such input: it must give the
/// model's bits. Then the same for each change of a group of its nodes
/// that differ ([`nearest_groups`]), and each of the tree's regroupings at
/// one node ([`grouping_sites`]), with inputs zero outside a node's
/// summands (the regroupings: every one of them where their work fits [`GROUPING_WORK`],
/// else every `every`-th, the others said not tried). Returns what was
/// told apart, and the first input the black box did not give the
/// model's bits for.
pub fn power(
    tree: &SummationTree,
    model: &Arithmetic,
    probe: &mut dyn Probe,
    seed: u64,
    row: usize,
) -> Result<(Power, Option<Mismatch>)> {
    let (format, result) = (probe.format(), probe.result());
    let multiplies = probe.as_dot().is_some() && model.products.is_some();
    // Two summands an addition takes first, for inputs made to show how
    // products are rounded.
    let pair = tree
        .post_order()
        .into_iter()
        .find_map(|v| match tree.children(v) {
            [a, b] => Some((tree.node(*a).leaf?, tree.node(*b).leaf?)),
            _ => None,
        });
    let claimed = Replay::with_arithmetic(tree, model).returning(result);
    let mut teller = Teller::new(claimed, probe, seed, row, multiplies, pair);
    let n = tree.n();
    // One alternative's replays at a time: a long tree is held twice, not
    // once an alternative. Replays are made here, not calls: about 2^21
    // additions a search, at least one draw.
    let draws = ((1 << 20) / n.max(1)).clamp(1, POWER_DRAWS);
    let models = nearest_models(model, tree.widest() > 2, format);
    for m in &models {
        let theirs = Replay::with_arithmetic(tree, m);
        let alternative = Alternative::Model(m.clone());
        if let Some(mismatch) = teller.tell(alternative, theirs, None, draws)? {
            return Ok((teller.power, Some(mismatch)));
        }
    }
    // A regrouping, or a group of nodes changed, is searched on the
    // summands of a node above it alone (the others 0), its subtree's
    // nodes named anew; a compensated step's chain would end at that
    // node, which in the tree it does not, so such a model's groups are
    // searched on the whole tree and its regroupings not at all.
    let compensated = std::iter::once(&model.default)
        .chain(model.nodes.values())
        .any(|a| a.compensated);
    let keys = NodeKey::all(tree);
    let (groups, left) = nearest_groups(model, tree);
    for (m, at) in groups.into_iter().filter(|(m, _)| !models.contains(m)) {
        let alternative = Alternative::Model(m.clone());
        let found = match compensated {
            true => teller.tell(alternative, Replay::with_arithmetic(tree, &m), None, draws)?,
            false => {
                let leaves = tree.leaves_under(at);
                let subtree = tree.subtree(at);
                let mine = Replay::with_arithmetic(&subtree, &model.restricted(&leaves));
                let theirs = Replay::with_arithmetic(&subtree, &m.restricted(&leaves));
                let above = ancestors(tree, &keys, model, at);
                let under = Under {
                    leaves: &leaves,
                    parts: None,
                    mine: &mine,
                    above: &above,
                };
                let draws = ((1 << 20) / leaves.len()).clamp(1, POWER_DRAWS);
                teller.tell(alternative, theirs, Some(under), draws)?
            }
        };
        if let Some(mismatch) = found {
            return Ok((teller.power, Some(mismatch)));
        }
    }
    if left > 0 {
        teller
            .power
            .undistinguished
            .push(Alternative::GroupsNotTried { left });
    }
    let sites = grouping_sites(tree);
    let every = match compensated {
        true => 0,
        false => grouping_stride(tree, &sites),
    };
    let tried: Vec<(NodeIndex, Change)> = match every {
        0 => Vec::new(),
        _ => sites.iter().step_by(every).copied().collect(),
    };
    for &(v, change) in &tried {
        let g = grouping(tree, &keys, v, change);
        let local = model.restricted(&g.leaves);
        let mine = Replay::with_arithmetic(&g.subtree, &local);
        let theirs = Replay::with_arithmetic(&g.regrouped, &local);
        let k = g.leaves.len();
        let draws = (GROUPING_WORK / 2 / (tried.len() * 2 * k)).clamp(GROUPING_DRAWS, POWER_DRAWS);
        let above = ancestors(tree, &keys, model, v);
        let alternative = Alternative::Grouping {
            node: g.node,
            text: match k <= GROUPING_TEXT / 3 {
                true => relabelled(&g.regrouped.to_text(), &g.leaves),
                false => String::new(),
            },
        };
        let under = Under {
            leaves: &g.leaves,
            parts: Some((g.parts, {
                let a = model.at(&g.node);
                let fused = g.subtree.children(g.subtree.root()).len() > 2;
                let window = match (a.fused_bits, fused) {
                    (Some(b), _) => b + 1,
                    (None, true) => FUSED_FRACTION_BITS as u32 + 1,
                    (None, false) => 0,
                };
                a.format.precision().max(window)
            })),
            mine: &mine,
            above: &above,
        };
        if let Some(mismatch) = teller.tell_later(alternative, theirs, under, draws)? {
            return Ok((teller.power, Some(mismatch)));
        }
    }
    if let Some(mismatch) = teller.flush()? {
        return Ok((teller.power, Some(mismatch)));
    }
    // Regroupings told apart are counted, not each named.
    let mut power = teller.power;
    let before = power.distinguished.len();
    power
        .distinguished
        .retain(|a| !matches!(a, Alternative::Grouping { .. }));
    let told = before - power.distinguished.len();
    if told > 0 {
        power
            .distinguished
            .push(Alternative::Regroupings { count: told });
    }
    if tried.len() < sites.len() {
        power.undistinguished.push(Alternative::NotTried {
            untried: sites.len() - tried.len(),
            of: sites.len(),
            every,
            why: match compensated {
                true => Untried::Compensated,
                false => Untried::Work,
            },
        });
    }
    Ok((power, None))
}

/// The arithmetic of `v`'s ancestors in `tree` under `model`, with whether
/// each is fused, from `v`'s parent up, each once where it repeats: a value
/// at `v` and 0 everywhere else reaches the root through them (rounding
/// again in the same way changes nothing).
fn ancestors(
    tree: &SummationTree,
    keys: &[NodeKey],
    model: &Arithmetic,
    v: NodeIndex,
) -> Vec<(NodeArithmetic, bool)> {
    let mut out: Vec<(NodeArithmetic, bool)> = Vec::new();
    let mut at = v;
    while let Some(p) = tree.parent(at) {
        let step = (model.at(&keys[p.index()]), tree.children(p).len() > 2);
        if out.last() != Some(&step) {
            out.push(step);
        }
        at = p;
    }
    out
}

/// A regrouping's search: the node's summands in the tree, the claimed
/// model's replay of the node's subtree, and its ancestors' arithmetic
/// ([`ancestors`]).
struct Under<'a> {
    leaves: &'a [usize],
    /// A regrouping's parts ([`Grouping::parts`]) and the most bits its
    /// node keeps of a term (its format's, a fused window's).
    parts: Option<([usize; 3], u32)>,
    mine: &'a Replay,
    above: &'a [(NodeArithmetic, bool)],
}

impl Under<'_> {
    /// A subtree's value `v` as the root has it, the rest being 0,
    /// returned in `format`.
    fn at_root(&self, mut v: f64, format: Format) -> f64 {
        for (a, fused) in self.above {
            v = match fused {
                true => a.sum(&[v, 0.0, 0.0]),
                false => a.sum(&[v, 0.0]),
            };
        }
        format.round(v)
    }
}

/// What [`power`] asks the black box with, and what it found so far.
struct Teller<'p> {
    claimed: Replay,
    /// `claimed` returning its root in f64.
    claimed_wide: Replay,
    pair: Option<(usize, usize)>,
    probe: &'p mut dyn Probe,
    seed: u64,
    row: usize,
    multiplies: bool,
    starts: Vec<usize>,
    out: Vec<f64>,
    x: Vec<f64>,
    y: Vec<f64>,
    scratch: Vec<f64>,
    power: Power,
    /// Inputs found (of regroupings) and not yet asked, asked a call at a
    /// time as rows of a batched black box.
    pending: Vec<Asked>,
    /// How many rows of one call sum as row 0 does (0: not yet measured).
    rows: usize,
    /// What one input of the black box can carry ([`crate::probe::summand`]).
    summand: Summand,
    /// The format of a product's `y` ([`crate::probe::second_operand`]).
    y_format: Format,
    /// Where products spread over the window, how far `y` reaches
    /// ([`reach`]).
    spread: Option<i32>,
    /// A regrouping's large part where inputs are too narrow to round
    /// alone: the largest product the accumulator holds with room, so
    /// that its small part lies past the window.
    big: Option<f64>,
}

/// An input that tells an alternative from the claimed model, before the
/// black box is asked: what the two replays give, returning the black
/// box's result format and (for a black box returning wider values, such
/// as Python's floats) f64.
struct Asked {
    alternative: Alternative,
    kind: Inputs,
    input: Vec<f64>,
    weights: Option<Vec<f64>>,
    /// The claimed model's result and the alternative's, in the result
    /// format.
    results: (f64, f64),
    /// The same, in f64.
    wide: (f64, f64),
}

/// Random inputs that pick a batched black box's rows summing as row 0
/// does (the same input in every row).
const ROW_TRIALS: usize = 8;

/// The most values one batched call of regroupings' inputs holds.
const BATCH_VALUES: usize = 1 << 24;

impl<'p> Teller<'p> {
    /// Tells `claimed` (a replay returning the black box's format) from
    /// alternatives by asking `probe` in row `row`, with inputs seeded by
    /// `seed`, and where it `multiplies`, weights; `pair`: two summands an
    /// addition takes first.
    fn new(
        claimed: Replay,
        probe: &'p mut dyn Probe,
        seed: u64,
        row: usize,
        multiplies: bool,
        pair: Option<(usize, usize)>,
    ) -> Self {
        let summand = crate::probe::summand(&*probe);
        let spread = reach(&*probe);
        Teller {
            y_format: crate::probe::second_operand(&*probe),
            big: spread.map(|_| summand.mask().min(probe.accumulator().mask()) / 4.0),
            summand,
            spread,
            claimed_wide: claimed.clone().returning(Format::F64),
            claimed,
            pair,
            probe,
            seed,
            row,
            multiplies,
            starts: vec![0; row + 2],
            out: vec![0.0; row + 1],
            x: Vec::new(),
            y: Vec::new(),
            scratch: Vec::new(),
            power: Power::default(),
            pending: Vec::new(),
            rows: 0,
        }
    }

    /// Searches up to `draws` random inputs for one on which `theirs` (a
    /// replay of the whole tree, or with `under`, of a node's subtree on
    /// its summands) gives other bits than the claimed model, and asks the
    /// black box that input: told apart, `alternative` is added to what
    /// was distinguished, else to what was not; the black box failing it,
    /// that mismatch.
    fn tell(
        &mut self,
        alternative: Alternative,
        theirs: Replay,
        under: Option<Under>,
        draws: usize,
    ) -> Result<Option<Mismatch>> {
        let multiplies = self.multiplies;
        let Some(asked) = self.find(alternative, theirs, under, draws, multiplies) else {
            return Ok(None);
        };
        let got = call_row(
            &mut *self.probe,
            &asked.input,
            asked.weights.as_deref(),
            self.row,
            &self.starts,
            &mut self.out,
        )?;
        self.power.calls += 1;
        Ok(self.settle(asked, got))
    }

    /// [`Teller::tell`] of a regrouping, with every weight 1 (an order is
    /// told apart by its sums): the input waits, and inputs are asked as
    /// the rows of one call where the black box has rows that sum as row
    /// 0 does. A mismatch may be an earlier input's; [`Teller::flush`]
    /// asks those left.
    fn tell_later(
        &mut self,
        alternative: Alternative,
        theirs: Replay,
        under: Under,
        draws: usize,
    ) -> Result<Option<Mismatch>> {
        let Some(asked) = self.find(alternative, theirs, Some(under), draws, false) else {
            return Ok(None);
        };
        self.pending.push(asked);
        if self.pending.len() >= self.rows()? {
            return self.flush();
        }
        Ok(None)
    }

    /// Asks the inputs waiting, in one call where they fit its rows.
    fn flush(&mut self) -> Result<Option<Mismatch>> {
        if self.pending.is_empty() {
            return Ok(None);
        }
        let asked = std::mem::take(&mut self.pending);
        let got: Vec<f64> = match asked.len() {
            1 => vec![call_row(
                &mut *self.probe,
                &asked[0].input,
                None,
                self.row,
                &self.starts,
                &mut self.out,
            )?],
            k => {
                let rows: Vec<f64> = asked.iter().flat_map(|a| a.input.iter().copied()).collect();
                let mut out = vec![0.0; k];
                self.probe.sum(&rows, &mut out)?;
                out
            }
        };
        self.power.calls += 1;
        for (a, got) in asked.into_iter().zip(got) {
            if let Some(m) = self.settle(a, got) {
                return Ok(Some(m));
            }
        }
        Ok(None)
    }

    /// How many inputs one call asks: the rows from row 0 on that give row
    /// 0's bits on [`ROW_TRIALS`] random inputs, at most [`BATCH_VALUES`]
    /// values; 1 for a black box of one row, or asked in another row.
    fn rows(&mut self) -> Result<usize> {
        if self.rows > 0 {
            return Ok(self.rows);
        }
        let n = self.probe.n();
        let most = self
            .probe
            .max_batch()
            .clamp(1, (BATCH_VALUES / n.max(1)).max(1));
        self.rows = 1;
        if most > 1 && self.row == 0 {
            let format = self.probe.format();
            let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ 0x00a1_14e5);
            let mut alike = most;
            let (mut x, mut out) = (Vec::new(), vec![0.0; most]);
            for _ in 0..ROW_TRIALS {
                Inputs::Close.draw_into(format, n, &mut rng, &mut x);
                self.probe.sum(&x.repeat(alike), &mut out[..alike])?;
                self.power.calls += 1;
                alike = out[..alike]
                    .iter()
                    .position(|v| !same_bits(*v, out[0]))
                    .unwrap_or(alike);
            }
            self.rows = alike;
        }
        Ok(self.rows)
    }

    /// An input on which `theirs` and the claimed model differ (see
    /// [`Teller::tell`]), with weights where `multiplies`; none found,
    /// `alternative` is not distinguished.
    fn find(
        &mut self,
        alternative: Alternative,
        theirs: Replay,
        under: Option<Under>,
        draws: usize,
        multiplies: bool,
    ) -> Option<Asked> {
        let (n, format, result) = (self.probe.n(), self.probe.format(), self.probe.result());
        let (summand, y_format, spread, big) = (self.summand, self.y_format, self.spread, self.big);
        // A whole tree's replays return the black box's `result`; a
        // subtree's, its root's value, which its ancestors take on.
        let theirs = match under {
            Some(_) => theirs,
            None => theirs.returning(result),
        };
        let k = under.as_ref().map_or(n, |u| u.leaves.len());
        let claimed = &self.claimed;
        // Both results of `x` (times `y`) as the root returns them in
        // `returned`.
        let both = |x: &[f64], y: &[f64], returned: Format, scratch: &mut Vec<f64>| {
            let mut run = |r: &Replay| match multiplies {
                true => r.dot_with(x, y, scratch),
                false => r.sum_with(x, scratch),
            };
            match &under {
                Some(u) => (
                    u.at_root(run(u.mine), returned),
                    u.at_root(run(&theirs), returned),
                ),
                None => (run(claimed), run(&theirs)),
            }
        };
        // The same inputs for every alternative, in the same order.
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ 0x5eed_0fb1_7500);
        let (x, y) = (&mut self.x, &mut self.y);
        let mut told = None;
        for draw in 0..draws {
            let kind = Inputs::ALL[draw % Inputs::ALL.len()];
            kind.draw_summing(format, k, spread.map_or(k, |_| 1), &mut rng, x);
            if (draw / Inputs::ALL.len()) % 2 == 1 {
                x.iter_mut().for_each(|v| *v = v.abs());
            }
            match multiplies {
                true => kind.draw_weights(y_format, spread, k, &mut rng, y),
                false => y.clear(),
            }
            // Every other draw of a regrouping is 0 but on its three parts
            // ([`Grouping::parts`]): a long chain's sum hides how its last
            // terms meet it, `v - v + r` does not.
            // The large part `v` (the input's own, or the largest product)
            // and `r` with its last bit below what the node keeps of `v`
            // (none where the inputs reach no such value).
            let v = big.map_or(x[0], |b| b.copysign(x[0]));
            let designed = under
                .as_ref()
                .and_then(|u| u.parts)
                .filter(|_| draw % 2 == 0)
                .map(|(parts, keeps)| {
                    let below = (keeps as i32 - format.precision() as i32).max(0);
                    let r = v * 2f64.powi(-below - 2 - (draw as i32 / 2) % 8) * 1.2345;
                    (parts, summand.round(r))
                })
                .filter(|&(_, r)| r != 0.0);
            if let Some((parts, r)) = designed {
                x.iter_mut().for_each(|x| *x = 0.0);
                let last = 2f64.powi(r.abs().log2().floor() as i32 + 1 - format.precision() as i32);
                let r = match (r / last) % 2.0 == 0.0 {
                    true => summand.round(r + last.copysign(r)),
                    false => r,
                };
                let [p, m, s] = parts;
                (x[p], x[m], x[s]) = (v, -v, r);
                if multiplies {
                    (y[p], y[m], y[s]) = (1.0, 1.0, 1.0);
                }
            }
            // Every other draw for a whole tree that multiplies is 0 but on
            // two summands an addition takes first, `x y` and the negated
            // product rounded to the inputs' format: their sum is what the
            // product has past that format, kept whole by an exact product
            // and cut by a rounded one.
            if let Some((i, j)) = self
                .pair
                .filter(|_| multiplies && under.is_none() && draw % 2 == 1)
            {
                let (a, b) = (x[i], y[i]);
                x.iter_mut().for_each(|x| *x = 0.0);
                (x[i], x[j], y[j]) = (a, -format.round(a * b), 1.0);
            }
            let (mine, theirs) = both(x, y, result, &mut self.scratch);
            if !same_bits(mine, theirs) {
                told = Some(kind);
                break;
            }
        }
        let Some(kind) = told else {
            self.power.undistinguished.push(alternative);
            return None;
        };
        let (input, weights) = match &under {
            Some(u) => {
                let mut full = vec![0.0; n];
                for (&i, &v) in u.leaves.iter().zip(x.iter()) {
                    full[i] = v;
                }
                let weights = multiplies.then(|| {
                    let mut ones = vec![1.0; n];
                    for (&i, &v) in u.leaves.iter().zip(y.iter()) {
                        ones[i] = v;
                    }
                    ones
                });
                (full, weights)
            }
            None => (x.clone(), multiplies.then(|| y.clone())),
        };
        let scratch = &mut self.scratch;
        let mut results = |returning: Format| {
            let claimed = match returning == result {
                true => claimed,
                false => &self.claimed_wide,
            };
            let replayed = replayed_by(claimed, &input, weights.as_deref(), scratch);
            let gives = match &under {
                Some(_) => both(x, y, returning, scratch).1,
                None if returning == result => {
                    replayed_by(&theirs, &input, weights.as_deref(), scratch)
                }
                None => replayed_by(
                    &theirs.clone().returning(returning),
                    &input,
                    weights.as_deref(),
                    scratch,
                ),
            };
            (replayed, gives)
        };
        let (results, wide) = (results(result), results(Format::F64));
        Some(Asked {
            alternative,
            kind,
            input,
            weights,
            results,
            wide,
        })
    }

    /// What the black box's answer `got` to `asked` says: the alternative
    /// told apart, not told apart (the replays differ only in what the
    /// black box does not return), or the black box failing the claimed
    /// model.
    fn settle(&mut self, asked: Asked, got: f64) -> Option<Mismatch> {
        // A black box returning a wider value than its inputs (Python's
        // floats) is compared with replays returning their root in f64.
        let wider = got.is_finite() && self.probe.result().round(got) != got;
        let (replayed, gives) = match wider {
            true => asked.wide,
            false => asked.results,
        };
        if same_bits(gives, replayed) {
            // Told apart only in the inputs' format, which it does not
            // return, or only below the node.
            self.power.undistinguished.push(asked.alternative);
            return None;
        }
        if !same_bits(got, replayed) {
            return Some(Mismatch {
                trial: self.power.calls - 1,
                kind: asked.kind,
                input: asked.input,
                weights: asked.weights,
                replayed,
                accumulator: self.claimed.accumulator(),
                black_box: got,
                against: Some((asked.alternative, gives)),
            });
        }
        self.power.distinguished.push(asked.alternative);
        None
    }
}

/// `r`'s result for `x` (times `y`, where given).
fn replayed_by(r: &Replay, x: &[f64], y: Option<&[f64]>, scratch: &mut Vec<f64>) -> f64 {
    match y {
        Some(y) => r.dot_with(x, y, scratch),
        None => r.sum_with(x, scratch),
    }
}

fn same_bits(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::{NodeArithmetic, Rounding};

    /// A fused window of products has, among its nearest models, the one
    /// aligning them the other way: a tensor core's (at the factors'
    /// exponents) beside the plain fused model, and back.
    #[test]
    fn a_fused_window_of_products_is_told_from_its_other_alignment() {
        let fused = NodeArithmetic {
            rounding: Rounding::TowardZero,
            fused_bits: Some(25),
            ..NodeArithmetic::ieee(Format::F32)
        };
        let mut plain = Arithmetic::uniform(fused);
        plain.products = Some(crate::arith::Products::from_leaves(&[]));
        let aligned = plain.aligning_factors(Format::F16);
        assert!(nearest_models(&plain, true, Format::F16).contains(&aligned));
        assert!(nearest_models(&aligned, true, Format::F16).contains(&plain));
        // A sum forms no products: no alignment to tell.
        let sum = Arithmetic::uniform(fused);
        assert!(
            !nearest_models(&sum, true, Format::F16).contains(&sum.aligning_factors(Format::F16))
        );
    }

    #[test]
    fn nearest_models_change_one_kind_of_node_one_step() {
        let tree: SummationTree = "((0+1)+(2+3))".parse().unwrap();
        let f32 = Arithmetic::uniform(NodeArithmetic::ieee(Format::F32));
        let words: Vec<String> = nearest_models(&f32, tree.widest() > 2, Format::F32)
            .iter()
            .map(|m| m.to_string())
            .collect();
        assert_eq!(words, ["f32 toward-zero", "f16", "f64"]);
        let fused: SummationTree = "((0+1+2)+3+4)".parse().unwrap();
        let kept = Arithmetic::uniform(NodeArithmetic {
            fused_bits: Some(23),
            ..NodeArithmetic::ieee(Format::F32)
        });
        let words: Vec<String> = nearest_models(&kept, fused.widest() > 2, Format::F32)
            .iter()
            .map(|m| m.to_string())
            .collect();
        for w in ["f32 fused keeping 22 bits", "f32 fused keeping 24 bits"] {
            assert!(words.iter().any(|x| x == w), "{words:?}");
        }
        // Exact products of f32 values: rounded to f32 is next to them,
        // to x87 (or f64) is the same products.
        let mut dot = f32.clone();
        dot.products = Some(crate::arith::Products::from_leaves(&[Product::Exact; 4]));
        let words: Vec<String> = nearest_models(&dot, false, Format::F32)
            .iter()
            .map(|m| m.to_string())
            .collect();
        assert!(words.iter().any(|w| w == "f32; products f32"), "{words:?}");
        assert!(
            !words.iter().any(|w| w.contains("products x87")),
            "{words:?}"
        );
    }

    #[test]
    fn regroupings_not_tried_say_which_and_why() {
        let words = |every, why| {
            let of: usize = 4094;
            let untried = of - of.div_ceil(every);
            Alternative::NotTried {
                untried,
                of,
                every,
                why,
            }
            .to_string()
        };
        assert_eq!(
            words(32, Untried::Work),
            "3966 of the tree's 4094 regroupings at one node, all but every 32nd by node in \
             post-order: not tried, the search's work bounded"
        );
        assert!(words(8, Untried::Work).contains("every 8th"));
        assert!(words(2, Untried::Work).contains("every 2nd"));
        let none = Alternative::NotTried {
            untried: 7,
            of: 7,
            every: 0,
            why: Untried::Compensated,
        };
        assert_eq!(
            none.to_string(),
            "the tree regrouped at one node, any of 7 ways: none tried, a compensated \
             chain's steps are searched only whole"
        );
    }

    #[test]
    fn groupings_regroup_one_node_over_its_own_summands() {
        let tree: SummationTree = "(((0+1)+(2+3))+4)".parse().unwrap();
        let keys = NodeKey::all(&tree);
        let sites = grouping_sites(&tree);
        // Every node that adds to an addition of two: (0+1)+(2+3) and the
        // root; (0+1) and (2+3) add leaves.
        assert_eq!(sites.len(), 2);
        let groupings: Vec<Grouping> = sites
            .iter()
            .map(|&(v, change)| grouping(&tree, &keys, v, change))
            .collect();
        for g in &groupings {
            assert_eq!(g.subtree.n(), g.leaves.len());
            assert_eq!(g.regrouped.n(), g.leaves.len());
            assert_ne!(g.subtree, g.regrouped);
        }
        let top = groupings.last().unwrap();
        assert_eq!(top.regrouped.to_text(), "(((0+1)+4)+(2+3))");
    }

    #[test]
    fn a_child_moves_between_two_fused_nodes_either_way() {
        let tree: SummationTree = "(((0+1+2)+3+4)+5+6)".parse().unwrap();
        let keys = NodeKey::all(&tree);
        let texts: Vec<(usize, Change, String)> = grouping_sites(&tree)
            .into_iter()
            .map(|(v, change)| {
                let g = grouping(&tree, &keys, v, change);
                (g.node.size, change, g.regrouped.to_text())
            })
            .collect();
        for want in [
            (5, Change::Up, "((0+1)+2+3+4)"),
            (5, Change::Down, "((0+1+2+3)+4)"),
            (7, Change::Up, "(((0+1+2)+3)+4+5+6)"),
            (7, Change::Down, "(((0+1+2)+3+4+5)+6)"),
        ] {
            assert!(
                texts.iter().any(|(s, c, t)| (*s, *c, t.as_str()) == want),
                "{want:?}: {texts:?}"
            );
        }
    }

    #[test]
    fn an_input_telling_the_model_from_its_neighbour_refutes_a_wrong_model() {
        let opts = crate::probe::ProbeOptions {
            n: Some(64),
            ..Default::default()
        };
        let mut bb = crate::open("native:pairwise", &opts).unwrap();
        let tree = crate::Order::Pairwise.tree(64);
        let right = Arithmetic::uniform(NodeArithmetic::ieee(Format::F32));
        let (power, mismatch) = power(&tree, &right, &mut bb, 1, 0).unwrap();
        assert!(mismatch.is_none());
        assert!(power.undistinguished.is_empty(), "{power:?}");
        assert_eq!(power.calls, power.told());
        // Every node regrouped: one way at each of the 63 but the 32 that
        // add two leaves.
        assert!(
            power
                .distinguished
                .contains(&Alternative::Regroupings { count: 31 })
        );
        let wrong = Arithmetic::uniform(NodeArithmetic {
            rounding: Rounding::TowardZero,
            ..NodeArithmetic::ieee(Format::F32)
        });
        let (_, mismatch) = super::power(&tree, &wrong, &mut bb, 1, 0).unwrap();
        let m = mismatch.expect("the black box rounds to nearest");
        assert_eq!(m.against.unwrap().0, Alternative::Model(right.clone()));
        // The wrong tree with the right model: a regrouping refutes it.
        let chain = crate::Order::Sequential.tree(64);
        let (_, mismatch) = super::power(&chain, &right, &mut bb, 1, 0).unwrap();
        assert!(mismatch.is_some());
    }

    fn binades(x: &[f64]) -> i32 {
        let e = |v: &f64| v.abs().log2().floor() as i32;
        x.iter().map(e).max().unwrap() - x.iter().map(e).min().unwrap()
    }

    #[test]
    fn the_input_kinds_are_what_they_claim() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for format in Format::ALL {
            for n in [3, 64, 1000] {
                for kind in Inputs::ALL {
                    let x = kind.draw(format, n, &mut rng);
                    assert_eq!(x.len(), n);
                    // e4m3 cannot hold 1000 normal values without
                    // overflowing their sum.
                    let normal = format != Format::E4m3 || n < 1000;
                    assert!(
                        x.iter().all(|v| format.round(*v) == *v
                            && (!normal || v.abs() >= format.min_normal())
                            && v.abs() * n as f64 <= format.max_finite()),
                        "{format} {kind} n = {n}"
                    );
                }
                let close = Inputs::Close.draw(format, n, &mut rng);
                assert!(binades(&close) <= 7, "{format} n = {n}");
            }
        }
        let wide = Inputs::Wide.draw(Format::F32, 1000, &mut rng);
        assert!(binades(&wide) >= 2 * 24, "{}", binades(&wide));
        let cancelling = Inputs::Cancelling.draw(Format::F64, 1000, &mut rng);
        let total: f64 = cancelling.iter().sum();
        let scale: f64 = cancelling.iter().map(|v| v.abs()).sum();
        assert!(total.abs() < scale * 1e-12, "{total} against {scale}");
    }
}
