//! The second question, once the order is known: what does each node
//! compute? (docs/ALGORITHMS.md, Arithmetic.)
//!
//! Masked inputs are blind to it by design: every partial sum they make is
//! a small integer, exact in any format. So this asks differently, one
//! node `v` at a time, with three nonzero summands: `S` at a leaf under
//! `v`'s left child, `d` under its right child, and `-S` at a leaf under a
//! sibling of `v` (another child of `v`'s parent). Every other summand is
//! 0, so every node adds exactly except `v`, which rounds `S + d`; the
//! parent cancels `S` exactly and the black box answers what `v` kept of
//! `d`:
//!
//! - **precision**: `d = S 2^-p` survives when `v` keeps more than `p`
//!   bits, whatever its rounding, so a search over the formats' precisions
//!   names `v`'s format in two queries;
//! - **rounding**: `d = 1.5 ulp` of `S` in that format, halfway between
//!   two values, comes back as 2 ulp when `v` rounds to nearest (ties to
//!   even) and as 1 ulp when it truncates;
//! - **a fused node's window**: `S`, `S 2^-q` and `-S` in three of its
//!   children; the largest `q` that survives the alignment is the number of
//!   bits it keeps below its largest term (the accumulator's fraction bits
//!   and its extra bits).
//!
//! A node that keeps more bits than any format (every `d` survives) is not
//! a rounded addition: a compensated (Kahan, Neumaier) or exact sum, named
//! as such rather than given a model. The root has no sibling, so its
//! arithmetic is chosen by replay.
//!
//! Queries cost calls, so the whole tree is not asked first: a sample of
//! nodes evenly spaced along the post-order, with the boundaries between
//! differing samples found by bisection (a SIMD body in f32 and its tail in
//! f64 are two runs), gives a model that is tried by replay on random
//! inputs; every node is asked only when that replay fails. A model is
//! returned only once a replay with it matched the black box bit for bit
//! on every trial; when none does, a black box closer to the exact sum
//! than its rounded additions is named as a compensated sum.
//!
//! Masked inputs assume additions that round to nearest: a black box that
//! truncates has its order revealed wrongly or not at all, so a model with
//! truncating nodes comes from an order known otherwise (a replayed tree).
//!
//! Its parts: `asker` puts the questions to one node, `search` picks the
//! nodes (and products) asked, `model` makes a model of their answers,
//! `confirm` replays it with each arithmetic the root may have, `products`
//! asks a black box's products, `packing` puts several product questions
//! in one input, `compensated` tells a compensated sum, and
//! `confirmed` joins the order's confirmation and the arithmetic.

mod asker;
mod compensated;
mod confirm;
mod confirmed;
mod model;
mod packing;
mod products;
mod search;

pub(super) use compensated::closer_than_plain;
pub use compensated::order_depends_on_values;
pub use confirmed::{Confirmed, confirm_arithmetic};

use crate::arith::{Arithmetic, NodeArithmetic};
use crate::check::CheckReport;
use crate::error::{Error, Fault, Result, Summands};
use crate::format::Format;
use crate::probe::Probe;
use crate::tree::SummationTree;

use asker::Asker;
use compensated::errors_on_swamped_summands;
use search::{reveal_products, search};

/// How the arithmetic was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Some nodes were asked, the rest follow the runs between them.
    Sampled,
    /// Every node below the root was asked.
    EveryNode,
}

/// What the arithmetic reveal found, and what it cost.
#[derive(Clone, Debug)]
pub struct ArithmeticRevelation {
    /// The model, confirmed: a replay with it matched every trial.
    pub model: Arithmetic,
    /// How it was found.
    pub method: Method,
    /// Nodes asked one by one.
    pub nodes_asked: usize,
    /// Products asked one by one (of a black box that multiplies).
    pub products_asked: usize,
    /// Calls of the black box, queries and replay trials together.
    pub calls: u64,
    /// The replay that confirmed it.
    pub confirmation: CheckReport,
}

/// Options of the arithmetic reveal.
#[derive(Clone, Copy, Debug)]
pub struct ArithOptions {
    /// Random inputs each candidate model is replayed on.
    pub trials: usize,
    /// Seed of those inputs.
    pub seed: u64,
    /// Ask every node instead of a sample: the model is then known node for
    /// node, not only where a replay on random inputs can tell (a node in
    /// f64 that truncates and one that rounds to nearest seldom differ
    /// after the result is rounded to f32).
    pub every_node: bool,
    /// Plain additions in this format already replayed the black box's
    /// bits on `trials` random inputs (the order's own confirmation): a
    /// sample that says every node adds so needs no second replay.
    pub confirmed_plain: Option<Format>,
}

impl Default for ArithOptions {
    fn default() -> Self {
        ArithOptions {
            trials: crate::check::CONFIRM_TRIALS,
            seed: 1,
            every_node: false,
            confirmed_plain: None,
        }
    }
}

