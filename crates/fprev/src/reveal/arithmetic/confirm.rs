//! A model's confirmation by replay, with each arithmetic the root may
//! have (the root has no sibling, so no query asks it): inputs made to
//! tell a root that rounds twice from one that rounds once first, random
//! inputs then, and a compensated root last.

use crate::arith::{Arithmetic, NodeArithmetic, NodeKey, Rounding};
use crate::check::{CheckReport, check_models_all};
use crate::error::Result;
use crate::format::Format;
use crate::probe::Probe;
use crate::reduce::Replay;
use crate::tree::SummationTree;

use super::{ArithOptions, FORMATS};

/// Replays `first`, the model of `nodes` with its root as its children
/// (`model_of(per_node, None)`), and the model with each other arithmetic
/// at the root, and returns the first that matches every trial. A model of
/// plain additions goes unreplayed where they replayed the black box
/// already, or (`with_products`) where the replay of its products will
/// replay it too.
pub(super) fn confirm(
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
            power: None,
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
            windows.push(first.at(&NodeKey::of(tree, c)).fused_bits);
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
    // A fused window as wide as the format's significand leaves its sums
    // almost nothing to round, so the queries seldom show how they round:
    // each model stands with its fused nodes rounding either way. Nor do
    // they show a window narrower than the format rounding to E8M13 (Ada's
    // and Hopper's fp8 instructions), which sums that carry tell apart.
    if tree.widest() > 2 {
        let flipped: Vec<Arithmetic> = models
            .iter()
            .flat_map(|m| std::iter::once(m.clone()).chain(m.narrowing_fused(Format::E8m13)))
            .flat_map(|m| Rounding::ALL.map(|r| m.rounding_fused(r)))
            .collect();
        for m in flipped {
            if !models.contains(&m) {
                models.push(m);
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
            .map(|m| Replay::with_arithmetic(tree, m).returning(probe.result()))
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
