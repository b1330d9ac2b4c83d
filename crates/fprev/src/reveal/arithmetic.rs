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

mod confirmed;
mod products;

pub use confirmed::{Confirmed, confirm_arithmetic};

use std::collections::BTreeMap;

use petgraph::graph::NodeIndex;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::arith::{Arithmetic, NodeArithmetic, NodeKey, Product, Products, Rounding};
use crate::check::{CheckReport, check_models, check_models_all};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::inputs::Inputs;
use crate::probe::{Batch, Probe};
use crate::reduce::Replay;
use crate::tree::SummationTree;

/// Nodes asked before the model is first tried by replay: evenly spaced
/// along the post-order, the bisections between them come on top.
const SAMPLE: usize = 16;

/// Summands added to another summand, all asked when there are no more:
/// each starts an accumulator (a chain of FMAs rounds its first product).
/// A kernel has a few dozen, but a blocked one restarts its accumulators in
/// every block (OpenBLAS's SGEMV: 16 each 4,096 summands), and a sample of
/// runs that repeat with the blocks would alias.
const PAIRS_ASKED_ALL: usize = 1 << 14;

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
        return Err(Error::Input(format!(
            "the tree has {} summands but the black box takes {}",
            tree.n(),
            probe.n()
        )));
    }
    let fallback = NodeArithmetic::ieee(probe.accumulator());
    let mut asker = Asker::new(probe, tree)?;
    let mut leaves = products::LeafAsker::new(&mut *asker.probe, tree, &asker.keys);
    let inputs = leaves.inputs()?;
    let input_calls = leaves.calls;
    let with_products = with_products && asker.probe.multiplies();
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
            if asker.probe.multiplies() {
                reveal_products(&mut *asker.probe, tree, &asker.keys, &mut found, opts)?;
            }
            return Ok(found);
        }
        Ok(Err(model)) => Error::BlackBox(format!(
            "no arithmetic model reproduces the black box's bits: its nodes answered as \
             rounded additions ({model}), but replays of that model with every format and \
             rounding at the root differ from it"
        )),
        Err(Error::BlackBox(why)) => Error::BlackBox(why),
        Err(e) => return Err(e),
    };
    // Against plain additions in the format it declares.
    let plain = Arithmetic::uniform(fallback);
    let (error, plain_error) = errors_on_swamped_summands(tree, &plain, asker.probe)?;
    if error * 4.0 < plain_error {
        return Err(Error::BlackBox(format!(
            "the black box adds in the revealed order, but no rounded additions reproduce \
             it: given a 1 and many summands too small to change it alone, it errs by \
             {error:.2e} in all, where additions in {fallback} in its order err by \
             {plain_error:.2e}: a compensated (Kahan, Neumaier) or otherwise more accurate \
             sum"
        )));
    }
    Err(unexplained)
}

/// Asks a sample of nodes (or every node), then every node if the sample's
/// model fails its replay. `Ok(Err(model))`: the nodes answered, but no
/// model of them replays the black box.
fn search(
    asker: &mut Asker,
    tree: &SummationTree,
    fallback: NodeArithmetic,
    inputs: Option<Format>,
    parts: Option<&[u32]>,
    opts: &ArithOptions,
    with_products: bool,
) -> Result<std::result::Result<ArithmeticRevelation, Arithmetic>> {
    let nodes = asker.askable();
    // A fused root's window shows without a sibling; its rounding does not.
    let root_window = match tree.children(tree.root()).len() {
        3.. => Some(asker.window(tree.root())?),
        _ => None,
    };
    let modeled = |per_node: &[NodeArithmetic], root: Option<NodeArithmetic>| Arithmetic {
        inputs,
        ..model_of(tree, &nodes, per_node, fallback, root, root_window)
    };
    let mut known: Vec<Option<NodeArithmetic>> = vec![None; nodes.len()];
    let mut trials = 0u64;
    // A sample and its runs, then (of a formula's tree) a few nodes of
    // each group, then every node. A group: the nodes of one part whose
    // parents are of one part (the last step of a lane's chain, below the
    // lanes' fold, answers unlike the steps below it).
    let by_parts = parts.filter(|_| !opts.every_node).map(|parts| {
        let mut groups: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
        for (k, v) in nodes.iter().enumerate() {
            let parent = asker.parent[v.index()].expect("not the root");
            groups
                .entry((parts[v.index()], parts[parent.index()]))
                .or_default()
                .push(k);
        }
        groups.into_values().collect::<Vec<_>>()
    });
    let stages = [
        Some(Stage::Runs(opts.every_node)),
        by_parts.as_deref().map(Stage::Parts),
        Some(Stage::Runs(true)),
    ];
    for stage in stages.into_iter().flatten() {
        let mut ask = |ks: &[usize]| ks.iter().map(|&k| asker.ask(nodes[k])).collect();
        let per_node = match stage {
            Stage::Runs(every) => {
                ask_runs(&mut known, every, &mut ask)?;
                fill_runs(&known)
            }
            Stage::Parts(groups) => ask_parts(&mut known, groups, &mut ask)?,
        };
        asker.continues = false;
        // Of a formula's tree, chain ends are asked a few a group, whatever
        // the stage: a sum of 2^20 summands has hundreds of chains, and
        // each answer costs replays of its chain's subtree.
        let ends_by = by_parts.as_deref().map(|groups| (groups, &nodes[..]));
        let model = modeled(&per_node, None);
        let (dropping, spent) =
            dropping_ends(asker.probe, tree, &asker.keys, &model, ends_by, opts)?;
        trials += spent;
        let settled = |per_node: &[NodeArithmetic], root: Option<NodeArithmetic>| {
            modeled(per_node, root).dropping_error_at(&dropping)
        };
        let first = model.dropping_error_at(&dropping);
        let (report, model, spent) = confirm(
            first,
            &per_node,
            &settled,
            asker.probe,
            tree,
            opts,
            with_products,
        )?;
        trials += spent;
        if let Some(model) = model {
            let method = if asker.asked == nodes.len() {
                Method::EveryNode
            } else {
                Method::Sampled
            };
            return Ok(Ok(ArithmeticRevelation {
                model,
                method,
                nodes_asked: asker.asked,
                products_asked: 0,
                calls: asker.calls + trials,
                confirmation: report,
            }));
        }
        if asker.asked == nodes.len() {
            break;
        }
    }
    Ok(Err(modeled(&fill_runs(&known), None)))
}

