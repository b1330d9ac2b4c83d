//! The plan of emitted code for a black box: its formula's tree revealed
//! (predicted and proven) at a few sizes, each confirmed by replay with
//! its arithmetic, and the arithmetic of each part of the formula taken
//! from those models ([`crate::emit::Plan`]).

use super::{Confirm, Infer, Observer, Opener, PROVE_UP_TO, Request, reveal};
use crate::arith::{Arithmetic, NodeArithmetic};
use crate::document::TreeDocument;
use crate::emit::{Op, Plan};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::formula::Formula;
use crate::probe::ProbeOptions;
use crate::reveal::Outcome;
use crate::tree::SummationTree;

/// What a plan rests on: the sizes whose trees were revealed and
/// confirmed with their arithmetic.
#[derive(Debug)]
pub enum Planned {
    /// The plan, and the sizes its arithmetic was found at.
    Plan(Box<Plan>, Vec<usize>),
    /// At this size the formula's tree, or its arithmetic, did not replay
    /// the black box's bits: why, in one line.
    NotConfirmed(usize, String),
}

/// The sizes whose reveals show every part of `formula` adding: 1,000,
/// and past each `below(M, …)` switch, `M + 1,000`.
pub fn reference_sizes(formula: &Formula) -> Vec<usize> {
    let mut sizes = vec![1000];
    for part in crate::emit::preorder(formula) {
        if let Formula::Below(m, ..) = part {
            sizes.push(m.saturating_add(1000).min(1 << 17));
        }
    }
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// Reveals `formula`'s tree of the black box at [`reference_sizes`]
/// (predicted by the formula, proven with masked checks, confirmed by
/// replay with its arithmetic) and plans emitted code from them.
pub fn plan(
    formula: &Formula,
    op: Op,
    probe: &ProbeOptions,
    label: &str,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Planned> {
    let mut models: Vec<(SummationTree, Arithmetic)> = Vec::new();
    let sizes = reference_sizes(formula);
    for &n in &sizes {
        let at = probe.at(n);
        let mut black_box = open(&at)?;
        let request = Request {
            probe: at,
            engine: Default::default(),
            confirm: Confirm::default(),
            infer: Some(Infer {
                sizes: None,
                prove_up_to: PROVE_UP_TO,
                known: Some((formula.clone(), Vec::new())),
            }),
            runs: 0,
            skeleton: false,
            nearby: Vec::new(),
            afresh: false,
        };
        let revealed = match reveal(black_box.as_mut(), label, &request, open, observer)? {
            Outcome::Revealed(r) => r,
            Outcome::OrderIndependent(_) => {
                return Err(Error::Input(format!(
                    "{label} is order-independent at n = {n}: any order gives its bits"
                )));
            }
            Outcome::Varies(_) => {
                return Err(Error::Input(format!(
                    "{label} varies from call to call at n = {n}: no code reproduces its bits"
                )));
            }
        };
        if !revealed.confirmed() {
            return Ok(Planned::NotConfirmed(
                n,
                "its replay, with the arithmetic found, differs from the black box".into(),
            ));
        }
        let document = revealed.document;
        if *document.tree() != formula.tree(n) {
            return Ok(Planned::NotConfirmed(
                n,
                format!("the black box's tree there is not native:{formula}'s"),
            ));
        }
        models.push(model_of(document, probe.format)?);
    }
    Ok(Planned::Plan(
        Box::new(Plan::new(formula, probe.format, op, &models)?),
        sizes,
    ))
}

/// A confirmed document's tree and arithmetic (a uniform model in the
/// accumulator its replay matched in, where no model was kept).
pub fn model_of(document: TreeDocument, element: Format) -> Result<(SummationTree, Arithmetic)> {
    let accumulator = document
        .confirmation
        .as_ref()
        .and_then(|c| c.accumulator.as_deref())
        .and_then(|a| a.parse::<Format>().ok())
        .unwrap_or(element);
    let model = document
        .arithmetic
        .clone()
        .unwrap_or_else(|| Arithmetic::uniform(NodeArithmetic::ieee(accumulator)));
    Ok((document.into_tree(), model))
}
