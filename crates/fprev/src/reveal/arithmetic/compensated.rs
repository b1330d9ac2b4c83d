//! Telling a compensated sum from rounded additions: a black box much
//! closer to the exact sum than plain additions in its order, on summands
//! too small to change a 1 alone.

use crate::arith::{Arithmetic, NodeArithmetic};
use crate::error::{Error, Fault, Result};
use crate::probe::Probe;
use crate::reduce::Replay;
use crate::tree::SummationTree;

/// Whether the black box is much closer to the exact sum than plain
/// additions in its accumulator, left to right, on the inputs of
/// [`errors_on_swamped_summands`]: both errors when it is. Of a black box
/// whose masked answers fit no tree, that names what it likely is.
pub(in crate::reveal) fn closer_than_plain(probe: &mut dyn Probe) -> Result<Option<(f64, f64)>> {
    let n = probe.n();
    if n < 3 {
        return Ok(None);
    }
    let tree = crate::order::Order::Sequential.tree(n);
    let plain = Arithmetic::uniform(NodeArithmetic::ieee(probe.accumulator()));
    let (error, plain_error) = errors_on_swamped_summands(&tree, &plain, probe)?;
    Ok((error * 4.0 < plain_error).then_some((error, plain_error)))
}

/// Whether the black box's order depends on the values, where `tree` (its
/// masked answers) is one fused node of every summand and no model
/// replays it: a fused node
/// truncates summands far below its largest term, yet the black box,
/// given a 1 and many summands too small to change it alone, keeps their
/// sum, so it adds them among themselves first (a sum that sorts its
/// inputs by magnitude meets every pair of masks, its largest summands,
/// last, as one fused node). Returns the error that says so, with the
/// black box's and the tree's errors on those inputs; `None` otherwise.
pub fn order_depends_on_values(
    probe: &mut dyn Probe,
    tree: &SummationTree,
) -> Result<Option<Error>> {
    let widest = tree.widest();
    // Its masks meet last, all at once: one fused node of every summand.
    // A chain of narrower fused nodes (a tensor core's) is an order, and a
    // window wider than the model's keeps the small summands too.
    if widest <= 2 || widest < probe.n() {
        return Ok(None);
    }
    let fused = Arithmetic::uniform(NodeArithmetic::ieee(probe.accumulator()));
    let (error, fused_error) = errors_on_swamped_summands(tree, &fused, probe)?;
    Ok((error * 4.0 < fused_error).then(|| {
        Error::BlackBox(Fault::ValueOrder {
            widest,
            error,
            fused_error,
        })
    }))
}

/// The distance from the exact sum of the black box's results, and of a
/// replay of `model`'s, summed over inputs made to tell a compensated sum
/// from plain additions: one summand 1, every other a quarter of 1's ulp
/// in the accumulator. Plain additions lose each quarter that meets the 1
/// alone; a compensated sum carries what it lost into the next addition
/// and keeps nearly all. Where the input format cannot hold such a quarter
/// (f16 inputs in an f32 accumulator, as tensor cores take them), a black
/// box that multiplies forms it as a product of two normal numbers; one
/// that does not cannot be asked, and both errors are 0.
pub(super) fn errors_on_swamped_summands(
    tree: &SummationTree,
    model: &Arithmetic,
    probe: &mut dyn Probe,
) -> Result<(f64, f64)> {
    let format = probe.format();
    let accumulator = probe.accumulator();
    let n = probe.n();
    let replay = Replay::with_arithmetic(tree, model).returning(probe.result());
    let Some((x_small, y_small)) = format.as_product(-(accumulator.precision() as i32) - 1) else {
        return Ok((0.0, 0.0));
    };
    let as_products = y_small != 1.0;
    if as_products && probe.as_dot().is_none() {
        return Ok((0.0, 0.0));
    }
    let mut out = [0.0];
    let (mut black_box, mut replayed) = (0.0, 0.0);
    for k in 0..n.min(8) {
        let one = k * n / n.min(8);
        let mut x = vec![x_small; n];
        let mut y = vec![y_small; n];
        x[one] = 1.0;
        y[one] = 1.0;
        let terms: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a * b).collect();
        match probe.as_dot() {
            Some(dot) if as_products => dot.dot(&x, &y, &mut out)?,
            _ => probe.sum(&x, &mut out)?,
        }
        let exact = exact_sum(&terms);
        black_box += (out[0] - exact).abs();
        replayed += (replay.sum(&terms) - exact).abs();
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
