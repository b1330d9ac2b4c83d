//! Explaining a black box: reveal it at several sizes and infer the one
//! formula of the order language behind every tree, revealing more sizes
//! where the order switches until the switch is exact.

use std::sync::Arc;

use crate::document::TreeDocument;
use crate::error::{Error, Result};
use crate::formula::Formula;
use crate::formula::infer::{self, Inference, infer};
use crate::formula::known;
use crate::probe::{Probe, ProbeOptions};
use crate::reveal::{Options, Silent};
use crate::sizes::runs;
use crate::tree::SummationTree;
use crate::variation::Variation;

use super::reveal::{Outcome, Request, reveal};
use super::{Confirm, Note, Observer, Opener, Seek, opens_no_other};

/// Sizes past those revealed at which `fprev explain` checks its formula
/// by default before claiming it: past the blocks of 4,096 where XLA's and
/// OpenBLAS's kernels switch. Each check is a masked proof of the
/// formula's tree (about `n / 24` calls), or a reveal where no proof can
/// be made.
pub const VERIFY_SIZES: &str = "4096,16384,65536";

/// The sizes an explanation reveals, and those past them at which its
/// formula is checked before it is claimed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExplainSizes {
    /// Revealed (and between two regimes, more until each switch is
    /// exact).
    pub reveal: Vec<usize>,
    /// Past the largest revealed: the formula's tree is proven there (or
    /// the size revealed), and a formula that fails one is inferred again
    /// with that tree.
    pub verify: Vec<usize>,
    /// A formula known beforehand (from the cache): nothing is revealed to
    /// infer one, it is checked at every `verify` size, and where one
    /// refutes it no formula is claimed (the closest is it, failing
    /// there).
    pub known: Option<Formula>,
    /// Seconds a check may be expected to take: one call of the black box
    /// at a `verify` size is timed, and where a proof's calls (up to
    /// `n / 8`, and the confirmation's replays) would take longer, that
    /// size and those past it are not checked (and said); a black box no
    /// proof can check is revealed instead, which takes longer. `None`:
    /// every size is checked, however long.
    pub budget: Option<f64>,
}

/// Seconds a default check may take, at most (a pure-Python loop of
/// 65,536 summands takes minutes to prove).
pub const VERIFY_BUDGET: f64 = 30.0;

/// What an explanation found.
#[derive(Debug)]
pub enum Explained {
    /// The inference (a formula, or the closest and where it fails) and
    /// every tree revealed, smallest first.
    Found {
        /// What was inferred.
        inference: Inference,
        /// The trees it rests on, the verified sizes' too.
        trees: Vec<SummationTree>,
        /// The sizes past those revealed at which the formula's tree was
        /// checked to be the black box's, ascending.
        verified: Vec<usize>,
    },
    /// Every size past two summands revealed is order-independent: no
    /// formula describes the black box. Says at which sizes.
    OrderIndependent(String),
    /// At some size the black box answers one input differently on
    /// different calls, so no formula describes it: what repeating inputs
    /// showed there.
    Varies(Variation),
}

