//! `fprev explain`: reveal at several sizes, then name the one formula of
//! the order language that gives every revealed tree.

use fprev::error::{Error, Result};
use fprev::formula::infer::{Inference, explain};
use fprev::probe::ProbeOptions;
use fprev::sweep::{self, Outcome, Sizes, runs};
use fprev::{Options, SummationTree};

use super::open_guarded;
use crate::args::ExplainArgs;
use crate::progress::SweepBar;
use crate::write;

/// Runs `fprev explain`: 0 with a formula that regenerates every revealed
/// tree, 1 when no formula does (the closest is named, as not explaining),
/// 3 when no size past two summands could be revealed, 4 when those sizes
/// are order-independent.
pub(super) fn run(a: ExplainArgs) -> Result<i32> {
    a.guard.start();
    let inferred = infer_from(
        &a.spec,
        &ProbeOptions {
            shape: a.shape,
            ..a.number.options(None)
        },
        &a.sizes,
        &a.engine.options(),
        a.confirm,
    );
    let (found, trees) = match inferred {
        Err(Error::OrderIndependent(why)) => return order_independent(&a.spec, &why),
        r => r?,
    };
    let mut revealed: Vec<usize> = trees.iter().map(|t| t.n()).collect();
    revealed.sort_unstable();
    let sizes = runs(&revealed);
    match (found.formula.clone(), found.closest.clone()) {
        (Some(formula), _) => {
            write::println(format_args!("native:{formula}"))?;
            write::println(format_args!("{}.", capitalised(&formula.sentence())))?;
            write::println(format_args!(
                "# regenerates the revealed tree of {} at each of {} sizes: n = {sizes}",
                a.spec,
                trees.len(),
            ))?;
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

/// Reveals `spec` at `sizes` and infers its formula, revealing sizes
/// between two where the order switches until the switch is exact.
/// Returns the inference and the trees it saw.
pub(super) fn infer_from(
    spec: &str,
    probe_opts: &ProbeOptions,
    sizes: &Sizes,
    engine: &Options,
    confirm: usize,
) -> Result<(Inference, Vec<SummationTree>)> {
    let mut skipped = Vec::new();
    let mut independent = Vec::new();
    let reveal = |sizes: &[usize]| -> Result<Vec<SummationTree>> {
        let s = sweep::sweep_with(
            spec,
            probe_opts,
            &Sizes(sizes.to_vec()),
            &[None],
            engine,
            confirm,
            &mut open_guarded,
            &mut SweepBar::default(),
        )?;
        let mut trees = Vec::new();
        for p in s.points {
            match p.outcome {
                Outcome::Tree(t) | Outcome::Unconfirmed(t) => trees.push(t),
                Outcome::OrderIndependent => {
                    independent.push(p.n);
                    skipped.push(format!("{} (order-independent)", p.n));
                }
                Outcome::Broken(why) => skipped.push(format!("{} ({why})", p.n)),
            }
        }
        Ok(trees)
    };
    let (found, trees) = explain(&sizes.0, reveal)?;
    // One or two summands have one tree each: such sizes explain nothing.
    if trees.iter().all(SummationTree::is_forced) {
        let broke = skipped.len() > independent.len();
        return Err(if !independent.is_empty() && !broke {
            Error::OrderIndependent(format!(
                "the black box sums order-independently at n = {}: every order of random \
                 inputs gave the same bits (an exact or pre-rounded sum), so no formula \
                 describes it",
                runs(&independent)
            ))
        } else if skipped.is_empty() {
            Error::Input(format!(
                "{spec}: sizes 1 and 2 have one tree each, so they show no order: give sizes \
                 of 3 summands or more"
            ))
        } else {
            Error::BlackBox(format!(
                "{spec}: no size of 3 summands or more could be revealed, so there is nothing \
                 to explain: n = {}",
                skipped.join(", ")
            ))
        });
    }
    if !skipped.is_empty() {
        eprintln!(
            "fprev: note: not revealed, so not explained: n = {}",
            skipped.join(", ")
        );
    }
    Ok((found, trees))
}

/// Says on stdout that `spec` is order-independent: exit 4, no tree.
pub(super) fn order_independent(spec: &str, why: &str) -> Result<i32> {
    write::println(format_args!("order-independent: {spec}: {why}"))?;
    Ok(4)
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
