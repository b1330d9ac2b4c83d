//! Explaining a black box: reveal it at several sizes and infer the one
//! formula of the order language behind every tree, revealing more sizes
//! where the order switches until the switch is exact.

use crate::error::{Error, Result};
use crate::formula::infer::{self, Inference};
use crate::probe::{Probe, ProbeOptions};
use crate::reveal::{Options, Silent};
use crate::sizes::runs;
use crate::tree::SummationTree;
use crate::variation::Variation;

use super::reveal::{Outcome, Request, reveal};
use super::{Confirm, Note, Observer, Opener, Seek, opens_no_other};

/// What an explanation found.
#[derive(Debug)]
pub enum Explained {
    /// The inference (a formula, or the closest and where it fails) and
    /// every tree revealed, smallest first.
    Found {
        /// What was inferred.
        inference: Inference,
        /// The trees it rests on.
        trees: Vec<SummationTree>,
    },
    /// Every size past two summands revealed is order-independent: no
    /// formula describes the black box. Says at which sizes.
    OrderIndependent(String),
    /// At some size the black box answers one input differently on
    /// different calls, so no formula describes it: what repeating inputs
    /// showed there.
    Varies(Variation),
}

/// Reveals the black box at `sizes` (each opened by `open` with `probe` at
/// that size, confirmed on `confirm.trials` random inputs, its arithmetic
/// sought only where plain additions do not replay it or it multiplies)
/// and infers its formula, revealing sizes between two where the order
/// switches until the switch is exact. Sizes that could not be
/// revealed are left out, and said.
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
/// let explained = workflow::explain(&[3, 4, 8, 16, 33], &ProbeOptions::default(),
///                                   &Default::default(), &Confirm::default(), "lanes",
///                                   &mut open, &mut Silent).unwrap();
/// let Explained::Found { inference, .. } = explained else { panic!("it has an order") };
/// // The formula gives the order at a size never revealed.
/// assert_eq!(inference.formula.unwrap().tree(100), Order::Strided(4).tree(100));
/// ```
pub fn explain(
    sizes: &[usize],
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
                Ok(Outcome::Revealed(r)) => trees.push(r.document.tree),
                Ok(Outcome::Varies(v)) => {
                    skipped.push((n, format!("varies from call to call: {v}")));
                    varying.get_or_insert(v);
                }
                Ok(Outcome::OrderIndependent(_)) => {
                    independent.push(n);
                    skipped.push((n, "order-independent".into()));
                }
                Err(e) if matches!(e.plain(), Error::BlackBox(_)) => {
                    skipped.push((n, e.to_string()))
                }
                Err(e) => return Err(e),
            }
        }
        observer.sizes_done();
        Ok(trees)
    };
    let (inference, trees) = infer::explain(sizes, &mut reveal_at)?;
    // A black box that adds in another order from call to call at some
    // size has no formula, whatever the sizes where it held still say.
    if let Some(v) = varying {
        return Ok(Explained::Varies(v));
    }
    // One or two summands have one tree each: such sizes explain nothing.
    if trees.iter().all(SummationTree::is_forced) {
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
    if !skipped.is_empty() {
        observer.note(Note::NotRevealed(skipped));
    }
    Ok(Explained::Found { inference, trees })
}