/// How [`search`] picks the nodes it asks.
#[derive(Clone, Copy)]
enum Stage<'g> {
    /// A sample and the boundaries of its runs, or (`true`) every node.
    Runs(bool),
    /// The first and last node of each group (a formula's part), every
    /// node of a group whose two differ.
    Parts(&'g [Vec<usize>]),
}

/// Each group's arithmetic from its first and last node, where they
/// agree; otherwise every node of it is asked.
fn ask_parts<T: Copy + PartialEq>(
    known: &mut [Option<T>],
    groups: &[Vec<usize>],
    ask: &mut dyn FnMut(&[usize]) -> Result<Vec<T>>,
) -> Result<Vec<T>> {
    let ends: Vec<usize> = groups.iter().flat_map(|g| [g[0], g[g.len() - 1]]).collect();
    fill(known, ends, ask)?;
    let mut per_node: Vec<Option<T>> = known.to_vec();
    for g in groups {
        let (first, last) = (known[g[0]], known[g[g.len() - 1]]);
        if first == last {
            for &k in g {
                per_node[k] = per_node[k].or(first);
            }
        } else {
            fill(known, g.clone(), ask)?;
            for &k in g {
                per_node[k] = known[k];
            }
        }
    }
    Ok(per_node
        .into_iter()
        .map(|a| a.expect("every group asked"))
        .collect())
}

/// Finds how the black box rounds each product, as [`search`] finds the
/// nodes: a sample of the summands, then all of them if the sample's model
/// fails its replay on random `x` and `y`. That replay, which confirms the
/// nodes too, becomes `found`'s confirmation.
fn reveal_products(
    probe: &mut dyn Probe,
    tree: &SummationTree,
    keys: &[NodeKey],
    found: &mut ArithmeticRevelation,
    opts: &ArithOptions,
) -> Result<()> {
    let mut leaves = products::LeafAsker::new(probe, tree, keys);
    leaves.rounding_inputs_to(found.model.inputs);
    // Two classes, each asked in runs: summands added to another summand
    // (where an FMA chain starts, with one product rounded: few, so all
    // of them are asked) and summands added to a partial sum.
    let (paired, single): (Vec<usize>, Vec<usize>) = leaves
        .askable()
        .into_iter()
        .partition(|&i| leaves.paired(i));
    let classes = [(paired, PAIRS_ASKED_ALL), (single, 0)];
    let mut known: Vec<Vec<Option<Product>>> =
        classes.iter().map(|(c, _)| vec![None; c.len()]).collect();
    let askable: usize = classes.iter().map(|(c, _)| c.len()).sum();
    let mut trials = 0u64;
    for every in [opts.every_node, true] {
        let mut per_leaf = vec![Product::Exact; tree.n()];
        for ((class, all), known) in classes.iter().zip(&mut known) {
            let every = every || class.len() <= *all;
            ask_runs(known, every, &mut |ks| {
                leaves.products(&ks.iter().map(|&k| class[k]).collect::<Vec<_>>())
            })?;
            if !class.is_empty() {
                for (&i, p) in class.iter().zip(fill_runs(known)) {
                    per_leaf[i] = p;
                }
            }
        }
        let model = Arithmetic {
            products: Some(Products::from_leaves(&per_leaf)),
            ..found.model.clone()
        };
        let (report, matched) = check_models(
            tree,
            std::slice::from_ref(&model),
            &mut *leaves.probe,
            opts.trials,
            opts.seed,
            0,
        )?;
        trials += report.trials as u64;
        if matched.is_some() {
            found.model = model;
            found.confirmation = report;
            found.products_asked = leaves.asked;
            found.calls += leaves.calls + trials;
            return Ok(());
        }
        if leaves.asked == askable {
            break;
        }
    }
    Err(Error::BlackBox(format!(
        "the black box's nodes add as {}, but no rounding of its products reproduces its \
         dot products: its products answered as rounded in one format each, yet a replay \
         on random x and y differs",
        found.model
    )))
}

