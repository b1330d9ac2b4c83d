//! The plan of emitted code for a black box: its formula's tree revealed
//! (predicted and proven) at a few sizes, each confirmed by replay with
//! its arithmetic, and the arithmetic of each part of the formula taken
//! from those models ([`crate::emit::Plan`]).

use super::{
    Caches, Confirm, Infer, NoCache, NotConfirmed, Note, Observer, OpenSpec, Opener, PROVE_UP_TO,
    Proof, Request, Unheld, reveal_opened,
};
use crate::arith::{Arithmetic, NodeArithmetic};
use crate::document::TreeDocument;
use crate::emit::{Op, Plan};
use crate::error::{Error, Irreproducible, Result};
use crate::format::Format;
use crate::formula::Formula;
use crate::probe::{Offset, Probe, ProbeOptions};
use crate::reveal::{OrderIndependent, Outcome};
use crate::spec::Spec;
use crate::tree::SummationTree;

/// A plan prepared with the formula cache ([`prepare_cached`]).
#[derive(Debug)]
pub struct PreparedCached {
    /// The plan, or why there is none.
    pub prepared: Prepared,
    /// Why the formula explained now could not be kept in the cache.
    pub unkept: Option<Error>,
}

/// [`prepare`] with the formula given (`given`, with its claim), else the
/// one `caches` keeps for the black box (keyed by what it says of itself
/// at n = 1,000), else the one explain finds, kept there for the next
/// call. The cache's formula is a guess: refuted, it is dropped
/// ([`Note::CacheDropped`]) and the order found afresh. An explanation
/// starting is told as [`Note::Explaining`], so that a front end can say
/// why it takes long.
pub fn prepare_cached(
    label: &str,
    probe: &ProbeOptions,
    given: Option<(Formula, String)>,
    caches: &dyn Caches,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<PreparedCached> {
    // The black box at n = 1,000, for the cache's key and a narrow
    // format's check: opened once, where either asks, and closed before
    // the reveals.
    let mut reference = None;
    let cache = match given {
        Some(_) => Box::new(NoCache),
        None => {
            let mut about = || Ok(at_reference(&mut reference, open, probe)?.about());
            caches.of(label, probe, &mut about, 0)?
        }
    };
    let cached = cache
        .known()
        .map(|(f, from, checked)| (f, explained_claim(true, &from, &checked)));
    let known = given.or_else(|| cached.clone());
    if !matches!(probe.format, Format::F32 | Format::F64) {
        let may_fuse = at_reference(&mut reference, open, probe)?.may_fuse();
        narrow_ok(label, probe, may_fuse, known.as_ref().map(|(f, _)| f))?;
    }
    drop(reference);
    if known.is_none() {
        observer.note(Note::Explaining(label.to_string()));
    }
    let mut prepared = prepare(label, probe, known, open, observer)?;
    if let (Some((f, _)), Prepared::NotConfirmed(n, why)) = (&cached, &prepared) {
        cache.forget();
        observer.note(Note::CacheDropped {
            formula: f.to_string(),
            why: Unheld::NotConfirmed(*n, why.clone()),
        });
        observer.note(Note::Explaining(label.to_string()));
        prepared = prepare(label, probe, None, open, observer)?;
    }
    let unkept = match &prepared {
        Prepared::Ready {
            explained: Some((f, from, checked)),
            ..
        } => cache.keep(f, from, checked).err(),
        _ => None,
    };
    Ok(PreparedCached { prepared, unkept })
}

/// The black box at n = 1,000 held in `slot`, opened by `open` with
/// `probe` the first time it is asked for.
fn at_reference<'s>(
    slot: &'s mut Option<Box<dyn Probe>>,
    open: &mut Opener,
    probe: &ProbeOptions,
) -> Result<&'s mut Box<dyn Probe>> {
    let opened = match slot.take() {
        Some(b) => b,
        None => open(&probe.at(1000))?,
    };
    Ok(slot.insert(opened))
}

/// What emitted code says of explain's formula, found from `from` (before,
/// where the cache kept it) and checked at `checked` (where it was).
fn explained_claim(cached: bool, from: &[usize], checked: &[usize]) -> String {
    let mut claim = match cached {
        true => "The order: fprev explain's formula (from the cache), found before from n = ",
        false => "The order: fprev explain's formula, found from n = ",
    }
    .to_string();
    claim += &crate::sizes::runs(from);
    if !checked.is_empty() {
        claim += &format!(" and checked at n = {}", crate::sizes::runs(checked));
    }
    claim
}

