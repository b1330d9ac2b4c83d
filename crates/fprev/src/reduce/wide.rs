//! The replay of a model with nodes wider than `f64` (an x87 accumulator):
//! every partial sum is carried as an [`Extended`] value, so that a node
//! keeps the 64 bits the hardware keeps and the result is rounded to the
//! black box's type once, from the root's own value.

use crate::arith::{Extended, NodeArithmetic, Rounding};
use crate::format::Format;

/// Evaluates the nodes (children's slots `slots[starts[k]..starts[k + 1]]`,
/// each node's arithmetic `node(k)`; of compensated steps, `steps`: each
/// node's place in its chain) on the summands `values` (`rest[i]`: what
/// summand `i`'s exact product has beyond its `f64` value), and rounds the
/// root to `result`.
pub(super) fn evaluate(
    values: &[f64],
    rest: &[f64],
    slots: &[u32],
    starts: &[u32],
    node: impl Fn(usize) -> NodeArithmetic,
    steps: Option<&[super::Step]>,
    result: Format,
) -> f64 {
    // A product an `f64` cannot hold enters the wide format rounded to its
    // 64 bits, as an x87 multiplication rounds it.
    let mut wide: Vec<Extended> = values
        .iter()
        .enumerate()
        .map(|(i, &v)| match rest.get(i) {
            Some(&low) if low != 0.0 => Extended::from_f64(v).add(
                Extended::from_f64(low),
                Format::X87,
                Rounding::NearestEven,
            ),
            _ => Extended::from_f64(v),
        })
        .collect();
    let inner = starts.len() - 1;
    wide.reserve(inner);
    let mut carried = match steps {
        Some(_) => vec![Extended::from_f64(0.0); wide.len() + inner],
        None => Vec::new(),
    };
    let mut terms = Vec::new();
    for (k, w) in starts.windows(2).enumerate() {
        let node = node(k);
        let add = |p: Extended, q: Extended| p.add(q, node.format, node.rounding);
        let ops = &slots[w[0] as usize..w[1] as usize];
        let v = match *ops {
            [a, b] if node.compensated => {
                let step = super::Step::at(steps, k);
                let (s, x) = step.operands([a, b]);
                let (v, error) = super::compensated_step(
                    (wide[s], carried[s]),
                    wide[x],
                    step.ends_chain && !node.drops_error,
                    add,
                );
                carried[wide.len()] = error;
                v
            }
            [a, b] => add(wide[a as usize], wide[b as usize]),
            // A fused node of a wide model is not one the reveal finds: its
            // terms are taken at their nearest f64.
            _ => {
                terms.clear();
                terms.extend(ops.iter().map(|&o| wide[o as usize].to_f64(Format::F64)));
                Extended::from_f64(node.sum(&terms))
            }
        };
        wide.push(v);
    }
    wide.last().map_or(0.0, |root| root.to_f64(result))
}