/// Asks `ask(ks)` for a sample of the positions of `known` evenly spaced,
/// then for those between two that differ, by bisection, until every
/// boundary between runs is found; with `every`, for every position not
/// yet known. `ask` answers many positions at once, each round of the
/// bisection in one go, for black boxes that answer several a call.
fn ask_runs<T: Copy + PartialEq>(
    known: &mut [Option<T>],
    every: bool,
    ask: &mut dyn FnMut(&[usize]) -> Result<Vec<T>>,
) -> Result<()> {
    if every {
        return fill(known, (0..known.len()).collect(), ask);
    }
    if known.is_empty() {
        return Ok(());
    }
    let count = SAMPLE.min(known.len());
    let mut picks: Vec<usize> = (0..count)
        .map(|k| k * (known.len() - 1) / (count - 1).max(1))
        .collect();
    picks.dedup();
    fill(known, picks.clone(), ask)?;
    // Intervals whose ends differ, halved a round at a time.
    let mut open: Vec<(usize, usize)> = picks.windows(2).map(|w| (w[0], w[1])).collect();
    loop {
        open.retain(|&(lo, hi)| hi > lo + 1 && known[lo] != known[hi]);
        if open.is_empty() {
            return Ok(());
        }
        fill(
            known,
            open.iter().map(|&(lo, hi)| lo + (hi - lo) / 2).collect(),
            ask,
        )?;
        open = open
            .iter()
            .flat_map(|&(lo, hi)| {
                let mid = lo + (hi - lo) / 2;
                [(lo, mid), (mid, hi)]
            })
            .collect();
    }
}

/// Asks the positions `ks` not known yet, all at once.
fn fill<T>(
    known: &mut [Option<T>],
    ks: Vec<usize>,
    ask: &mut dyn FnMut(&[usize]) -> Result<Vec<T>>,
) -> Result<()> {
    let ks: Vec<usize> = ks.into_iter().filter(|&k| known[k].is_none()).collect();
    if !ks.is_empty() {
        for (k, v) in ks.iter().zip(ask(&ks)?) {
            known[*k] = Some(v);
        }
    }
    Ok(())
}

/// Every position as the nearest asked one before it says (after it, for
/// those before the first): the runs the asked positions mark.
fn fill_runs<T: Copy>(known: &[Option<T>]) -> Vec<T> {
    let first = known.iter().flatten().next().copied();
    let mut last = first;
    known
        .iter()
        .map(|k| {
            if k.is_some() {
                last = *k;
            }
            last.expect("one position asked")
        })
        .collect()
}

/// The model giving `nodes` what `per_node` says, the root `root` (its
/// first asked child's arithmetic when `None`), every other node (fused
/// ones) that too.
fn model_of(
    tree: &SummationTree,
    nodes: &[NodeIndex],
    per_node: &[NodeArithmetic],
    fallback: NodeArithmetic,
    root: Option<NodeArithmetic>,
    root_window: Option<u32>,
) -> Arithmetic {
    if tree.n() < 2 {
        // No node adds anything: the model is the declared accumulator.
        return Arithmetic::uniform(root.unwrap_or(fallback));
    }
    // By node index: a sum of millions of summands has millions of nodes.
    let mut at: Vec<Option<NodeArithmetic>> = vec![None; tree.graph().node_count()];
    for (v, a) in nodes.iter().zip(per_node) {
        at[v.index()] = Some(*a);
    }
    let below = tree
        .children(tree.root())
        .iter()
        .find_map(|c| at[c.index()])
        .or(per_node.last().copied())
        .unwrap_or(fallback);
    let root_arithmetic = root.unwrap_or(NodeArithmetic {
        fused_bits: root_window,
        ..below
    });
    let asked = |node: NodeIndex| {
        if node == tree.root() {
            root_arithmetic
        } else {
            at[node.index()].unwrap_or(below)
        }
    };
    Arithmetic::from_nodes(tree, |node| {
        let a = asked(node);
        // The last step of a compensated chain answers as a plain addition
        // (its parent carries no error on): one that adds to a step of a
        // chain in its format (either child: a loop run right to left has
        // its running sum second) is taken as that chain's last.
        let ends_a_chain = !a.compensated
            && a.fused_bits.is_none()
            && tree.children(node).iter().any(|&c| {
                let inner = !tree.children(c).is_empty();
                let c = asked(c);
                inner && c.compensated && c.format == a.format && c.rounding == a.rounding
            });
        NodeArithmetic {
            compensated: a.compensated || ends_a_chain,
            ..a
        }
    })
}

