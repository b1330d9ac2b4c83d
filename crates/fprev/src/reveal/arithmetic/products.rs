//! What reaches the leaves: the format a black box rounds its inputs to
//! before it uses them, and how a dot product, GEMV or GEMM rounds each
//! product `x_i * y_i` before the addition that takes it
//! (docs/ALGORITHMS.md, Arithmetic).
//!
//! Both are asked like the nodes, with a value that carries a bit the
//! rounding in question would drop and a second summand that cancels the
//! rest exactly:
//!
//! - **inputs**: `1 + 2^-q` under one child of a node and `-1` under the
//!   other leave `2^-q` when the inputs keep `q` fraction bits; the
//!   largest such `q` names the format they are rounded to;
//! - **a product**: `x_i = 1.5` and `y_i = 1 - 2^-k` multiply to
//!   `1.5 - 1.5 2^-k`, which takes `k + 2` significant bits; `-1.5` in the
//!   other child of `i`'s parent (two bits, exact in any format) leaves
//!   `-1.5 2^-k` exactly when the product reaches the addition with them.
//!   The most bits kept name the format it is rounded to; a product that
//!   keeps two more bits than its inputs have is taken as exact (an FMA,
//!   or f32 products formed in f64). A format between that and the exact
//!   product's width (x87's 64 bits for f64 inputs) is not told apart
//!   here; the replay that confirms the model then fails and says so.
//!
//! A product under a fused node (three or more children) is taken as
//! exact: its window, asked with the node, already says what it keeps.

use crate::arith::{NodeKey, Product};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::probe::Probe;
use crate::tree::SummationTree;

use super::FORMATS;

/// Asks a black box about its inputs and products, one query a call.
pub(super) struct LeafAsker<'p> {
    pub(super) probe: &'p mut dyn Probe,
    tree: &'p SummationTree,
    /// For each summand: a summand under its parent's other child, when
    /// that parent adds two terms.
    partner: Vec<Option<usize>>,
    /// Significant bits of the inputs once the black box has them.
    precision: u32,
    x: Vec<f64>,
    y: Vec<f64>,
    out: Vec<f64>,
    /// Calls of the black box.
    pub(super) calls: u64,
    /// Products asked.
    pub(super) asked: usize,
}

impl<'p> LeafAsker<'p> {
    pub(super) fn new(probe: &'p mut dyn Probe, tree: &'p SummationTree) -> Self {
        let n = tree.n();
        let precision = probe.format().precision();
        let keys = NodeKey::all(tree);
        let mut partner = vec![None; n];
        for node in tree.post_order() {
            if let [l, r] = tree.children(node)[..] {
                for (c, other) in [(l, r), (r, l)] {
                    if keys[c.index()].size == 1 {
                        partner[keys[c.index()].first] = Some(keys[other.index()].first);
                    }
                }
            }
        }
        LeafAsker {
            probe,
            tree,
            partner,
            precision,
            x: vec![0.0; n],
            y: vec![1.0; n],
            out: vec![0.0; 1],
            calls: 0,
            asked: 0,
        }
    }

    /// Whether summand `i` is added to another summand (its parent's other
    /// child is a leaf), rather than to a partial sum.
    pub(super) fn paired(&self, i: usize) -> bool {
        self.partner[i].is_some_and(|j| self.partner[j] == Some(i))
    }

    /// Takes the inputs as rounded to `inputs` (what [`LeafAsker::inputs`]
    /// found), so that products are asked with values the black box keeps.
    pub(super) fn rounding_inputs_to(&mut self, inputs: Option<Format>) {
        if let Some(f) = inputs {
            self.precision = self.precision.min(f.precision());
        }
    }

    /// The summands whose products can be asked: those whose parent adds
    /// two terms.
    pub(super) fn askable(&self) -> Vec<usize> {
        (0..self.tree.n())
            .filter(|&i| self.partner[i].is_some())
            .collect()
    }

    /// The format the black box rounds its inputs to, `None` when it keeps
    /// every bit of its input format.
    pub(super) fn inputs(&mut self) -> Result<Option<Format>> {
        let format = self.probe.format();
        let root = self.tree.root();
        let children = self.tree.children(root);
        if children.len() < 2 {
            return Ok(None);
        }
        let keys = NodeKey::all(self.tree);
        let (a, b) = (
            keys[children[0].index()].first,
            keys[children[1].index()].first,
        );
        let top = format.precision() - 1;
        let mut kept = |q: u32| -> Result<bool> {
            let tiny = 2f64.powi(-(q as i32));
            self.x[a] = 1.0 + tiny;
            self.x[b] = -1.0;
            let got = self.call(false)?;
            self.x[a] = 0.0;
            self.x[b] = 0.0;
            Ok(got == tiny)
        };
        if kept(top)? {
            return Ok(None);
        }
        let lo = largest_kept(0, top, &mut kept)?;
        self.precision = lo + 1;
        named_by_precision(lo + 1).map(Some).ok_or_else(|| {
            Error::BlackBox(format!(
                "the black box keeps {} significant bits of its {format} inputs, which is no \
                 format fprev knows",
                lo + 1
            ))
        })
    }

    /// How summand `i`'s product reaches its addition.
    pub(super) fn product(&mut self, i: usize) -> Result<Product> {
        self.asked += 1;
        let other = self.partner[i].expect("an askable summand");
        let top = self.precision + 2;
        // kept(m): whether the product keeps m significant bits, m = k + 2.
        let mut kept = |m: u32| -> Result<bool> {
            let tiny = 2f64.powi(2 - m as i32);
            self.x[i] = 1.5;
            self.y[i] = 1.0 - tiny;
            self.x[other] = -1.5;
            let got = self.call(true)?;
            self.x[i] = 0.0;
            self.y[i] = 1.0;
            self.x[other] = 0.0;
            Ok(got == -1.5 * tiny)
        };
        if kept(top)? {
            return Ok(Product::Exact);
        }
        // Most rounded products are rounded to the inputs' own format:
        // that is two queries; anything else is bisected.
        let own = top - 2;
        if !kept(own + 1)? && kept(own)? {
            return named_by_precision(own)
                .map(Product::Rounded)
                .ok_or_else(|| unnamed(i, own));
        }
        // Two bits always are kept.
        let lo = largest_kept(2, top, &mut kept)?;
        named_by_precision(lo)
            .map(Product::Rounded)
            .ok_or_else(|| unnamed(i, lo))
    }

    /// One call on the current `x` (and `y`, for a product).
    fn call(&mut self, multiply: bool) -> Result<f64> {
        if multiply {
            self.probe.dot(&self.x, &self.y, &mut self.out)?;
        } else {
            self.probe.sum(&self.x, &mut self.out)?;
        }
        self.calls += 1;
        Ok(self.out[0])
    }
}

/// The largest `q` in `lo..hi` with `kept(q)`, by bisection, given that
/// `kept(lo)` holds (or is assumed) and `kept(hi)` does not.
fn largest_kept(
    mut lo: u32,
    mut hi: u32,
    kept: &mut impl FnMut(u32) -> Result<bool>,
) -> Result<u32> {
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if kept(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

fn unnamed(i: usize, bits: u32) -> Error {
    Error::BlackBox(format!(
        "the product of x{i} keeps {bits} significant bits, which is no format fprev knows"
    ))
}

/// The format of `precision` significant bits among those a node or a
/// product may round to.
fn named_by_precision(precision: u32) -> Option<Format> {
    FORMATS.into_iter().find(|f| f.precision() == precision)
}
