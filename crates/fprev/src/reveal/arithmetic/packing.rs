//! Several product questions in one input (docs/ALGORITHMS.md, Arithmetic,
//! Inputs and products): which questions may share it, the scale each is
//! asked at, and how the one answer is read back as one answer each.
//!
//! A product question on summand `i` leaves, at the node `v` that adds
//! `i`'s product, a residue `-c u` with `u` a power of two the question
//! sets and `c` a small count: 3 (1 for the x87 question) when the product
//! keeps the bits asked, and 0, 2 or 4 when it is rounded to nearest to
//! fewer. Questions share an input when
//!
//! - the subtrees of their nodes `v` are disjoint, so that no node below a
//!   `v` holds another question's value: each `v` adds what it adds when
//!   its question is asked alone, at its own scale;
//! - question `b` (from 0) is scaled so that its `u` is `U 8^b`: its count
//!   has three bits of its own, and the sum of every residue, `-U` times
//!   the integer `sum c_b 8^b < 8^k` of `k` questions, and every partial
//!   sum of them are exact in any format of `3k` bits or more, where no
//!   value leaves the normal range;
//! - every node (the root and the result's rounding too) keeps `3k` bits:
//!   a node of the model and the result format bound `k`, and a tree with
//!   fused nodes, whose windows truncate, is asked one question an input.
//!
//! The answer then reads as `k` counts, three bits each; one that is not a
//! whole number of `U` below `8^k`, or holds a count over 4, breaks those
//! assumptions, and its questions are asked again one an input.

use crate::arith::Arithmetic;
use crate::format::Format;
use crate::tree::SummationTree;

use super::FORMATS;

/// Bits each question takes in a shared answer: its count, at most 4.
const BAND_BITS: u32 = 3;

/// Which product questions share an input, and how they are read.
pub(super) struct Packing {
    /// For each summand, the range of the inner nodes (in post-order) of
    /// the subtree of its parent, the node that adds its product.
    spans: Vec<(usize, usize)>,
    /// Questions one input holds.
    pub(super) bands: usize,
    /// The least a residue's unit may be: normal in every node's format.
    floor: f64,
    /// The least and the most a question's scale may be: its values and
    /// its product normal in the inputs' formats and in every format a
    /// product may be rounded to (f16's range bounds them).
    scales: (f64, f64),
}

impl Packing {
    /// The packing of questions on `tree`, whose nodes compute as `model`
    /// says, of inputs in `formats` (as given, rounded, and the second
    /// operand's) and results in `result`.
    pub(super) fn new(
        tree: &SummationTree,
        model: &Arithmetic,
        formats: &[Format],
        result: Format,
    ) -> Self {
        let post = tree.post_order();
        let mut index = vec![0; tree.graph().node_count()];
        let mut lo = vec![0; tree.graph().node_count()];
        for (k, &v) in post.iter().enumerate() {
            index[v.index()] = k;
            // Inner nodes only: a subtree's are a range that ends at it.
            lo[v.index()] = tree
                .children(v)
                .iter()
                .filter(|c| tree.node(**c).leaf.is_none())
                .map(|c| lo[c.index()])
                .fold(k, usize::min);
        }
        let spans = (0..tree.n())
            .map(|i| match tree.parent(tree.leaf(i)) {
                Some(v) => (lo[v.index()], index[v.index()]),
                None => (0, post.len()),
            })
            .collect();
        let nodes: Vec<Format> = std::iter::once(model.default)
            .chain(model.nodes.values().copied())
            .map(|a| a.format)
            .chain([result])
            .collect();
        let bits = nodes.iter().map(|f| f.precision()).min().unwrap_or(0);
        let bands = match tree.widest() {
            ..=2 => (bits / BAND_BITS).max(1) as usize,
            _ => 1,
        };
        let values = || formats.iter().chain(&FORMATS);
        Packing {
            spans,
            bands,
            floor: nodes.iter().map(|f| f.min_normal()).fold(0.0, f64::max),
            scales: (
                values().map(|f| f.min_normal()).fold(0.0, f64::max),
                // A question's values are at most twice its scale.
                values().map(|f| f.max_finite()).fold(f64::MAX, f64::min) / 2.0,
            ),
        }
    }