/// The last steps of `model`'s compensated chains that drop their error
/// rather than take it off, and the calls spent finding them. Both answer
/// a query as a plain addition would, and random inputs seldom tell them
/// apart where a chain ends on a short rest; so for each chain, random
/// inputs under it alone (zero elsewhere: other chains add nothing and
/// carry no error) are replayed both ways until the two part, and the
/// black box is asked that input.
fn dropping_ends(
    probe: &mut dyn Probe,
    tree: &SummationTree,
    keys: &[NodeKey],
    model: &Arithmetic,
    by_parts: Option<(&[Vec<usize>], &[NodeIndex])>,
    opts: &ArithOptions,
) -> Result<(Vec<NodeKey>, u64)> {
    /// Random inputs replayed both ways, at most, to find one they part on
    /// (a chain ending on a short rest parts on about one in a hundred),
    /// and the inputs asked, at most, when the answer is neither way.
    const DRAWS: usize = 2048;
    const ASKS: usize = 4;
    let is_end = model.chain_ends(tree, keys);
    let ends: Vec<NodeIndex> = tree
        .post_order()
        .into_iter()
        .filter(|v| is_end[v.index()])
        .collect();
    if ends.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let end_keys: Vec<NodeKey> = ends.iter().map(|v| keys[v.index()]).collect();
    let format = probe.format();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let (mut found, mut calls) = (Vec::new(), 0);
    let mut x = vec![0.0; tree.n()];
    let mut out = [0.0];
    // Of a formula's tree, the ends of one part are asked at its first and
    // last end; where those agree, every end of the part goes their way.
    let mut stand_for: Vec<(NodeIndex, NodeKey, Vec<NodeKey>)> = Vec::new();
    match by_parts {
        Some((groups, nodes)) => {
            let mut part_of = vec![usize::MAX; tree.graph().node_count()];
            for (g, members) in groups.iter().enumerate() {
                for &k in members {
                    part_of[nodes[k].index()] = g;
                }
            }
            let mut by_group: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
            for (e, v) in ends.iter().enumerate() {
                by_group.entry(part_of[v.index()]).or_default().push(e);
            }
            for members in by_group.into_values() {
                let (first, last) = (members[0], members[members.len() - 1]);
                let keys: Vec<NodeKey> = members.iter().map(|&e| end_keys[e]).collect();
                stand_for.push((ends[first], end_keys[first], keys.clone()));
                if last != first {
                    stand_for.push((ends[last], end_keys[last], keys));
                }
            }
        }
        None => stand_for.extend(ends.iter().zip(&end_keys).map(|(&v, &k)| (v, k, vec![k]))),
    }
    let mut verdicts: Vec<Option<bool>> = Vec::with_capacity(stand_for.len());
    for &(v, ..) in &stand_for {
        let under = tree.leaves_under(v);
        // With 0 elsewhere every node above the end adds it to 0, exactly:
        // the end's own subtree replays what the whole tree would.
        let (sub, sub_model) = subtree(tree, v, keys, model);
        // The end is the subtree's root: all its summands, renumbered from 0.
        let sub_end = NodeKey {
            first: 0,
            size: under.len(),
        };
        let keeps = Replay::with_arithmetic(&sub, &sub_model).returning(format);
        let drops = Replay::with_arithmetic(&sub, &sub_model.dropping_error_at(&[sub_end]))
            .returning(format);
        let mut asked = 0;
        let mut verdict = None;
        for draw in 0..DRAWS {
            let kind = Inputs::ALL[draw % Inputs::ALL.len()];
            let values = kind.draw(format, under.len(), &mut rng);
            for (&i, &value) in under.iter().zip(&values) {
                x[i] = value;
            }
            let (kept, dropped) = (keeps.sum(&values), drops.sum(&values));
            if kept.to_bits() == dropped.to_bits() {
                continue;
            }
            probe.sum(&x, &mut out)?;
            calls += 1;
            asked += 1;
            if out[0].to_bits() == dropped.to_bits() {
                verdict = Some(true);
            } else if out[0].to_bits() == kept.to_bits() {
                verdict = Some(false);
            }
            if verdict.is_some() || asked == ASKS {
                break;
            }
        }
        for &i in &under {
            x[i] = 0.0;
        }
        verdicts.push(verdict);
    }
    // An end stands for its part's ends only where the part's first and
    // last agree; where they do not, each stands for itself alone (the
    // others of the part keep their error, as the model has them).
    let mut k = 0;
    while k < stand_for.len() {
        let pair = k + 1 < stand_for.len() && stand_for[k + 1].2 == stand_for[k].2;
        let (first, second) = (
            verdicts[k],
            if pair { verdicts[k + 1] } else { verdicts[k] },
        );
        if first == second {
            if first == Some(true) {
                found.extend(&stand_for[k].2);
            }
        } else {
            for j in [k, k + 1] {
                if verdicts[j] == Some(true) {
                    found.push(stand_for[j].1);
                }
            }
        }
        k += if pair { 2 } else { 1 };
    }
    Ok((found, calls))
}