/// Reveals the black box at `sizes.reveal` (each opened by `open` with
/// `probe` at that size, confirmed on `confirm.trials` random inputs, its
/// arithmetic sought only where plain additions do not replay it or it
/// multiplies) and infers its formula, revealing sizes between two where
/// the order switches until the switch is exact; then checks the formula
/// at each of `sizes.verify` past them. Sizes that could not be revealed
/// are left out, and said.
///
/// Fails with [`Error::Input`] where the sizes hold nothing past two
/// summands (such trees are forced: they show no order), and with
/// [`Error::BlackBox`] where none of those could be revealed.
///
/// ```
/// use fprev::probe::ProbeOptions;
/// use fprev::reveal::Silent;
/// use fprev::workflow::{self, Confirm, Explained};
/// use fprev::Order;
///
/// let mut open = |o: &ProbeOptions| fprev::open("native:strided:4", o);
/// let sizes = workflow::ExplainSizes { reveal: vec![3, 4, 8, 16, 33], verify: vec![100], ..Default::default() };
/// let explained = workflow::explain(&sizes, &ProbeOptions::default(),
///                                   &Default::default(), &Confirm::default(), "lanes",
///                                   &mut open, &mut Silent).unwrap();
/// let Explained::Found { inference, verified, .. } = explained else { panic!("it has an order") };
/// // The formula gives the order at a size never revealed, checked there.
/// assert_eq!(inference.formula.unwrap().tree(100), Order::Strided(4).tree(100));
/// assert_eq!(verified, [100]);
/// ```
pub fn explain(
    sizes: &ExplainSizes,
    probe: &ProbeOptions,
    engine: &Options,
    confirm: &Confirm,
    label: &str,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Explained> {
    let request = Request {
        probe: probe.clone(),
        engine: *engine,
        confirm: Confirm {
            trials: confirm.trials,
            arithmetic: Seek::WhereNeeded,
            every_node: false,
        },
        infer: None,
        runs: 0,
        skeleton: false,
        nearby: Vec::new(),
        afresh: false,
    };
    let mut skipped: Vec<(usize, String)> = Vec::new();
    let mut independent = Vec::new();
    let mut varying = None;
    let mut reveal_at = |sizes: &[usize]| -> Result<Vec<SummationTree>> {
        let mut trees = Vec::new();
        for (done, &n) in sizes.iter().enumerate() {
            observer.revealing(n, done, sizes.len());
            let mut black_box: Box<dyn Probe> = open(&probe.at(n))?;
            let outcome = reveal(
                &mut black_box,
                label,
                &request,
                &mut opens_no_other,
                &mut Silent,
            );
            match outcome {
                Ok(Outcome::Revealed(r)) => trees.push(r.document.into_tree()),
                Ok(Outcome::Varies(v)) => {
                    skipped.push((n, format!("varies from call to call: {v}")));
                    varying.get_or_insert(v);
                }
                Ok(Outcome::OrderIndependent(_)) => {
                    independent.push(n);
                    skipped.push((n, "order-independent".into()));
                }
                Err(e) if e.of_black_box() => skipped.push((n, e.to_string())),
                Err(e) => return Err(e),
            }
        }
        observer.sizes_done();
        Ok(trees)
    };
    let (mut inference, mut trees) = match &sizes.known {
        Some(f) => {
            let known = Inference {
                formula: Some(f.clone()),
                closest: None,
                gaps: Vec::new(),
            };
            (known, Vec::new())
        }
        None => infer::explain(&sizes.reveal, &mut reveal_at)?,
    };
    // A black box that adds in another order from call to call at some
    // size has no formula, whatever the sizes where it held still say.
    if let Some(v) = varying {
        return Ok(Explained::Varies(v));
    }
    // One or two summands have one tree each: such sizes explain nothing.
    if sizes.known.is_none() && trees.iter().all(SummationTree::is_forced) {
        let broke = skipped.len() > independent.len();
        return if !independent.is_empty() && !broke {
            Ok(Explained::OrderIndependent(format!(
                "the black box sums order-independently at n = {}: every order of random \
                 inputs gave the same bits (an exact or pre-rounded sum), so no formula \
                 describes it",
                runs(&independent)
            )))
        } else if skipped.is_empty() {
            Err(Error::Input(format!(
                "{label}: sizes 1 and 2 have one tree each, so they show no order: give sizes \
                 of 3 summands or more"
            )))
        } else {
            let sizes: Vec<String> = skipped
                .iter()
                .map(|(n, why)| format!("{n} ({why})"))
                .collect();
            Err(Error::BlackBox(format!(
                "{label}: no size of 3 summands or more could be revealed, so there is nothing \
                 to explain: n = {}",
                sizes.join(", ")
            )))
        };
    }
    let largest = trees.last().map_or(0, SummationTree::n);
    let mut verified = Vec::new();
    let past: Vec<usize> = sizes
        .verify
        .iter()
        .copied()
        .filter(|&v| v > largest)
        .collect();
    for (done, &v) in past.iter().enumerate() {
        let Some(formula) = inference.formula.clone() else {
            break;
        };
        observer.revealing(v, done, past.len());
        let predicted = formula.tree(v);
        let request = Request {
            nearby: vec![Arc::new(TreeDocument::new(predicted.clone()))],
            ..request.clone()
        };
        // A size the black box cannot take (a GEMV's square matrix past
        // memory) is not checked, and the formula speaks for less.
        let mut black_box: Box<dyn Probe> = match open(&probe.at(v)) {
            Ok(b) => b,
            Err(e) if matches!(e.plain(), Error::Input(_)) => {
                skipped.push((v, e.to_string()));
                break;
            }
            Err(e) => return Err(e),
        };
        if let Some(budget) = sizes.budget {
            // The second call: the first may compile a kernel (XLA).
            let ones = vec![1.0; v];
            let mut out = [0.0];
            black_box.sum(&ones, &mut out)?;
            let started = std::time::Instant::now();
            black_box.sum(&ones, &mut out)?;
            let call = started.elapsed().as_secs_f64();
            // A proof's calls (n / 24 to n / 8) and the confirmation's
            // replays; a black box no proof can check is revealed, which
            // takes longer than this says.
            let expected = call * (v / 8 + 48) as f64;
            if expected > budget {
                skipped.push((
                    v,
                    format!(
                        "not checked: a call takes {call:.3} s, so a check would take about \
                         {expected:.0} s (asked for by name, it is checked)"
                    ),
                ));
                break;
            }
        }
        let found = reveal(
            &mut black_box,
            label,
            &request,
            &mut opens_no_other,
            &mut Silent,
        );
        let tree = match found {
            Ok(Outcome::Revealed(r)) if r.confirmed() => r.document.into_tree(),
            Ok(Outcome::Revealed(_)) => {
                skipped.push((v, "its tree was not confirmed by replay".into()));
                break;
            }
            Ok(Outcome::Varies(v)) => return Ok(Explained::Varies(v)),
            Ok(Outcome::OrderIndependent(_)) => {
                skipped.push((v, "order-independent".into()));
                break;
            }
            Err(e) if e.of_black_box() => {
                skipped.push((v, e.to_string()));
                break;
            }
            Err(e) => return Err(e),
        };
        let held = tree == predicted;
        trees.push(tree);
        if !held && sizes.known.is_some() {
            inference = Inference {
                formula: None,
                closest: Some((formula, v)),
                gaps: Vec::new(),
            };
            break;
        }
        if !held {
            inference = refit(&trees, formula, v);
            observer.note(Note::Refitted {
                failed_at: v,
                formula: inference.formula.as_ref().map(Formula::to_string),
            });
        }
        verified.push(v);
    }
    if inference.formula.is_none() {
        verified.clear();
    }
    observer.sizes_done();
    if !skipped.is_empty() {
        observer.note(Note::NotRevealed(skipped));
    }
    Ok(Explained::Found {
        inference,
        trees,
        verified,
    })
}

/// The formula that gives every one of `trees` once `failed`'s tree at
/// `at` (the last) showed it wrong: a known formula that gives them all
/// (found for a library from larger reveals), else one inferred afresh;
/// where neither does, `failed` is the closest, failing at `at`.
fn refit(trees: &[SummationTree], failed: Formula, at: usize) -> Inference {
    if let Some((_, f)) = known::giving_every(trees).next() {
        return Inference {
            formula: Some(f),
            closest: None,
            gaps: Vec::new(),
        };
    }
    let again = infer(trees);
    match again.formula {
        Some(_) => again,
        None => Inference {
            formula: None,
            closest: Some((failed, at)),
            gaps: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reveal::Silent;
    use crate::workflow::Confirm;

    /// Open MPI's nonoverlapping allreduce on 6 ranks, as a black box:
    /// explained from small sizes as its formula, which then holds at a
    /// size the explanation never revealed.
    #[test]
    fn a_reduce_over_open_mpis_binary_tree_is_explained() {
        let spec = "native:split(6, sequential, fanout(2))";
        let truth: Formula = "split(6, sequential, fanout(2))".parse().unwrap();
        let mut open = |o: &ProbeOptions| crate::open(spec, o);
        let sizes = ExplainSizes {
            reveal: (1..=24).chain([31, 32, 33, 64, 100]).collect(),
            verify: vec![257],
            ..Default::default()
        };
        let explained = explain(
            &sizes,
            &ProbeOptions::default(),
            &Options::default(),
            &Confirm::default(),
            spec,
            &mut open,
            &mut Silent,
        )
        .unwrap();
        let Explained::Found {
            inference,
            trees,
            verified,
        } = explained
        else {
            panic!("{spec} has an order");
        };
        assert_eq!(inference.formula, Some(truth.clone()));
        assert_eq!(verified, [257]);
        // The tree revealed there, not the one predicted, is the formula's.
        let at_257 = trees.iter().find(|t| t.n() == 257).expect("revealed");
        assert_eq!(*at_257, truth.tree(257));
    }
}
