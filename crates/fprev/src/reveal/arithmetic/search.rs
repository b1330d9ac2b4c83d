//! Which nodes, and which products, are asked: a sample evenly spaced
//! along the post-order and the boundaries of its runs found by bisection,
//! then (of a formula's tree) a few nodes of each part, then every one,
//! until a model of the answers replays the black box.

use std::collections::BTreeMap;

use crate::arith::{Arithmetic, NodeArithmetic, NodeKey, Product, Products, Rounding};
use crate::check::check_models_all;
use crate::error::{Error, Fault, Result};
use crate::format::Format;
use crate::probe::Dot;
use crate::tree::SummationTree;

use super::asker::Asker;
use super::confirm::confirm;
use super::model::{dropping_ends, model_of};
use super::products;
use super::{ArithOptions, ArithmeticRevelation, Method};

/// Nodes asked before the model is first tried by replay: evenly spaced
/// along the post-order, the bisections between them come on top.
const SAMPLE: usize = 16;

/// Summands added to another summand, all asked when there are no more:
/// each starts an accumulator (a chain of FMAs rounds its first product).
/// A kernel has a few dozen, but a blocked one restarts its accumulators in
/// every block (OpenBLAS's SGEMV: 16 each 4,096 summands), and a sample of
/// runs that repeat with the blocks would alias.
const PAIRS_ASKED_ALL: usize = 1 << 14;

/// Asks a sample of nodes (or every node), then every node if the sample's
/// model fails its replay. `Ok(Err(model))`: the nodes answered, but no
/// model of them replays the black box.
pub(super) fn search(
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

/// Random products that tell apart the product models that all replayed
/// the black box on the confirmation's trials.
const TELL_APART_TRIALS: usize = 1000;

/// Finds how the black box rounds each product, as [`search`] finds the
/// nodes: a sample of the summands, then all of them if the sample's model
/// fails its replay on random `x` and `y`. That replay, which confirms the
/// nodes too, becomes `found`'s confirmation.
pub(super) fn reveal_products(
    probe: &mut dyn Dot,
    tree: &SummationTree,
    keys: &[NodeKey],
    found: &mut ArithmeticRevelation,
    opts: &ArithOptions,
) -> Result<()> {
    let mut leaves = products::LeafAsker::new(probe, tree, keys);
    leaves.knowing(&found.model);
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
        // Fused nodes may align their products at the factors' exponents
        // (a tensor core does), which the products' own answers do not
        // show; nor does a window as wide as the format show how its sums
        // round. The tensor core's alignment is tried first: random
        // products seldom tell it from the products' own (about one in
        // 400 does), so where both replay it, the hardware's is kept.
        let mut models = Vec::new();
        if tree.widest() > 2 {
            let aligned = model.aligning_factors(leaves.probe.format());
            let last = last_step_windowed(&aligned, tree);
            let narrowed = [&aligned, &last].map(|m| m.narrowing_fused(Format::E8m13));
            for m in [aligned, last]
                .into_iter()
                .chain(narrowed.into_iter().flatten())
            {
                for m in [
                    m.rounding_fused(Rounding::TowardZero),
                    m.rounding_fused(Rounding::NearestEven),
                    m,
                ] {
                    if !models.contains(&m) {
                        models.push(m);
                    }
                }
            }
        }
        if !models.contains(&model) {
            models.push(model);
        }
        let (mut report, mut left) =
            check_models_all(tree, &models, &mut *leaves.probe, opts.trials, opts.seed)?;
        trials += report.trials as u64;
        // Models that all replayed it (a window's alignment or rounding
        // seldom shows) are told apart on more random products, so that
        // the first of them is not taken on too little evidence.
        if left.len() > 1 {
            let standing: Vec<Arithmetic> = left.iter().map(|&k| models[k].clone()).collect();
            let (again, still) = check_models_all(
                tree,
                &standing,
                &mut *leaves.probe,
                TELL_APART_TRIALS,
                opts.seed.wrapping_add(1),
            )?;
            trials += again.trials as u64;
            if !still.is_empty() {
                report.trials += again.trials;
                left = still.iter().map(|&k| left[k]).collect();
            }
        }
        if let Some(&k) = left.first() {
            found.model = models.swap_remove(k);
            report.model = Some(found.model.clone());
            found.confirmation = report;
            found.products_asked = leaves.asked;
            found.calls += leaves.calls + trials;
            return Ok(());
        }
        if leaves.asked == askable {
            break;
        }
    }
    Err(Error::BlackBox(Fault::ProductsUnrounded {
        model: found.model.clone(),
    }))
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

/// `model` with a fused chain's last step, a root of two terms (the running
/// sum and the last product) that adds as a plain addition, computing as
/// its fused child does: a tensor core's step of fewer products aligns and
/// truncates them in its window too, which sums (`y = 1`) seldom show.
fn last_step_windowed(model: &Arithmetic, tree: &SummationTree) -> Arithmetic {
    let root = NodeKey::of(tree, tree.root());
    let children = tree.children(tree.root());
    let fused_child = children
        .iter()
        .map(|&c| model.at(&NodeKey::of(tree, c)))
        .find(|a| a.fused_bits.is_some());
    let mut windowed = model.clone();
    if let Some(child) = fused_child
        && children.len() == 2
        && model.at(&root).fused_bits.is_none()
    {
        // The default names it where it computes as the default does.
        windowed.nodes.remove(&root);
        if child != windowed.default {
            windowed.nodes.insert(root, child);
        }
    }
    windowed
}