/// The subtree under `v` as a tree of its own (its summands renumbered in
/// order), and `model` on it.
fn subtree(
    tree: &SummationTree,
    v: NodeIndex,
    keys: &[NodeKey],
    model: &Arithmetic,
) -> (SummationTree, Arithmetic) {
    let leaves = tree.leaves_under(v);
    let mut builder = crate::tree::TreeBuilder::new(leaves.len());
    // Original node by the copy's index, for the model.
    let mut original: Vec<NodeIndex> = leaves.iter().map(|&i| tree.leaf(i)).collect();
    let mut copied = vec![None; tree.graph().node_count()];
    for (k, &i) in leaves.iter().enumerate() {
        copied[tree.leaf(i).index()] = Some(builder.leaf(k));
    }
    let mut stack = vec![(v, false)];
    while let Some((u, ready)) = stack.pop() {
        if copied[u.index()].is_some() {
            continue;
        }
        if ready {
            let children: Vec<NodeIndex> = tree
                .children(u)
                .iter()
                .map(|c| copied[c.index()].expect("children first"))
                .collect();
            let node = builder.sum(&children);
            original.push(u);
            copied[u.index()] = Some(node);
        } else {
            stack.push((u, true));
            stack.extend(tree.children(u).iter().map(|&c| (c, false)));
        }
    }
    let root = copied[v.index()].expect("copied");
    let sub = builder.finish(root).expect("a subtree covers its summands");
    let sub_model = Arithmetic {
        inputs: model.inputs,
        ..Arithmetic::from_nodes(&sub, |node| model.at(&keys[original[node.index()].index()]))
    };
    (sub, sub_model)
}

/// Replays `first`, the model of `nodes` with its root as its children
/// (`model_of(per_node, None)`), and the model with each other arithmetic
/// at the root, and returns the first that matches every trial. A model of
/// plain additions goes unreplayed where they replayed the black box
/// already, or (`with_products`) where the replay of its products will
/// replay it too.
fn confirm(
    first: Arithmetic,
    per_node: &[NodeArithmetic],
    model_of: &dyn Fn(&[NodeArithmetic], Option<NodeArithmetic>) -> Arithmetic,
    probe: &mut dyn Probe,
    tree: &SummationTree,
    opts: &ArithOptions,
    with_products: bool,
) -> Result<(CheckReport, Option<Arithmetic>, u64)> {
    let plain = |format| {
        first
            == Arithmetic {
                inputs: first.inputs,
                ..Arithmetic::uniform(NodeArithmetic::ieee(format))
            }
    };
    if with_products && plain(first.default.format) {
        let report = CheckReport {
            model: Some(first.clone()),
            ..CheckReport::default()
        };
        return Ok((report, Some(first), 0));
    }
    if let Some(format) = opts.confirmed_plain
        && first == Arithmetic::uniform(NodeArithmetic::ieee(format))
    {
        let report = CheckReport {
            trials: opts.trials,
            mismatch: None,
            accumulator: Some(format),
            model: Some(first.clone()),
        };
        return Ok((report, Some(first), 0));
    }
    // The root as its children, then every other arithmetic there.
    let mut models = vec![first.clone()];
    let below = first.at(&NodeKey {
        first: 0,
        size: tree.n(),
    });
    // The last step of a fused chain may take fewer summands than the
    // others, down to one: a root of two terms aligned and truncated as
    // its fused children's are.
    let mut windows = vec![below.fused_bits];
    for &c in tree.children(tree.root()) {
        if tree.children(c).len() > 2 {
            let node = tree.node(c);
            let key = NodeKey {
                first: node.min_leaf,
                size: node.size,
            };
            windows.push(first.at(&key).fused_bits);
        }
    }
    windows.dedup();
    // An x87 root is tried where values of 53 bits or more reach it (f64
    // or x87 nodes, or f64 inputs): above f64 nodes it keeps what an f64
    // root drops (a loop whose last addition stays in a register), and no
    // query asks the root, which has no sibling. Above narrower values its
    // exact sum mostly fits f64 and it seldom differs from a root rounding
    // once, and its replay is slow.
    let x87_below = std::iter::once(probe.format())
        .chain(per_node.iter().map(|a| a.format))
        .any(|f| f.precision() >= Format::F64.precision());
    for rounding in Rounding::ALL {
        for format in FORMATS
            .into_iter()
            .filter(|f| *f != Format::X87 || x87_below)
        {
            for &fused_bits in &windows {
                let root = Some(NodeArithmetic {
                    rounding,
                    fused_bits,
                    ..NodeArithmetic::ieee(format)
                });
                let model = model_of(per_node, root);
                if !models.contains(&model) {
                    models.push(model);
                }
            }
        }
    }
    // Random inputs seldom tell a root that rounds twice from one that
    // rounds once; inputs made to do so settle it first, in a few calls,
    // so that the random ones replay only the models left.
    let mut standing: Vec<usize> = (0..models.len()).collect();
    let mut spent = 0;
    let ties = root_ties(tree, probe.format());
    if !ties.is_empty() {
        let replays: Vec<Replay> = models
            .iter()
            .map(|m| Replay::with_arithmetic(tree, m).returning(probe.format()))
            .collect();
        for x in &ties {
            let mut out = [0.0];
            probe.sum(x, &mut out)?;
            spent += 1;
            standing.retain(|&k| replays[k].sum(x).to_bits() == out[0].to_bits());
        }
    }
    let rest: Vec<Arithmetic> = standing.iter().map(|&k| models[k].clone()).collect();
    let (mut report, mut found) = (CheckReport::default(), None);
    if !rest.is_empty() {
        let left;
        (report, left) = check_models_all(tree, &rest, probe, opts.trials, opts.seed)?;
        spent += report.trials as u64;
        found = left.first().map(|&k| rest[k].clone());
    }
    // Last, where nothing else replays it: one compensated step at the
    // root (two blocks joined by Kahan's step, its error taken off), which
    // answers every query as a plain addition, the root being asked none.
    if found.is_none() && below.fused_bits.is_none() {
        let compensated = NodeArithmetic {
            compensated: true,
            drops_error: false,
            ..below
        };
        let model = model_of(per_node, Some(compensated));
        let (again, left) = check_models_all(
            tree,
            std::slice::from_ref(&model),
            probe,
            opts.trials,
            opts.seed,
        )?;
        spent += again.trials as u64;
        if !left.is_empty() {
            report = again;
            found = Some(model);
        }
    }
    report.model.clone_from(&found);
    Ok((report, found, spent))
}