impl ArithOptions {
    /// The options of an arithmetic reveal that follows the order's
    /// confirmation in plain additions (`report`, over `trials` inputs):
    /// that replay stands for the model's when the sample says every node
    /// adds so, and the model's own replay uses as many inputs.
    pub fn after(report: &CheckReport, trials: usize) -> Self {
        ArithOptions {
            trials,
            confirmed_plain: report
                .mismatch
                .is_none()
                .then_some(report.accumulator)
                .flatten(),
            ..ArithOptions::default()
        }
    }
}

/// The formats a node may round to, narrowest first.
const FORMATS: [Format; 5] = [
    Format::Bf16,
    Format::F16,
    Format::F32,
    Format::F64,
    Format::X87,
];

/// Finds what each node of `tree`, the black box's revealed order,
/// computes, and confirms it by replay.
///
/// Fails with [`Error::BlackBox`] when a node's answers fit no rounded
/// addition, when the black box is closer to the exact sum than any
/// rounded additions in its order (a compensated sum), or when no model
/// reproduces its bits; the message says which.
pub fn reveal_arithmetic(
    probe: &mut dyn Probe,
    tree: &SummationTree,
    opts: &ArithOptions,
) -> Result<ArithmeticRevelation> {
    reveal_with_parts(probe, tree, None, opts, false)
}

/// [`reveal_arithmetic`] of a tree a formula gives, with each node's part
/// of it (`parts`, from [`Formula::parts`](crate::formula::Formula::parts)):
/// where the sample's model fails, a few nodes of each part are asked
/// (the first and the last), and a part whose nodes answered alike is
/// taken to add alike throughout, before every node is asked. A kernel
/// whose plain and compensated additions alternate every 64 nodes (XLA's
/// vectorised sum) is then found in a few calls a part, at any size; the
/// model is returned only once a replay confirmed it, as always.
pub fn reveal_arithmetic_by_parts(
    probe: &mut dyn Probe,
    tree: &SummationTree,
    parts: &[u32],
    opts: &ArithOptions,
) -> Result<ArithmeticRevelation> {
    parts_fit(tree, parts)?;
    reveal_with_parts(probe, tree, Some(parts), opts, false)
}

/// Whether `parts` gives a part to each node of `tree`.
fn parts_fit(tree: &SummationTree, parts: &[u32]) -> Result<()> {
    match parts.len() == tree.graph().node_count() {
        true => Ok(()),
        false => Err(Error::Input(format!(
            "{} parts for a tree of {} nodes",
            parts.len(),
            tree.graph().node_count()
        ))),
    }
}

/// With `with_products`, a black box that multiplies has a sample that
/// says every node adds in plain IEEE additions replayed only with its
/// products ([`confirm_arithmetic`]).
fn reveal_with_parts(
    probe: &mut dyn Probe,
    tree: &SummationTree,
    parts: Option<&[u32]>,
    opts: &ArithOptions,
    with_products: bool,
) -> Result<ArithmeticRevelation> {
    if tree.n() != probe.n() {
        return Err(Error::Summands(Summands {
            predicted: false,
            tree: tree.n(),
            black_box: probe.n(),
        }));
    }
    let fallback = NodeArithmetic::ieee(probe.accumulator());
    let mut asker = Asker::new(probe, tree)?;
    let mut leaves = products::LeafAsker::new(&mut *asker.probe, tree, &asker.keys);
    let inputs = leaves.inputs()?;
    let input_calls = leaves.calls;
    let multiplies = asker.probe.as_dot().is_some();
    let with_products = with_products && multiplies;
    let outcome = search(
        &mut asker,
        tree,
        fallback,
        inputs,
        parts,
        opts,
        with_products,
    );
    // Answers that fit no rounded addition, or a model that replays
    // nothing: a compensated sum is named as such.
    let unexplained = match outcome {
        Ok(Ok(mut found)) => {
            found.calls += input_calls;
            if let Some(dot) = asker.probe.as_dot() {
                reveal_products(dot, tree, &asker.keys, &mut found, opts)?;
            }
            return Ok(found);
        }
        Ok(Err(model)) => Error::BlackBox(Fault::NoModel { model }),
        Err(e) if matches!(e.plain(), Error::BlackBox(_)) => e,
        Err(e) => return Err(e),
    };
    // Against plain additions in the format it declares.
    let plain = Arithmetic::uniform(fallback);
    let (error, plain_error) = errors_on_swamped_summands(tree, &plain, asker.probe)?;
    if error * 4.0 < plain_error {
        return Err(Error::BlackBox(Fault::MoreAccurate {
            error,
            plain_error,
            plain: fallback,
        }));
    }
    Err(unexplained)
}
