//! The asker of node questions: `S`, `d` and `-S` placed around one node,
//! and what the node keeps of `d` naming its format, its rounding and, of a
//! fused node, its window.

use petgraph::graph::NodeIndex;

use crate::arith::{NodeArithmetic, NodeKey, Rounding};
use crate::error::{Error, Fault, Result};
use crate::format::{Format, Summand};
use crate::probe::{Batch, Probe};
use crate::tree::SummationTree;

use super::FORMATS;

/// Asks single nodes what they compute.
pub(super) struct Asker<'p> {
    pub(super) probe: &'p mut dyn Probe,
    /// What one input can be.
    summand: Summand,
    tree: &'p SummationTree,
    pub(super) keys: Vec<NodeKey>,
    pub(super) parent: Vec<Option<NodeIndex>>,
    /// `S`: large, yet with room below it for the narrowest `d` asked.
    scale: f64,
    /// The last query's input, and the positions it set.
    input: Vec<f64>,
    last: [usize; 3],
    /// Whether the probe's last input was `input` (no replay since).
    pub(super) continues: bool,
    out: Vec<f64>,
    pub(super) calls: u64,
    pub(super) asked: usize,
}

impl<'p> Asker<'p> {
    pub(super) fn new(probe: &'p mut dyn Probe, tree: &'p SummationTree) -> Result<Self> {
        let format = probe.format();
        let summand = crate::probe::summand(&*probe);
        if summand == Summand::Value(format) && format.precision() < 8 {
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
        let top = summand.mask().min(probe.accumulator().mask());
        let scale = 2f64.powi((top.log2() as i32 - 2).min(16));
        let n = probe.n();
        Ok(Asker {
            probe,
            summand,
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
    pub(super) fn askable(&self) -> Vec<NodeIndex> {
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
        if !self.summand.represents(d) || d == 0.0 || window.is_some_and(|w| p > w) {
            return Ok(None);
        }
        let at = self.across(v);
        self.survives(v, at, d).map(Some)
    }

    /// The bits a fused node keeps below its largest term's leading bit:
    /// `S`, `S 2^-q` and `-S` in three of its children, the largest `q`
    /// whose `S 2^-q` survives the alignment.
    pub(super) fn window(&mut self, v: NodeIndex) -> Result<u32> {
        let children = self.tree.children(v);
        let [a, b, c] = [0, 1, 2].map(|k| self.keys[children[k].index()].first);
        let (mut kept, mut dropped) = (0u32, 64u32);
        while dropped - kept > 1 {
            let q = (kept + dropped) / 2;
            let d = self.scale * 2f64.powi(-(q as i32));
            if !self.summand.represents(d) {
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
    pub(super) fn ask(&mut self, v: NodeIndex) -> Result<NodeArithmetic> {
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
            return Err(Error::BlackBox(Fault::KeepsMore {
                node: self.keys[v.index()],
                bits: Format::X87.precision(),
            }));
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
        let rounding = if self.summand.represents(d) && inside {
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
        Error::BlackBox(Fault::Operands {
            node: self.keys[v.index()],
            got,
            d,
            scale: self.scale,
        })
    }
}