/// Inputs on which a root that rounds twice (to a wide format, then to the
/// output's) and one that rounds once part, which random inputs seldom
/// show: OpenBLAS's `sdot` adds its f32 body and its f64 tail in f64 and
/// returns a float. `1` (or `1 + ulp`) under one child of the root, half an
/// ulp of it under a second child and a tiny term of the opposite side
/// beside it there: a wide child keeps both, and the root, rounding once,
/// lands off the tie; rounding to f64 first, it loses the tiny term and
/// rounds the tie to even.
fn root_ties(tree: &SummationTree, format: Format) -> Vec<Vec<f64>> {
    let p = format.precision() as i32;
    let (half, tiny) = (2f64.powi(-p), 2f64.powi(-p - 30));
    if !format.represents(tiny) {
        return Vec::new();
    }
    let keys = NodeKey::all(tree);
    let children = tree.children(tree.root());
    let mut inputs = Vec::new();
    for (a, b) in [(0, 1), (1, 0)] {
        let (Some(a), Some(b)) = (children.get(a), children.get(b)) else {
            continue;
        };
        let [c0, c1, ..] = tree.children(*b)[..] else {
            continue;
        };
        let (k, i, j) = (
            keys[a.index()].first,
            keys[c0.index()].first,
            keys[c1.index()].first,
        );
        // 1 + half + tiny is past the tie (up, once); 1 + ulp + half - tiny
        // short of it (down to 1 + ulp, once; up to the even 1 + 2 ulp, twice).
        for (one, side) in [(1.0, tiny), (1.0 + 2.0 * half, -tiny)] {
            let mut x = vec![0.0; tree.n()];
            x[k] = one;
            x[i] = half;
            x[j] = side;
            inputs.push(x);
        }
    }
    inputs
}

/// Whether the black box is much closer to the exact sum than plain
/// additions in its accumulator, left to right, on the inputs of
/// [`errors_on_swamped_summands`]: both errors when it is. Of a black box
/// whose masked answers fit no tree, that names what it likely is.
pub(super) fn closer_than_plain(probe: &mut dyn Probe) -> Result<Option<(f64, f64)>> {
    let n = probe.n();
    if n < 3 {
        return Ok(None);
    }
    let tree = crate::order::Order::Sequential.tree(n);
    let plain = Arithmetic::uniform(NodeArithmetic::ieee(probe.accumulator()));
    let (error, plain_error) = errors_on_swamped_summands(&tree, &plain, probe)?;
    Ok((error * 4.0 < plain_error).then_some((error, plain_error)))
}