    /// Whether questions on summands `i` and `j` may share an input: the
    /// nodes adding their products head disjoint subtrees.
    pub(super) fn apart(&self, i: usize, j: usize) -> bool {
        let ((a, b), (c, d)) = (self.spans[i], self.spans[j]);
        b < c || d < a
    }

    /// The scales of questions whose residues count in units `units` (at
    /// scale 1), bottom band first, and the unit `U` of the bottom band,
    /// the least that keeps every value in range; `None` where the scales
    /// span more than the range allows.
    pub(super) fn scales(&self, units: &[f64]) -> Option<(f64, Vec<f64>)> {
        let step = |b: usize| 2f64.powi((BAND_BITS as usize * b) as i32);
        let (least, most) = self.scales;
        let lowest = units
            .iter()
            .enumerate()
            .map(|(b, u)| least * u / step(b))
            .fold(self.floor, f64::max);
        let scales: Vec<f64> = units
            .iter()
            .enumerate()
            .map(|(b, u)| lowest * step(b) / u)
            .collect();
        scales
            .iter()
            .all(|&s| s <= most)
            .then_some((lowest, scales))
    }

    /// The counts of `bands` questions read from their shared answer `out`
    /// in units `lowest`, bottom band first; `None` where it is no such sum.
    pub(super) fn read(out: f64, lowest: f64, bands: usize) -> Option<Vec<u32>> {
        let whole = -out / lowest;
        let top = 2f64.powi((BAND_BITS as usize * bands) as i32);
        if !(0.0..top).contains(&whole) || whole.fract() != 0.0 {
            return None;
        }
        let whole = whole as u64;
        let counts: Vec<u32> = (0..bands)
            .map(|b| ((whole >> (BAND_BITS as usize * b)) & 7) as u32)
            .collect();
        counts.iter().all(|&c| c <= 4).then_some(counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts of 3 (kept) and 0, 2, 4 (rounded) read back band by band;
    /// a sum no packed answers make is no reading.
    #[test]
    fn a_shared_answer_reads_as_each_question_s_count() {
        let u = 2f64.powi(-40);
        let counts = [3u32, 0, 4, 2, 3];
        let out: f64 = -counts
            .iter()
            .enumerate()
            .map(|(b, &c)| f64::from(c) * u * 8f64.powi(b as i32))
            .sum::<f64>();
        assert_eq!(Packing::read(out, u, 5), Some(counts.to_vec()));
        for odd in [-5.0 * u, 3.0 * u, -0.5 * u, -(8f64.powi(5)) * u] {
            assert_eq!(Packing::read(odd, u, 5), None, "{odd}");
        }
    }

    /// Scales keep every question's values in f16's normal range, and a
    /// pack spanning more than it is refused.
    #[test]
    fn scales_stay_in_every_product_format_s_range() {
        let tree = crate::Order::Pairwise.tree(64);
        let model = Arithmetic::uniform(crate::arith::NodeArithmetic::ieee(Format::F32));
        let packing = Packing::new(&tree, &model, &[Format::F32], Format::F32);
        assert_eq!(packing.bands, 8);
        let units = [2f64.powi(-25); 8];
        let (lowest, scales) = packing.scales(&units).unwrap();
        assert!(
            scales
                .iter()
                .all(|&s| s >= Format::F16.min_normal() && 2.0 * s <= 65504.0)
        );
        assert_eq!(lowest, 2f64.powi(-25) * scales[0]);
        assert!(packing.scales(&[2f64.powi(-25); 11]).is_none());
        // Two cherries are apart; the two leaves of one are not.
        assert!(packing.apart(0, 2));
        assert!(!packing.apart(0, 1));
    }
}