/// What a plan rests on: the sizes whose trees were revealed and
/// confirmed with their arithmetic.
#[derive(Debug)]
pub enum Planned {
    /// The plan, and the sizes its arithmetic was found at.
    Plan(Box<Plan>, Vec<usize>),
    /// At this size the formula's tree, or its arithmetic, did not replay
    /// the black box's bits: why, in one line.
    NotConfirmed(usize, NotConfirmed),
}

/// The sizes whose reveals show every part of `formula` adding: 1,000,
/// and on either side of each `below(M, …)` switch, the largest size below
/// it (up to 1,000), `M` and `M + 1,000` (a switch inside blocks, as
/// OpenBLAS's SGEMV's below 9 summands, is seen at no other); then, up
/// to [`MORE_SIZES`] more, the first sizes past 1,000 and below 64 whose
/// runs show a part doing what none of those shows (a rest of three
/// summands reading its second, which a rest of one never does).
pub fn reference_sizes(formula: &Formula) -> Vec<usize> {
    if let Formula::Order(crate::order::Order::Fused(k)) = formula {
        // A chain shows its every kind of node in two groups after the
        // first (a tensor core's simulator is slow); the last of two
        // products, as a lone product's node tells no window from an IEEE
        // addition on the inputs a reveal asks.
        return vec![3 * (k - 1) + 2];
    }
    let mut sizes = vec![1000];
    for part in crate::emit::preorder(formula) {
        if let Formula::Below(m, ..) = part {
            let below = m.saturating_sub(1).min(1000);
            sizes.extend(
                [below, *m.min(&(1 << 17))]
                    .into_iter()
                    .filter(|&s| s > SMALL_SIZE),
            );
            sizes.push(m.saturating_add(1000).min(1 << 17));
        }
    }
    sizes.sort_unstable();
    sizes.dedup();
    let mut shown = vec![0u8; crate::emit::preorder(formula).len()];
    let show = |n: usize, shown: &mut Vec<u8>| {
        let roles = crate::emit::plan::roles(formula, n);
        let new = roles.iter().zip(shown.iter()).any(|(r, s)| r & !s != 0);
        for (s, r) in shown.iter_mut().zip(roles) {
            *s |= r;
        }
        new
    };
    for &n in &sizes {
        show(n, &mut shown);
    }
    let mut more = Vec::new();
    for n in (1001..1001 + 128).chain(SMALL_SIZE + 1..64) {
        if more.len() == MORE_SIZES {
            break;
        }
        if show(n, &mut shown) {
            more.push(n);
        }
    }
    sizes.extend(more);
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// The most sizes [`reference_sizes`] adds to show what a part does.
const MORE_SIZES: usize = 6;

/// Reveals `formula`'s tree of the black box at [`reference_sizes`]
/// (predicted by the formula, proven with masked checks, confirmed by
/// replay with its arithmetic) and plans emitted code from them.
pub fn plan(
    formula: &Formula,
    op: Op,
    result: Format,
    probe: &ProbeOptions,
    label: &str,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Planned> {
    // The tree and arithmetic at `n`, or why there is no plan.
    let mut model_at = |n: usize| -> Result<std::result::Result<Model, Planned>> {
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
            skeleton: None,
            nearby: Vec::new(),
            afresh: false,
        };
        let revealed = match reveal_opened(black_box.as_mut(), label, &request, open, observer)? {
            Outcome::Revealed(r) => r,
            Outcome::OrderIndependent(_) => {
                return Err(Error::Irreproducible(Irreproducible::OrderIndependent {
                    label: label.to_string(),
                    n,
                }));
            }
            Outcome::Varies(_) => {
                return Err(Error::Irreproducible(Irreproducible::Varies {
                    label: label.to_string(),
                    n: Some(n),
                }));
            }
        };
        if !revealed.confirmed() {
            return Ok(Err(Planned::NotConfirmed(n, NotConfirmed::ReplayDiffers)));
        }
        let document = revealed.document;
        if *document.tree() != formula.tree(n) {
            return Ok(Err(Planned::NotConfirmed(
                n,
                NotConfirmed::TreeIsNot(formula.to_string()),
            )));
        }
        Ok(Ok(model_of(document, probe.format)?))
    };
    let planned = |formula: &Formula, models: &[Model]| {
        Plan::with_result(formula, probe.format, result, op, models)
    };
    let mut sizes = reference_sizes(formula);
    let mut models = Vec::new();
    for &n in &sizes {
        match model_at(n)? {
            Ok(model) => models.push(model),
            Err(no) => return Ok(no),
        }
    }
    // The arithmetic may change with the size where the order does not
    // (XLA's dot adds an FMA chain up to 32 summands and rounds its
    // products past): a small size's model must follow the plan too.
    // Where it does not, the switch is found by bisection and the formula
    // split there, each side planned from its own sizes.
    if sizes[0] > SMALL_SIZE && !matches!(formula, Formula::Order(crate::order::Order::Fused(_))) {
        let first = match model_at(SMALL_SIZE)? {
            Ok(model) => model,
            Err(no) => return Ok(no),
        };
        let mut with_first = models.clone();
        with_first.push(first.clone());
        if let Ok(plan) = planned(formula, &with_first) {
            // Where it follows, its arithmetic joins the plan: a part the
            // reference sizes never reach (a kernel's rest) is seen there.
            sizes.push(SMALL_SIZE);
            sizes.sort_unstable();
            return Ok(Planned::Plan(Box::new(plan), sizes));
        }
        if planned(formula, std::slice::from_ref(&first)).is_ok() {
            let (mut below, mut past) = (SMALL_SIZE, sizes[0]);
            let mut last = first.clone();
            while past - below > 1 {
                let mid = below + (past - below) / 2;
                let model = match model_at(mid)? {
                    Ok(model) => model,
                    Err(no) => return Ok(no),
                };
                match planned(formula, &[first.clone(), model.clone()]).is_ok() {
                    true => (below, last) = (mid, model),
                    false => past = mid,
                }
            }
            let split = Formula::Below(
                past,
                Box::new(formula.for_fewer_than(past).clone()),
                Box::new(formula.clone()),
            );
            with_first.push(last);
            // A split that plans no better leaves the plan of the
            // reference sizes to say what it refuses.
            if let Ok(plan) = planned(&split, &with_first) {
                sizes.extend([SMALL_SIZE, below]);
                sizes.sort_unstable();
                sizes.dedup();
                return Ok(Planned::Plan(Box::new(plan), sizes));
            }
        }
    }
    Ok(Planned::Plan(Box::new(planned(formula, &models)?), sizes))
}

/// A tree and the arithmetic found at its size.
type Model = (SummationTree, Arithmetic);

/// The size whose arithmetic is compared with the plan of the reference
/// sizes: the smallest with two additions.
const SMALL_SIZE: usize = 3;

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

/// A formula explained now, the sizes it was found from and those it was
/// checked at.
pub type Explanation = (Formula, Vec<usize>, Vec<usize>);

/// What [`prepare`] found for a black box.
#[derive(Debug)]
pub enum Prepared {
    /// The plan, what the emitted code's comment says of it (a line a
    /// statement), and the formula where it was explained now (with the
    /// sizes it was found from and checked at, for a cache to keep).
    Ready {
        /// The plan.
        plan: Box<Plan>,
        /// Lines for the code's comment: what it reproduces, whence.
        what: Vec<String>,
        /// The formula explained now, its sizes revealed and checked.
        explained: Option<Explanation>,
    },
    /// No formula of the order language gives the black box's trees.
    NoFormula,
    /// The black box sums order-independently at the sizes said: no
    /// formula describes it.
    OrderIndependent(OrderIndependent),
    /// At this size the formula's tree, or its arithmetic, is not the
    /// black box's: why.
    NotConfirmed(usize, NotConfirmed),
}

/// What [`prepare_file`] made of a tree file.
#[derive(Debug)]
pub enum FromFile {
    /// The file's black box, the options it was opened with (the file's
    /// offset, unless another was given), and the plan prepared on it.
    Prepared {
        /// The file's black box.
        spec: Spec,
        /// Its options.
        probe: ProbeOptions,
        /// The plan, or why there is none.
        prepared: Box<Prepared>,
    },
    /// The file's tree is not confirmed (its replay did not give the
    /// black box's bits, or it was never replayed): code written from it
    /// would not either.
    Unconfirmed,
    /// No formula is known to give the file's tree (none given, none in
    /// the file, no library's).
    NoFormula,
    /// The formula does not give the file's tree.
    Differs(Formula),
    /// The file names no black box to prove the formula on.
    NoBlackBox(Formula),
}

/// The plan of emitted code from a tree file `doc` (named `name`): its
/// formula (`given`, else the one it was predicted by, else a library's
/// known one that gives its tree), proven on the file's black box with
/// its arithmetic found there again, as a formula given by hand is (a
/// file's claims are not taken on trust). The black box is opened by
/// `open` with `base`'s options, in `dtype` (else the file's), at
/// `offset` (else where the file's tree was found).
#[allow(clippy::too_many_arguments)]
pub fn prepare_file(
    doc: &TreeDocument,
    name: &str,
    given: Option<Formula>,
    base: ProbeOptions,
    dtype: Option<Format>,
    offset: Option<Offset>,
    open: &mut OpenSpec,
    observer: &mut dyn Observer,
) -> Result<FromFile> {
    if !doc.confirmation.as_ref().is_some_and(|c| c.confirmed()) {
        return Ok(FromFile::Unconfirmed);
    }
    let element = dtype.or(doc.dtype).unwrap_or_default();
    crate::emit::element_ok(element)?;
    let formula = match (given, doc.formula()) {
        (Some(f), _) => f,
        (None, Some(f)) => f.clone(),
        (None, None) => match crate::formula::known::matching(doc.tree()) {
            Some(k) => k.formula.parse::<Formula>().map_err(Error::Input)?,
            None => return Ok(FromFile::NoFormula),
        },
    };
    let n = doc.n();
    if formula.tree(n) != *doc.tree() {
        return Ok(FromFile::Differs(formula));
    }
    let Some(spec) = doc.probe.as_deref() else {
        return Ok(FromFile::NoBlackBox(formula));
    };
    let spec: Spec = spec.parse()?;
    let probe = ProbeOptions {
        format: element,
        offset: offset.or(doc.offset.filter(|_| spec.takes_offset())),
        ..base
    };
    let claim = format!("The order: native:{formula}, from the tree file {name} (n = {n})");
    let prepared = prepare(
        spec.as_str(),
        &probe,
        Some((formula, claim)),
        &mut |o| open(&spec, o),
        observer,
    )?;
    Ok(FromFile::Prepared {
        spec,
        probe,
        prepared: Box::new(prepared),
    })
}

/// Everything emitted code for the black box `label` needs: whether it
/// multiplies, its formula (`known`, with what to say of it, else
/// explained now at the default sizes) and the plan ([`plan`]). A known
/// formula (given by hand, the cache's, a tree file's) is a guess until
/// the black box shows its tree: it is proven as an explained formula is
/// ([`prove`]), and refused where it is not.
pub fn prepare(
    label: &str,
    probe: &ProbeOptions,
    known: Option<(Formula, String)>,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<Prepared> {
    crate::emit::element_ok(probe.format)?;
    let mut first = open(&probe.at(1000))?;
    let op = match first.as_dot().is_some() {
        true => Op::Dot,
        false => Op::Sum,
    };
    let about = first.about();
    let result = first.result();
    let may_fuse = first.may_fuse();
    drop(first);
    narrow_ok(label, probe, may_fuse, known.as_ref().map(|(f, _)| f))?;
    let (formula, claim, explained) = match known {
        Some((f, claim)) => match prove(&f, probe, label, open, observer)? {
            Ok(proven) => (f, format!("{claim}; {proven}"), None),
            Err(refused) => return Ok(refused),
        },
        None => match explain_default(probe, label, open, observer)? {
            Ok((f, from, checked)) => {
                let claim = explained_claim(false, &from, &checked);
                (f.clone(), claim, Some((f, from, checked)))
            }
            Err(none) => return Ok(none),
        },
    };
    let (plan, at) = match plan(&formula, op, result, probe, label, open, observer)? {
        Planned::Plan(plan, at) => (plan, at),
        Planned::NotConfirmed(n, why) => return Ok(Prepared::NotConfirmed(n, why)),
    };
    let what = vec![
        format!(
            "The {} of {label} ({}) as it is on the machine that wrote this{}.",
            match op {
                Op::Sum => "sum",
                Op::Dot => "dot product",
            },
            plan.element,
            about.map(|s| format!(": {s}")).unwrap_or_default()
        ),
        format!("{claim}."),
        format!(
            "Each part's arithmetic: from reveals at n = {}, each confirmed by replay.",
            crate::sizes::runs(&at)
        ),
    ];
    Ok(Prepared::Ready {
        plan,
        what,
        explained,
    })
}

/// Refuses f16 and bf16 values before any reveal where the black box
/// (`may_fuse`) or the formula `known` adds in no fused node: emitted
/// code takes them in a tensor core's fused chain only.
fn narrow_ok(
    label: &str,
    probe: &ProbeOptions,
    may_fuse: bool,
    known: Option<&Formula>,
) -> Result<()> {
    let narrow = !matches!(probe.format, Format::F32 | Format::F64);
    if narrow && (!may_fuse || known.is_some_and(|f| !f.may_fuse())) {
        return Err(Error::Input(format!(
            "emitted code takes {} values only in a tensor core's fused chain, which {label} \
             does not add in; other black boxes' code takes f32 or f64 values",
            probe.format
        ))
        .advise(crate::error::Remedy::Give(
            crate::error::Param::Dtype,
            &["f32", "f64"],
        )));
    }
    Ok(())
}

/// A known formula proven at the sizes `fprev explain` reveals (each
/// one) and checks past them (within its budget): what to say of it, or
/// the refusal where the black box refutes it or a size it must hold at
/// cannot be checked.
fn prove(
    formula: &Formula,
    probe: &ProbeOptions,
    label: &str,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<std::result::Result<String, Prepared>> {
    let (mut must, past) = default_sizes()?;
    if let Formula::Order(crate::order::Order::Fused(k)) = formula {
        must = chain_sizes(*k);
    }
    let mut prove_at = |sizes: &[usize], budget| {
        super::prove_known(
            formula,
            sizes,
            budget,
            probe,
            &Default::default(),
            &Confirm::default(),
            label,
            open,
            observer,
        )
    };
    let mut proven = Vec::new();
    for (sizes, budget) in [(must, None), (past, Some(super::VERIFY_BUDGET))] {
        let not_past = match prove_at(&sizes, budget)? {
            Proof::Holds {
                proven: now,
                unchecked,
            } => {
                proven.extend(now);
                unchecked
            }
            Proof::Refuted(n) => {
                return Ok(Err(Prepared::NotConfirmed(
                    n,
                    NotConfirmed::TreeIsNot(formula.to_string()),
                )));
            }
            Proof::Varies(_) => {
                return Err(Error::Irreproducible(Irreproducible::Varies {
                    label: label.to_string(),
                    n: None,
                }));
            }
        };
        match not_past {
            Some((n, why)) if budget.is_none() => {
                return Ok(Err(Prepared::NotConfirmed(
                    n,
                    NotConfirmed::Unproven(formula.to_string(), why),
                )));
            }
            Some((n, why)) => {
                return Ok(Ok(format!(
                    "its tree proven now at n = {} (not checked from n = {n}: {why})",
                    crate::sizes::runs(&proven)
                )));
            }
            None => {}
        }
    }
    Ok(Ok(format!(
        "its tree proven now at n = {}",
        crate::sizes::runs(&proven)
    )))
}

/// The sizes a chain `fused:K` is proven at: one summand, then where its
/// groups of `K - 1` fill, spill over and chain (a tensor core's
/// simulator takes seconds a reveal, where explain's sizes would take an
/// hour). Two summands, one node of two products, are left to the check
/// of the emitted code: no reveal models a lone pair of products.
fn chain_sizes(k: usize) -> Vec<usize> {
    let g = k - 1;
    let mut sizes: Vec<usize> = [1, 3, g, g + 1, 2 * g, 2 * g + 1, 4 * g + 1]
        .into_iter()
        .filter(|&n| n != 2)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// The sizes `fprev explain` reveals, and those it checks past them.
fn default_sizes() -> Result<(Vec<usize>, Vec<usize>)> {
    let reveal: crate::sizes::Sizes = crate::formula::infer::EXPLAIN_SIZES
        .parse()
        .map_err(Error::Input)?;
    let verify: crate::sizes::Sizes = super::VERIFY_SIZES.parse().map_err(Error::Input)?;
    Ok((reveal.0, verify.0))
}

/// `fprev explain`'s formula at its default sizes: the formula, the sizes
/// it was found from and those it was checked at; else why there is none
/// ([`Prepared::NoFormula`], [`Prepared::OrderIndependent`]).
fn explain_default(
    probe: &ProbeOptions,
    label: &str,
    open: &mut Opener,
    observer: &mut dyn Observer,
) -> Result<std::result::Result<Explanation, Prepared>> {
    let (reveal, verify) = default_sizes()?;
    let sizes = super::ExplainSizes {
        reveal,
        verify,
        budget: Some(super::VERIFY_BUDGET),
    };
    let explained = super::explain(
        &sizes,
        probe,
        &Default::default(),
        &Confirm::default(),
        label,
        open,
        observer,
    )?;
    Ok(match explained {
        super::Explained::Found {
            inference,
            trees,
            verified,
        } => inference
            .formula
            .map(|f| {
                let from = trees
                    .iter()
                    .map(SummationTree::n)
                    .filter(|n| !verified.contains(n))
                    .collect();
                (f, from, verified)
            })
            .ok_or(Prepared::NoFormula),
        super::Explained::OrderIndependent(why) => Err(Prepared::OrderIndependent(why)),
        super::Explained::Varies(_) => Err(Prepared::NoFormula),
    })
}

/// What to check emitted code on.
#[derive(Clone, Debug, Default)]
pub struct CheckOn {
    /// The sizes (`None`: [`default_sizes_for`](crate::emit::check::default_sizes_for)
    /// the plan).
    pub sizes: Option<Vec<usize>>,
    /// Random inputs at each size.
    pub trials: usize,
}

/// Emitted code ([`write`]), or the check that refuted it.
#[derive(Debug)]
pub enum Emitted {
    /// The source; and the check it passed, where one was asked, with
    /// its seconds (said in the source's comment too).
    Source {
        /// The source.
        source: String,
        /// The check passed, and how long it took.
        checked: Option<(crate::emit::check::Checked, f64)>,
    },
    /// Its bits differ from the black box's: nothing is to be written.
    Differs(crate::emit::check::Checked),
}

/// Writes `plan` as source in `language`, defining `name`, its comment
/// saying `what`; with `check_on`, the code is first compiled and run
/// against the black box `open` opens (named `label`), and returned only
/// where it gave the black box's bits at every size (the check then said
/// in its comment). `progress` is told each size checked.
#[allow(clippy::too_many_arguments)]
pub fn write(
    plan: &Plan,
    language: crate::emit::Language,
    name: &str,
    what: &[String],
    label: &str,
    check_on: Option<&CheckOn>,
    open: &mut Opener,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Emitted> {
    let mut what = what.to_vec();
    let source = crate::emit::source(plan, language, name, &what.join("\n"))?;
    let Some(on) = check_on else {
        return Ok(Emitted::Source {
            source,
            checked: None,
        });
    };
    let sizes = match &on.sizes {
        Some(sizes) => sizes.clone(),
        None => crate::emit::check::default_sizes_for(plan),
    };
    let started = std::time::Instant::now();
    let checked = check(
        &source, language, name, plan, open, &sizes, on.trials, progress,
    )?;
    if checked.difference(language, label).is_some() {
        return Ok(Emitted::Differs(checked));
    }
    what.push(format!("{}.", checked.passed(label)));
    let source = crate::emit::source(plan, language, name, &what.join("\n"))?;
    Ok(Emitted::Source {
        source,
        checked: Some((checked, started.elapsed().as_secs_f64())),
    })
}

/// Compiles `source` (in `language`, defining `name`, computing what
/// `plan` does) in a directory of its own and runs it against the black
/// box `open` opens, at each of `sizes` on `trials` random inputs
/// ([`crate::emit::check::compare`]); `progress` is told each size done.
#[allow(clippy::too_many_arguments)]
pub fn check(
    source: &str,
    language: crate::emit::Language,
    name: &str,
    plan: &Plan,
    open: &mut Opener,
    sizes: &[usize],
    trials: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<crate::emit::check::Checked> {
    let dir = crate::emit::check::Scratch::new()?;
    let emitted = crate::emit::check::build_plan(source, language, name, plan, &dir.0)?;
    let opts = ProbeOptions {
        format: plan.element,
        ..Default::default()
    };
    crate::emit::check::compare_emitted(open, &emitted, &opts, plan.op, sizes, trials, progress)
}

#[cfg(test)]
mod tests {
    use super::explained_claim;

    #[test]
    fn a_formula_checked_nowhere_past_its_sizes_says_none() {
        let cached = explained_claim(true, &[1, 2, 3], &[]);
        assert!(cached.ends_with("found before from n = 1..3"), "{cached}");
        let now = explained_claim(false, &[1, 2, 3], &[4096]);
        assert!(
            now.ends_with("found from n = 1..3 and checked at n = 4096"),
            "{now}"
        );
    }
}