/// The distance from the exact sum of the black box's results, and of a
/// replay of `model`'s, summed over inputs made to tell a compensated sum
/// from plain additions: one summand 1, every other a quarter of 1's ulp.
/// Plain additions lose each quarter that meets the 1 alone; a compensated
/// sum carries what it lost into the next addition and keeps nearly all.
fn errors_on_swamped_summands(
    tree: &SummationTree,
    model: &Arithmetic,
    probe: &mut dyn Probe,
) -> Result<(f64, f64)> {
    let format = probe.format();
    let n = probe.n();
    let replay = Replay::with_arithmetic(tree, model).returning(format);
    let quarter = 2f64.powi(-(format.precision() as i32) - 1);
    let mut out = [0.0];
    let (mut black_box, mut replayed) = (0.0, 0.0);
    for k in 0..n.min(8) {
        let mut x = vec![quarter; n];
        x[k * n / n.min(8)] = 1.0;
        probe.sum(&x, &mut out)?;
        let exact = exact_sum(&x);
        black_box += (out[0] - exact).abs();
        replayed += (replay.sum(&x) - exact).abs();
    }
    Ok((black_box, replayed))
}

/// The sum of `x`, exact to well below an f64 ulp of the result
/// (Neumaier's compensated sum with a second-order correction).
fn exact_sum(x: &[f64]) -> f64 {
    let (mut s, mut c) = (0f64, 0f64);
    for &v in x {
        let t = s + v;
        c += if s.abs() >= v.abs() {
            (s - t) + v
        } else {
            (v - t) + s
        };
        s = t;
    }
    s + c
}

/// Asks single nodes what they compute.
struct Asker<'p> {
    probe: &'p mut dyn Probe,
    tree: &'p SummationTree,
    keys: Vec<NodeKey>,
    parent: Vec<Option<NodeIndex>>,
    /// `S`: large, yet with room below it for the narrowest `d` asked.
    scale: f64,
    /// The last query's input, and the positions it set.
    input: Vec<f64>,
    last: [usize; 3],
    /// Whether the probe's last input was `input` (no replay since).
    continues: bool,
    out: Vec<f64>,
    calls: u64,
    asked: usize,
}

impl<'p> Asker<'p> {
    fn new(probe: &'p mut dyn Probe, tree: &'p SummationTree) -> Result<Self> {
        let format = probe.format();
        if format.precision() < 8 {
            return Err(Error::Input(format!(
                "the arithmetic of {format} inputs cannot be asked node by node: a {format} \
                 value has too few bits to carry a rounding"
            )));
        }
        let mut parent = vec![None; tree.graph().node_count()];
        for node in tree.post_order() {
            for c in tree.children(node) {
                parent[c.index()] = Some(node);
            }
        }
        // A power of two with room above it for three terms and, in f16,
        // room below it for the finest `d` the format can hold.
        let scale = 2f64.powi(((format.max_finite() / 4.0).log2().floor() as i32).min(16));
        let n = probe.n();
        Ok(Asker {
            probe,
            tree,
            keys: NodeKey::all(tree),
            parent,
            scale,
            input: vec![0.0; n],
            last: [0; 3],
            continues: false,
            out: vec![0.0; 1],
            calls: 0,
            asked: 0,
        })
    }

    /// The nodes below the root, in post-order (the root has no sibling
    /// to cancel against).
    fn askable(&self) -> Vec<NodeIndex> {
        self.tree
            .post_order()
            .into_iter()
            .filter(|&v| v != self.tree.root())
            .collect()
    }

    /// One query: `S` under `v`'s first child, `d` under its second, `-S`
    /// under a sibling; the black box's answer.
    fn query(&mut self, v: NodeIndex, d: f64) -> Result<f64> {
        let at = self.across(v);
        self.query_at(at, d)
    }

    /// Where `v`'s queries go: a leaf under its first child, one under its
    /// second, one under a sibling.
    fn across(&self, v: NodeIndex) -> [usize; 3] {
        let children = self.tree.children(v);
        let w = self.parent[v.index()].expect("v is not the root");
        let sibling = *self
            .tree
            .children(w)
            .iter()
            .find(|&&c| c != v)
            .expect("a parent has another child");
        let a = self.keys[children[0].index()].first;
        let b = self.keys[children[1].index()].first;
        let c = self.keys[sibling.index()].first;
        [a, b, c]
    }

    /// Whether `d` survives the query at `at`: the answer is `d` (kept) or
    /// 0 (dropped), anything else is no rounded addition of `v`.
    fn survives(&mut self, v: NodeIndex, at: [usize; 3], d: f64) -> Result<bool> {
        let got = self.query_at(at, d)?;
        if got == d {
            Ok(true)
        } else if got == 0.0 {
            Ok(false)
        } else {
            Err(self.odd(v, d, got))
        }
    }

    /// One query: `S` at `a`, `d` at `b`, `-S` at `c`, 0 elsewhere.
    fn query_at(&mut self, [a, b, c]: [usize; 3], d: f64) -> Result<f64> {
        // As edits of the last query: a probe that keeps its input (the
        // Python bridge) then writes six values, not n.
        let positions = [self.last[0], self.last[1], self.last[2], a, b, c];
        let values = [0.0, 0.0, 0.0, self.scale, d, -self.scale];
        let batch = Batch {
            base: &self.input,
            starts: &[0, positions.len()],
            positions: &positions,
            values: &values,
            continues: self.continues,
        };
        self.probe.sum_batch(&batch, &mut self.out)?;
        for (p, v) in positions.into_iter().zip(values) {
            self.input[p] = v;
        }
        self.last = [a, b, c];
        self.continues = true;
        self.calls += 1;
        Ok(self.out[0])
    }

