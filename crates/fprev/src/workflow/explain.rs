//! Explaining a black box: reveal it at several sizes and infer the one
//! formula of the order language behind every tree, revealing more sizes
//! where the order switches until the switch is exact.

use std::sync::Arc;

use crate::document::TreeDocument;
use crate::error::{Error, Fault, Kind, Result};
use crate::formula::Formula;
use crate::formula::infer::{self, Inference, infer};
use crate::formula::known;
use crate::probe::{Probe, ProbeOptions};
use crate::reveal::{Options, OrderIndependent, Silent};
use crate::tree::SummationTree;
use crate::variation::Variation;

use super::size::reveal_size;
use super::{Caches, Confirm, NoCache, Note, Observer, Opener, Outcome, Request, Seek, Unheld};

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
    /// Seconds a check may be expected to take: one call of the black box
    /// at a `verify` size is timed, and where a proof's calls (up to
    /// `n / 8`, and the confirmation's replays) would take longer, that
    /// size and those past it are not checked (and said); a black box no
    /// proof can check is revealed instead, which takes longer. `None`:
    /// every size is checked, however long.
    pub budget: Option<f64>,
}

impl ExplainSizes {
    /// Whether these reveal the default sizes ([`EXPLAIN_SIZES`](infer::EXPLAIN_SIZES)),
    /// the only ones the formula cache serves: sizes given are revealed.
    pub fn reveals_defaults(&self) -> bool {
        infer::EXPLAIN_SIZES
            .parse::<crate::sizes::Sizes>()
            .is_ok_and(|s| s.0 == self.reveal)
    }
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
    /// formula describes the black box: at which sizes.
    OrderIndependent(OrderIndependent),
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
    let request = explain_request(probe, engine, confirm);
    let mut skipped: Vec<(usize, String)> = Vec::new();
    let mut independent = Vec::new();
    let mut varying = None;
    // Sizes left unrevealed once order-independence was settled.
    let mut unrevealed = 0;
    let mut reveal_at = |sizes: &[usize]| -> Result<Vec<SummationTree>> {
        let mut trees = Vec::new();
        let mut streak = 0;
        let mut settled_at = None;
        let check = sizes
            .iter()
            .copied()
            .filter(|&k| k <= INDEPENDENT_CHECK_UP_TO)
            .max()
            .unwrap_or(0);
        for (done, &n) in sizes.iter().enumerate() {
            if settled_at == Some(n) {
                continue;
            }
            observer.revealing(n, done, sizes.len());
            // The tree revealed at `n`, if any; `Err(true)` where it is
            // order-independent.
            let mut at = |n: usize| -> Result<std::result::Result<SummationTree, bool>> {
                let mut black_box: Box<dyn Probe> = open(&probe.at(n))?;
                let outcome = reveal_size(&mut black_box, label, &request, &mut Silent);
                match outcome {
                    Ok(Outcome::Revealed(r)) => return Ok(Ok(r.document.into_tree())),
                    Ok(Outcome::Varies(v)) => {
                        // Never said: a size that varies makes the whole
                        // explanation [`Explained::Varies`].
                        skipped.push((n, "varies from call to call".into()));
                        varying.get_or_insert(v);
                    }
                    Ok(Outcome::OrderIndependent(_)) => {
                        independent.push(n);
                        skipped.push((n, "order-independent".into()));
                        return Ok(Err(true));
                    }
                    Err(e) if e.of_black_box() => skipped.push((n, e.to_string())),
                    Err(e) => return Err(e),
                }
                Ok(Err(false))
            };
            streak = match at(n)? {
                Ok(tree) => {
                    trees.push(tree);
                    0
                }
                Err(true) if n > 2 => streak + 1,
                Err(true) => streak,
                Err(false) => 0,
            };
            // An order-independent black box shows it at the first sizes
            // past two summands: once a run of them is, a larger size
            // settles it, and no other is revealed.
            if streak == INDEPENDENT_RUN && check > n && trees.iter().all(SummationTree::is_forced)
            {
                settled_at = Some(check);
                match at(check)? {
                    Ok(tree) => trees.push(tree),
                    Err(true) => {
                        unrevealed = sizes[done + 1..].iter().filter(|&&k| k != check).count();
                        break;
                    }
                    Err(false) => {}
                }
            }
        }
        observer.sizes_done();
        Ok(trees)
    };
    let (mut inference, mut trees) = infer::explain(&sizes.reveal, &mut reveal_at)?;
    // A black box that adds in another order from call to call at some
    // size has no formula, whatever the sizes where it held still say.
    if let Some(v) = varying {
        return Ok(Explained::Varies(v));
    }
    // One or two summands have one tree each: such sizes explain nothing.
    if trees.iter().all(SummationTree::is_forced) {
        let broke = skipped.len() > independent.len();
        return if !independent.is_empty() && !broke {
            Ok(Explained::OrderIndependent(OrderIndependent::Sizes {
                sizes: independent,
                unrevealed,
                run: INDEPENDENT_RUN,
            }))
        } else if skipped.is_empty() {
            Err(Error::Input(format!(
                "{label}: sizes 1 and 2 have one tree each, so they show no order: give sizes \
                 of 3 summands or more"
            )))
        } else {
            Err(Error::BlackBox(Fault::NothingToExplain {
                label: label.to_string(),
                skipped,
            }))
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
        let tree = match check_at(&[&formula], v, sizes.budget, &request, label, open)? {
            AtSize::Tree(tree) => tree,
            AtSize::Skipped(why) => {
                skipped.push((v, why));
                break;
            }
            AtSize::Varies(v) => return Ok(Explained::Varies(v)),
        };
        let held = tree == formula.tree(v);
        // Where the formula last held: the largest size before this one
        // (sizes bisected before join the trees after the size refuted).
        let lo = trees.iter().map(SummationTree::n).max().unwrap_or(0);
        // What takes over from the formula past some size: threads' pieces
        // of it, or panels of K summed by it (each a candidate this tree
        // allows).
        let larges: Vec<Formula> = match held {
            true => Vec::new(),
            false => match infer::partitioned(&formula, &tree) {
                Some(pieces) => vec![pieces],
                None => infer::panels(&formula, &tree),
            },
        };
        trees.push(tree);
        if !larges.is_empty() {
            // Where is found by bisection, each size proven against both.
            let switched = switch(
                &formula,
                &larges,
                lo,
                v,
                sizes.budget,
                &request,
                label,
                open,
            )?;
            inference = match switched {
                Some((at, large, seen)) => {
                    verified.extend(seen.iter().map(SummationTree::n));
                    trees.extend(seen);
                    Inference {
                        formula: Some(Formula::Below(at, Box::new(formula), Box::new(large))),
                        closest: None,
                        gaps: Vec::new(),
                    }
                }
                None => refit(&trees, formula, v),
            };
            observer.note(Note::Refitted {
                failed_at: v,
                formula: inference.formula.as_ref().map(Formula::to_string),
            });
        } else if !held {
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
    trees.sort_by_key(SummationTree::n);
    verified.sort_unstable();
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

/// Order-independent sizes past two summands, one after another, after
/// which an explanation reveals the largest size asked up to
/// [`INDEPENDENT_CHECK_UP_TO`] and, where that is order-independent too, no
/// other.
pub const INDEPENDENT_RUN: usize = 4;

/// The largest size revealed to settle order-independence: a reveal of an
/// order-independent black box fails only after calls that grow faster
/// than `n²` (a Python `math.fsum`: 0.7 s at 128 summands, 8 s at 512,
/// 6.5 minutes at 2,048).
pub const INDEPENDENT_CHECK_UP_TO: usize = 128;

/// What checking a formula known beforehand (the cache's, one given by
/// hand) at sizes found: it is a guess until the black box shows its tree.
#[derive(Debug)]
pub enum Proof {
    /// The formula's tree is the black box's at each size of `proven`
    /// (ascending), proven with masked checks (or revealed) and confirmed
    /// by replay; from the size of `unchecked` on, nothing was checked,
    /// for the reason it gives.
    Holds {
        /// The sizes where its tree is the black box's.
        proven: Vec<usize>,
        /// The first size not checked, and why.
        unchecked: Option<(usize, String)>,
    },
    /// The black box's tree at this size is not the formula's.
    Refuted(usize),
    /// The black box answers one input differently on different calls.
    Varies(Variation),
}

/// Checks `formula`, known beforehand, at each of `sizes` (ascending) as
/// [`explain`] checks its formula past the sizes it revealed: the
/// formula's tree proven with masked checks (a reveal where no proof can
/// be made) and confirmed by replay, within `budget` (see
/// [`ExplainSizes::budget`]). Stops at the first size that refutes it or
/// cannot be checked.
///
/// ```
/// use fprev::probe::ProbeOptions;
/// use fprev::reveal::Silent;
/// use fprev::workflow::{self, Confirm, Proof};
///
/// let mut open = |o: &ProbeOptions| fprev::open("native:below(10, reverse, pairwise)", o);
/// let mut prove = |f: &str| {
///     workflow::prove_known(&f.parse().unwrap(), &[4, 9, 100], None, &ProbeOptions::default(),
///                           &Default::default(), &Confirm::default(), "b", &mut open,
///                           &mut Silent)
///         .unwrap()
/// };
/// // Right at 100, wrong below 10: a guess at one size is refuted at another.
/// assert!(matches!(prove("pairwise"), Proof::Refuted(4)));
/// let Proof::Holds { proven, unchecked } = prove("below(10, reverse, pairwise)") else {
///     panic!("its own formula holds")
/// };
/// assert_eq!((proven, unchecked), (vec![4, 9, 100], None));
/// ```
#[allow(clippy::too_many_arguments)]
pub fn prove_known(
    formula: &Formula,
    sizes: &[usize],
    budget: Option<f64>,
    probe: &ProbeOptions,
    engine: &Options,
    confirm: &Confirm,
    label: &str,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Proof> {
    let request = explain_request(probe, engine, confirm);
    let mut proven = Vec::new();
    let mut unchecked = None;
    for (done, &v) in sizes.iter().enumerate() {
        observer.revealing(v, done, sizes.len());
        match check_at(&[formula], v, budget, &request, label, open)? {
            AtSize::Tree(tree) if tree == formula.tree(v) => proven.push(v),
            AtSize::Tree(_) => {
                observer.sizes_done();
                return Ok(Proof::Refuted(v));
            }
            AtSize::Skipped(why) => {
                unchecked = Some((v, why));
                break;
            }
            AtSize::Varies(v) => {
                observer.sizes_done();
                return Ok(Proof::Varies(v));
            }
        }
    }
    observer.sizes_done();
    Ok(Proof::Holds { proven, unchecked })
}

/// An explanation with the formula cache ([`explain_cached`]).
#[derive(Debug)]
pub enum Explanation {
    /// The cache's formula, its tree proven again now at every size it was
    /// found from and those an explanation checks.
    Kept {
        /// The formula.
        formula: Formula,
        /// The sizes it was found from, before.
        from: Vec<usize>,
        /// The sizes where its tree is proven now.
        proven: Vec<usize>,
        /// The first size not checked, and why.
        unchecked: Option<(usize, String)>,
    },
    /// Explained now (the cache held none, or one that failed now).
    Now(Explained),
}

/// [`explain`] with the formula cache `caches` holds for this black box
/// (keyed by what it says of itself at the largest size revealed), where
/// `sizes` reveals the default sizes ([`EXPLAIN_SIZES`](infer::EXPLAIN_SIZES);
/// sizes given are always revealed): a formula kept is a guess, so its
/// tree is proven at every size it was found from and at those a fresh
/// explanation checks, or it is forgotten (a [`Note::CacheDropped`]) and
/// the black box explained afresh; a formula found now is kept.
#[allow(clippy::too_many_arguments)]
pub fn explain_cached(
    sizes: &ExplainSizes,
    probe: &ProbeOptions,
    engine: &Options,
    confirm: &Confirm,
    label: &str,
    caches: &dyn Caches,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Explanation> {
    let default_sizes = sizes.reveals_defaults();
    let cache = match default_sizes {
        true => {
            let largest = probe.at(*sizes.reveal.last().unwrap_or(&1));
            let mut about = || Ok(open(&largest)?.about());
            caches.of(label, probe, &mut about, engine.row)?
        }
        false => Box::new(NoCache),
    };
    let known = cache.known();
    if let Some((formula, from, _)) = known {
        let mut again = from.clone();
        again.extend([1000, 2048]);
        again.extend(sizes.verify.iter().copied().filter(|&v| v > 2048));
        again.sort_unstable();
        again.dedup();
        let proof = prove_known(
            &formula,
            &again,
            sizes.budget,
            probe,
            engine,
            confirm,
            label,
            open,
            observer,
        )?;
        let why = match proof {
            Proof::Holds { proven, unchecked } if from.iter().all(|n| proven.contains(n)) => {
                return Ok(Explanation::Kept {
                    formula,
                    from,
                    proven,
                    unchecked,
                });
            }
            Proof::Holds { unchecked, .. } => {
                let (n, why) = unchecked.unwrap_or_default();
                Unheld::Unproven(n, why)
            }
            Proof::Refuted(n) => Unheld::Refuted(n),
            Proof::Varies(v) => return Ok(Explanation::Now(Explained::Varies(v))),
        };
        cache.forget();
        observer.note(Note::CacheDropped {
            formula: formula.to_string(),
            why,
        });
    }
    let explained = explain(sizes, probe, engine, confirm, label, open, observer)?;
    if let Explained::Found {
        inference: Inference {
            formula: Some(formula),
            ..
        },
        trees,
        verified,
    } = &explained
        && default_sizes
    {
        let mut from: Vec<usize> = trees
            .iter()
            .map(SummationTree::n)
            .filter(|n| !verified.contains(n))
            .collect();
        from.sort_unstable();
        if let Err(e) = cache.keep(formula, &from, verified) {
            observer.note(Note::CacheUnkept(e));
        }
    }
    Ok(Explanation::Now(explained))
}

/// How an explanation reveals each size: confirmed on `confirm.trials`
/// random inputs, its arithmetic sought only where plain additions do not
/// replay it or it multiplies.
fn explain_request(probe: &ProbeOptions, engine: &Options, confirm: &Confirm) -> Request {
    Request {
        probe: probe.clone(),
        engine: *engine,
        confirm: Confirm {
            trials: confirm.trials,
            arithmetic: Seek::WhereNeeded,
            every_node: false,
            models: confirm.models.clone(),
        },
        infer: None,
        runs: 0,
        skeleton: None,
        nearby: Vec::new(),
        afresh: false,
    }
}

/// What the black box showed at a size checked against a formula.
enum AtSize {
    /// Its tree, confirmed by replay.
    Tree(SummationTree),
    /// Not checked: why.
    Skipped(String),
    /// It varies from call to call.
    Varies(Variation),
}

/// Where `small`, whose tree is the black box's at `lo`, gives way to one
/// of `larges`, whose trees are at `hi`: the sizes between bisected, each
/// proven against the formulas' trees, the larges whose tree it is not
/// dropped. The first size the large one gives, the first large left, and
/// the trees seen; `None` where a size's tree is no formula's, or cannot
/// be checked.
#[allow(clippy::too_many_arguments)]
fn switch(
    small: &Formula,
    larges: &[Formula],
    lo: usize,
    hi: usize,
    budget: Option<f64>,
    request: &Request,
    label: &str,
    open: &mut Opener,
) -> Result<Option<(usize, Formula, Vec<SummationTree>)>> {
    let (mut lo, mut hi) = (lo, hi);
    let mut larges: Vec<&Formula> = larges.iter().collect();
    let mut seen = Vec::new();
    while hi - lo > 1 {
        let m = lo + (hi - lo) / 2;
        let guesses: Vec<&Formula> = std::iter::once(small).chain(larges.clone()).collect();
        let AtSize::Tree(tree) = check_at(&guesses, m, budget, request, label, open)? else {
            return Ok(None);
        };
        if tree == small.tree(m) {
            lo = m;
        } else {
            larges.retain(|large| tree == large.tree(m));
            if larges.is_empty() {
                return Ok(None);
            }
            hi = m;
        }
        seen.push(tree);
    }
    Ok(larges.first().map(|large| (hi, (*large).clone(), seen)))
}

/// The black box's tree at `v`, its reveal starting from the trees of
/// `formulas` (the one that is the black box's proven with masked checks)
/// and confirmed by replay; not checked where the black box cannot take
/// that size, or (with a `budget`) where one timed call says the check
/// would take longer.
fn check_at(
    formulas: &[&Formula],
    v: usize,
    budget: Option<f64>,
    request: &Request,
    label: &str,
    open: &mut Opener,
) -> Result<AtSize> {
    // One or two summands have one tree: the black box's, whatever its
    // arithmetic (a tensor core's two products replay in no rounded
    // addition, yet their order is the only one).
    let guesses: Vec<SummationTree> = formulas.iter().map(|f| f.tree(v)).collect();
    if let Some(forced) = guesses.iter().find(|t| t.is_forced()) {
        return Ok(AtSize::Tree(forced.clone()));
    }
    let request = Request {
        nearby: guesses
            .into_iter()
            .map(|t| Arc::new(TreeDocument::new(t)))
            .collect(),
        ..request.clone()
    };
    // A size the black box cannot take (a GEMV's square matrix past
    // memory) is not checked, and the formula speaks for less.
    let mut black_box: Box<dyn Probe> = match open(&request.probe.at(v)) {
        Ok(b) => b,
        Err(e) if e.kind() == Kind::Input => {
            return Ok(AtSize::Skipped(e.to_string()));
        }
        Err(e) => return Err(e),
    };
    if let Some(budget) = budget {
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
            return Ok(AtSize::Skipped(format!(
                "not checked: a call takes {call:.3} s, so a check would take about \
                 {expected:.0} s (asked for by name, it is checked)"
            )));
        }
    }
    let found = reveal_size(&mut black_box, label, &request, &mut Silent);
    Ok(match found {
        Ok(Outcome::Revealed(r)) if r.confirmed() => AtSize::Tree(r.document.into_tree()),
        Ok(Outcome::Revealed(_)) => AtSize::Skipped("its tree was not confirmed by replay".into()),
        Ok(Outcome::Varies(v)) => AtSize::Varies(v),
        Ok(Outcome::OrderIndependent(_)) => AtSize::Skipped("order-independent".into()),
        Err(e) if e.of_black_box() => AtSize::Skipped(e.to_string()),
        Err(e) => return Err(e),
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

    /// What explain finds for `spec` at `sizes`: its inference, trees and
    /// sizes checked past those revealed.
    fn found(spec: &str, sizes: ExplainSizes) -> (Inference, Vec<SummationTree>, Vec<usize>) {
        let mut open = |o: &ProbeOptions| crate::open(spec, o);
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
        (inference, trees, verified)
    }

    /// Open MPI's nonoverlapping allreduce on 6 ranks, as a black box:
    /// explained from small sizes as its formula, which then holds at a
    /// size the explanation never revealed.
    #[test]
    fn a_reduce_over_open_mpis_binary_tree_is_explained() {
        let spec = "native:split(6, sequential, fanout(2))";
        let truth: Formula = "split(6, sequential, fanout(2))".parse().unwrap();
        let (inference, trees, verified) = found(
            spec,
            ExplainSizes {
                reveal: (1..=24).chain([31, 32, 33, 64, 100]).collect(),
                verify: vec![257],
                ..Default::default()
            },
        );
        assert_eq!(inference.formula, Some(truth.clone()));
        assert_eq!(verified, [257]);
        // The tree revealed there, not the one predicted, is the formula's.
        let at_257 = trees.iter().find(|t| t.n() == 257).expect("revealed");
        assert_eq!(*at_257, truth.tree(257));
    }

    /// A kernel that hands its summands to three threads from 1,500 on,
    /// seen only past the sizes revealed: the pieces are read from the
    /// first size that refutes the kernel, and the switch is found exactly
    /// by bisection, each size proven.
    #[test]
    fn threads_taking_over_past_the_sizes_revealed_are_found_with_their_switch() {
        let kernel = "body(8, interleave(8, sequential, pairwise), then)";
        let truth = format!("below(1500, {kernel}, split(3, {kernel}, pairwise))");
        let spec = format!("native:{truth}");
        let truth: Formula = truth.parse().unwrap();
        let (inference, _, verified) = found(
            &spec,
            ExplainSizes {
                reveal: (1..=24).chain([31, 32, 33, 64, 100, 257]).collect(),
                verify: vec![1000, 4000, 9000],
                ..Default::default()
            },
        );
        assert_eq!(inference.formula, Some(truth));
        // Bisection between 1,000 and 4,000, then 9,000.
        assert!(
            verified.contains(&1500) && verified.contains(&1499),
            "{verified:?}"
        );
        assert_eq!(verified.last(), Some(&9000));
    }

    /// A small-matrix kernel giving way to panels of K from 3,907 on
    /// (OpenBLAS's SGEMM on AVX-512 past `M·N·K = 10^6` with 16 rows and
    /// columns): the panels are read from the first size that refutes the
    /// kernel, how the rest is halved from the sizes bisected, and the
    /// switch is found exactly.
    #[test]
    fn panels_of_k_taking_over_past_the_sizes_revealed_are_found_with_their_switch() {
        let truth = "below(3907, sequential, kblocks(448, 16, sequential))";
        let spec = format!("native:{truth}");
        let truth: Formula = truth.parse().unwrap();
        let (inference, _, verified) = found(
            &spec,
            ExplainSizes {
                reveal: (1..=24).chain([31, 32, 33, 64, 100, 257, 1000]).collect(),
                verify: vec![4096, 6000],
                ..Default::default()
            },
        );
        assert_eq!(inference.formula, Some(truth));
        assert!(
            verified.contains(&3907) && verified.contains(&3906),
            "{verified:?}"
        );
    }
}