    /// Whether `v` keeps `S + S 2^-p` exactly: more than `p` bits. `None`
    /// when the input format cannot carry `d`, or `v` is a fused node whose
    /// window (`window` bits below `S`) drops it before rounding.
    fn keeps(&mut self, v: NodeIndex, p: u32, window: Option<u32>) -> Result<Option<bool>> {
        let d = self.scale * 2f64.powi(-(p as i32));
        if !self.probe.format().represents(d) || d == 0.0 || window.is_some_and(|w| p > w) {
            return Ok(None);
        }
        let at = self.across(v);
        self.survives(v, at, d).map(Some)
    }

    /// The bits a fused node keeps below its largest term's leading bit:
    /// `S`, `S 2^-q` and `-S` in three of its children, the largest `q`
    /// whose `S 2^-q` survives the alignment.
    fn window(&mut self, v: NodeIndex) -> Result<u32> {
        let children = self.tree.children(v);
        let [a, b, c] = [0, 1, 2].map(|k| self.keys[children[k].index()].first);
        let (mut kept, mut dropped) = (0u32, 64u32);
        while dropped - kept > 1 {
            let q = (kept + dropped) / 2;
            let d = self.scale * 2f64.powi(-(q as i32));
            if !self.probe.format().represents(d) {
                dropped = q;
                continue;
            }
            if self.survives(v, [a, b, c], d)? {
                kept = q;
            } else {
                dropped = q;
            }
        }
        Ok(kept)
    }

    /// What node `v` computes.
    fn ask(&mut self, v: NodeIndex) -> Result<NodeArithmetic> {
        self.asked += 1;
        let fused_bits = match self.tree.children(v).len() {
            2 => None,
            _ => Some(self.window(v)?),
        };
        // The narrowest format that does not keep p + 1 bits of its own p;
        // x87, the widest, is asked only of a node that keeps f64's 53, so
        // that an f64 node costs two queries, as an f32 one does.
        let (mut lo, mut hi) = (0usize, FORMATS.len() - 1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.keeps(v, FORMATS[mid].precision(), fused_bits)? {
                Some(true) => lo = mid + 1,
                Some(false) => hi = mid,
                // Too fine to carry in the input format: assume no finer.
                None => hi = mid,
            }
        }
        if lo == FORMATS.len() - 1
            && self.keeps(v, Format::X87.precision(), fused_bits)? == Some(true)
        {
            lo += 1;
        }
        if lo == FORMATS.len() {
            return Err(Error::BlackBox(format!(
                "{} keeps more than {} bits of a sum: not a rounded addition but a \
                 compensated (Kahan, Neumaier) or exact one, which no summation tree of \
                 additions reproduces",
                self.keys[v.index()],
                Format::X87.precision()
            )));
        }
        let mut format = FORMATS[lo];
        // A step of Kahan's sum keeps the tie `S 2^-p` of its own format
        // (the parent takes the error carried off `-S` first) but not
        // `S 2^-(p+1)` (half of it is a tie in `-S + error`), where an
        // addition in a wider format keeps both: asked of a node that
        // seems to keep more than the inputs carry.
        let compensated = lo > 0
            && fused_bits.is_none()
            && format.precision() > self.probe.format().precision()
            && self.keeps(v, FORMATS[lo - 1].precision() + 1, None)? == Some(false);
        if compensated {
            format = FORMATS[lo - 1];
        }
        // S + 1.5 ulp lies halfway between S + ulp and S + 2 ulp: to nearest
        // (ties to even) gives 2 ulp, truncation 1 ulp. A fused node must
        // keep the half-ulp bit to be asked so.
        let ulp = self.scale * 2f64.powi(1 - format.precision() as i32);
        let d = 1.5 * ulp;
        let inside = fused_bits.is_none_or(|w| w >= format.precision());
        let rounding = if self.probe.format().represents(d) && inside {
            let got = self.query(v, d)?;
            if got == 2.0 * ulp {
                Rounding::NearestEven
            } else if got == ulp {
                Rounding::TowardZero
            } else {
                return Err(self.odd(v, d, got));
            }
        } else {
            Rounding::NearestEven
        };
        Ok(NodeArithmetic {
            rounding,
            fused_bits,
            compensated,
            ..NodeArithmetic::ieee(format)
        })
    }

    fn odd(&self, v: NodeIndex, d: f64, got: f64) -> Error {
        Error::BlackBox(format!(
            "{} answered {got:e} where a rounded addition keeps {d:e} or nothing (S = {:e} \
             added to {d:e}, then -S): its result depends on more than its two operands",
            self.keys[v.index()],
            self.scale
        ))
    }
}
