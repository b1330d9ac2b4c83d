//! What reaches the leaves: the format a black box rounds its inputs to
//! before it uses them, and how a dot product, GEMV or GEMM rounds each
//! product `x_i * y_i` before the addition that takes it
//! (docs/ALGORITHMS.md, Arithmetic).
//!
//! Both are asked like the nodes, with a value that carries a bit the
//! rounding in question would drop and a second summand that cancels the
//! rest exactly:
//!
//! - **inputs**: `1 + 2^-q` and `-1`, two summands added to each other
//!   (else under the root's two children), leave `2^-q` when the inputs
//!   keep `q` fraction bits; the largest such `q` names the format they
//!   are rounded to (no node below them rounds them first);
//! - **a product**: `x_i = 1.5` and `y_i = 1 - 2^-k` multiply to
//!   `1.5 - 1.5 2^-k`, which takes `k + 2` significant bits; `-1.5` in the
//!   other child of `i`'s parent (two bits, exact in any format) leaves
//!   `-1.5 2^-k` exactly when the product reaches the addition with them.
//!   The most bits kept name the format it is rounded to; a product that
//!   keeps two more bits than its inputs have is taken as exact (an FMA,
//!   or f32 products formed in f64), except that a product of f64 inputs
//!   is asked once more whether it keeps 66 bits: `x_i = 1 + 2^-33` and
//!   `y_i = 1 - 2^-33` multiply to `1 - 2^-66`, and `-1` beside it (exact
//!   however its own product is rounded) leaves the `-2^-66` that x87's
//!   64 bits round away.
//!
//! A product under a fused node (three or more children) is taken as
//! exact: its window, asked with the node, already says what it keeps.

use crate::arith::{Arithmetic, NodeKey, Product};
use crate::error::{Error, Fault, Result};
use crate::format::Format;
use crate::probe::{Dot, Probe};
use crate::tree::SummationTree;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::inputs::Inputs;
use crate::reveal::oracle::Oracle;

use super::FORMATS;
use super::packing::Packing;

/// The bits asked of a product of f64 inputs that keeps all 55 the
/// `1.5 (1 - 2^(2-m))` questions can carry: past x87's 64.
const X87_QUESTION: u32 = 66;

/// The most values the rows of one question call hold: a GEMV of 2^20
/// summands asks in 64 rows, 512 MiB of `f64`.
const MAX_VALUES: usize = 1 << 26;

/// How many times as many questions as a call holds it looks at: past
/// them, questions that could not join wait for the next call.
const LOOK_AHEAD: usize = 8;

/// One product question at scale 1 (see [`LeafAsker::question`]).
struct Question {
    i: usize,
    partner: usize,
    x: f64,
    y: f64,
    partner_x: f64,
    unit: f64,
    kept: u32,
}

/// Asks a black box about its inputs and products: its inputs one query a
/// call, its products many.
pub(super) struct LeafAsker<'p> {
    pub(super) probe: &'p mut dyn Probe,
    tree: &'p SummationTree,
    /// The tree's node keys ([`NodeKey::all`]).
    keys: &'p [NodeKey],
    /// For each summand: a summand under its parent's other child, when
    /// that parent adds two terms.
    partner: Vec<Option<usize>>,
    /// Significant bits of the inputs once the black box has them.
    precision: u32,
    /// Which product questions share an input, once the nodes are known.
    packing: Option<Packing>,
    /// The rows questions are asked in (see [`LeafAsker::rows`]).
    rows: Vec<usize>,
    calibrated: bool,
    /// Every row's `x`, `n` values each, and the one `y`.
    x: Vec<f64>,
    y: Vec<f64>,
    out: Vec<f64>,
    /// Calls of the black box.
    pub(super) calls: u64,
    /// Products asked.
    pub(super) asked: usize,
}

impl<'p> LeafAsker<'p> {
    /// An asker of `probe`, whose order is `tree`, with node keys `keys`.
    pub(super) fn new(
        probe: &'p mut dyn Probe,
        tree: &'p SummationTree,
        keys: &'p [NodeKey],
    ) -> Self {
        let n = tree.n();
        let precision = probe.format().precision();
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
            keys,
            partner,
            precision,
            packing: None,
            rows: vec![0],
            calibrated: false,
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

    /// Takes what `model` found: the inputs as rounded to its `inputs`,
    /// so that products are asked with values the black box keeps, and its
    /// nodes' formats, which say how many product questions share an input.
    pub(super) fn knowing(&mut self, model: &Arithmetic) {
        let format = self.probe.format();
        if let Some(f) = model.inputs {
            self.precision = self.precision.min(f.precision());
        }
        let operands = [
            format,
            model.inputs.unwrap_or(format),
            crate::probe::second_operand(&*self.probe),
        ];
        self.packing = Some(Packing::new(
            self.tree,
            model,
            &operands,
            self.probe.result(),
        ));
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
        // Two summands added to each other, where there are: no node below
        // their sum rounds them, whatever the nodes elsewhere keep.
        let cherry = (0..self.tree.n())
            .find(|&i| self.paired(i))
            .and_then(|i| Some((i, self.partner[i]?)));
        let children = self.tree.children(self.tree.root());
        let (a, b) = match cherry {
            Some(pair) => pair,
            None if children.len() >= 2 => (
                self.keys[children[0].index()].first,
                self.keys[children[1].index()].first,
            ),
            None => return Ok(None),
        };
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
            Error::BlackBox(Fault::InputBits {
                bits: lo + 1,
                format,
            })
        })
    }

    /// How each summand of `leaves` has its product reach its addition.
    /// Every summand's search runs at once, one question per summand a
    /// round, so a black box with several rows (a GEMV, a GEMM) answers as
    /// many questions a call as it has rows that multiply as row 0 does.
    pub(super) fn products(&mut self, leaves: &[usize]) -> Result<Vec<Product>> {
        self.asked += leaves.len();
        let mut searches = vec![Search::Start; leaves.len()];
        loop {
            let asking: Vec<(usize, u32)> = searches
                .iter()
                .enumerate()
                .filter_map(|(k, s)| s.question(self.precision).map(|m| (k, m)))
                .collect();
            if asking.is_empty() {
                break;
            }
            let questions: Vec<(usize, u32)> =
                asking.iter().map(|&(k, m)| (leaves[k], m)).collect();
            let answers = self.kept(&questions)?;
            for (&(k, _), kept) in asking.iter().zip(answers) {
                searches[k].answer(kept, self.precision);
            }
        }
        searches
            .into_iter()
            .zip(leaves)
            .map(|(s, &i)| match s {
                Search::Done(None) => Ok(Product::Exact),
                Search::Done(Some(bits)) => named_by_precision(bits)
                    .map(Product::Rounded)
                    .ok_or_else(|| unnamed(i, bits)),
                _ => unreachable!("every search ends"),
            })
            .collect()
    }

    /// Whether each product `(i, m)` keeps `m` significant bits: `x_i =
    /// 1.5` and `y_i = 1 - 2^(2-m)` multiply to `m` bits, and `-1.5` at
    /// `i`'s partner leaves `-1.5 2^(2-m)` when they all reach the
    /// addition. A call holds a pack of questions a row ([`Packing`]);
    /// `y` is shared by the rows, so a call never asks a summand and its
    /// partner together. A pack whose answer does not read as one has its
    /// questions asked again, each in a pack of its own.
    fn kept(&mut self, questions: &[(usize, u32)]) -> Result<Vec<bool>> {
        let n = self.tree.n();
        let rows = self.rows(questions.len())?.to_vec();
        let bands = self.packing.as_ref().map_or(1, |p| p.bands);
        let mut answers = vec![false; questions.len()];
        let mut alone = vec![false; questions.len()];
        let mut left: Vec<usize> = (0..questions.len()).collect();
        while !left.is_empty() {
            let packs = self.packs(questions, &mut left, &alone, rows.len(), bands);
            let mut scaled = Vec::with_capacity(packs.len());
            for (pack, &r) in packs.iter().zip(&rows) {
                let values: Vec<Question> =
                    pack.iter().map(|&q| self.question(questions[q])).collect();
                let (lowest, scales) = match pack.len() {
                    1 => (values[0].unit, vec![1.0]),
                    _ => self
                        .packing
                        .as_ref()
                        .and_then(|p| p.scales(&values.iter().map(|v| v.unit).collect::<Vec<_>>()))
                        .expect("a pack's scales were checked as it was made"),
                };
                for (v, s) in values.iter().zip(&scales) {
                    self.x[r * n + v.i] = v.x * s;
                    self.x[r * n + v.partner] = v.partner_x * s;
                    self.y[v.i] = v.y;
                }
                scaled.push((values, lowest));
            }
            let height = rows[packs.len() - 1] + 1;
            dot(self.probe)?.dot(&self.x[..height * n], &self.y, &mut self.out[..height])?;
            self.calls += 1;
            for ((pack, &r), (values, lowest)) in packs.iter().zip(&rows).zip(&scaled) {
                for v in values {
                    self.x[r * n + v.i] = 0.0;
                    self.x[r * n + v.partner] = 0.0;
                    self.y[v.i] = 1.0;
                }
                let out = self.out[r];
                match pack[..] {
                    [q] => answers[q] = out == -f64::from(values[0].kept) * values[0].unit,
                    _ => match Packing::read(out, *lowest, pack.len()) {
                        Some(counts) => {
                            for ((&q, v), c) in pack.iter().zip(values).zip(counts) {
                                answers[q] = c == v.kept;
                            }
                        }
                        None => {
                            for &q in pack {
                                alone[q] = true;
                                left.push(q);
                            }
                        }
                    },
                }
            }
        }
        Ok(answers)
    }

    /// The next call's packs, one a row, taken from `left` (which keeps
    /// the rest): questions whose nodes are apart and whose values fit in
    /// one input, at most `bands` a pack, one alone where `alone` says,
    /// each pack in the order of its bands.
    /// A call looks at a bounded number of questions past the first, so
    /// that questions which cannot share (a chain's) cost no scan of all
    /// the rest each call.
    fn packs(
        &self,
        questions: &[(usize, u32)],
        left: &mut Vec<usize>,
        alone: &[bool],
        rows: usize,
        bands: usize,
    ) -> Vec<Vec<usize>> {
        let look = LOOK_AHEAD * rows * bands;
        let mut packs: Vec<Vec<usize>> = Vec::with_capacity(rows);
        let mut taken = vec![false; left.len()];
        // Bands go to a pack's questions by their units, the finest lowest:
        // its scales then span no more than those of one question's kind.
        let unit = |q: usize| self.question(questions[q]).unit;
        for (t, &q) in left.iter().enumerate().take(look) {
            let i = questions[q].0;
            let clash = packs.iter().flatten().any(|&c| {
                let j = questions[c].0;
                self.partner[i] == Some(j) || self.partner[j] == Some(i)
            });
            if clash {
                continue;
            }
            let joins = |pack: &Vec<usize>| {
                let Some(packing) = &self.packing else {
                    return false;
                };
                if alone[q] || pack.len() >= bands || alone[pack[0]] {
                    return false;
                }
                if !pack.iter().all(|&c| packing.apart(i, questions[c].0)) {
                    return false;
                }
                let mut units: Vec<f64> = pack.iter().chain([&q]).map(|&c| unit(c)).collect();
                units.sort_by(f64::total_cmp);
                packing.scales(&units).is_some()
            };
            if let Some(pack) = packs.iter_mut().find(|p| joins(p)) {
                pack.push(q);
                pack.sort_by(|&a, &b| unit(a).total_cmp(&unit(b)));
            } else if packs.len() < rows {
                packs.push(vec![q]);
            } else {
                continue;
            }
            taken[t] = true;
            if packs.len() == rows && packs.iter().all(|p| p.len() >= bands) {
                break;
            }
        }
        let mut t = 0;
        left.retain(|_| {
            t += 1;
            !taken[t - 1]
        });
        packs
    }

    /// Question `(i, m)` at scale 1: its summand, its partner, their `x`,
    /// `y_i`, and the residue's unit `u` and count: it leaves `-kept u`
    /// when `m` bits are kept. Up to 55 bits, `1.5 (1 - 2^(2-m))`, which
    /// leaves `-3 2^(1-m)`; at 66, `1 - 2^-66`, which leaves `-2^-66`.
    fn question(&self, (i, m): (usize, u32)) -> Question {
        let partner = self.partner[i].expect("an askable summand");
        if m == X87_QUESTION {
            let a = 2f64.powi(-33);
            Question {
                i,
                partner,
                x: 1.0 + a,
                y: 1.0 - a,
                partner_x: -1.0,
                unit: a * a,
                kept: 1,
            }
        } else {
            let unit = 2f64.powi(1 - m as i32);
            Question {
                i,
                partner,
                x: 1.5,
                y: 1.0 - 2.0 * unit,
                partner_x: -1.5,
                unit,
                kept: 3,
            }
        }
    }

    /// The rows to ask `questions` questions in: row 0, and where the black
    /// box has more rows and there is more than one question, those rows
    /// that give row 0's bits on [`Oracle::ROW_TRIALS`] random `x` (the
    /// same in every row) and `y`: they add and multiply as row 0 does,
    /// whose order is the tree's.
    fn rows(&mut self, questions: usize) -> Result<&[usize]> {
        if questions > 1 && self.rows.len() == 1 && !self.calibrated {
            self.calibrated = true;
            let n = self.tree.n();
            let most = self.probe.max_batch().clamp(1, (MAX_VALUES / n).max(1));
            if most > 1 {
                let format = self.probe.format();
                let y_format = crate::probe::second_operand(&*self.probe);
                let mut rng = ChaCha8Rng::seed_from_u64(13);
                let mut differs = vec![false; most];
                self.out = vec![0.0; most];
                // The questions' rows, holding each trial's x in every row
                // meanwhile (a GEMV of 2^20 asks in 512 MiB of them).
                self.x = vec![0.0; most * n];
                let (mut x, mut y) = (Vec::new(), Vec::new());
                for _ in 0..Oracle::ROW_TRIALS {
                    Inputs::Close.draw_into(format, n, &mut rng, &mut x);
                    Inputs::Close.draw_into(y_format, n, &mut rng, &mut y);
                    for row in self.x.chunks_exact_mut(n) {
                        row.copy_from_slice(&x);
                    }
                    dot(self.probe)?.dot(&self.x, &y, &mut self.out)?;
                    self.calls += 1;
                    for (d, v) in differs.iter_mut().zip(&self.out) {
                        *d |= v.to_bits() != self.out[0].to_bits();
                    }
                }
                self.x.fill(0.0);
                self.rows = (0..most).filter(|&r| !differs[r]).collect();
            }
        }
        Ok(&self.rows)
    }

    /// One call on the current `x` (and `y`, for a product).
    fn call(&mut self, multiply: bool) -> Result<f64> {
        let n = self.tree.n();
        if multiply {
            dot(self.probe)?.dot(&self.x[..n], &self.y, &mut self.out[..1])?;
        } else {
            self.probe.sum(&self.x[..n], &mut self.out[..1])?;
        }
        self.calls += 1;
        Ok(self.out[0])
    }
}

/// `probe` as a dot product: products are asked only of a black box that
/// multiplies ([`Probe::as_dot`]).
fn dot(probe: &mut dyn Probe) -> Result<&mut dyn Dot> {
    probe.as_dot().ok_or_else(|| {
        Error::Input("this black box sums its inputs; it does not multiply them".into())
    })
}

/// Where one summand's product search stands, for inputs of `p`
/// significant bits: whether the product is exact (`p + 2` bits kept),
/// then, since most rounded products are rounded to the inputs' own
/// format, whether it keeps `p`, then a bisection below. No two formats
/// (8, 11, 24, 53 and 64 bits) are one bit apart, so `p + 1` is not
/// asked: a product keeping `p + 1` bits would be named the inputs'
/// format, and the model's replay would refute that.
#[derive(Clone, Copy, Debug)]
enum Search {
    /// To ask whether it keeps `p + 2` bits.
    Start,
    /// Of f64 inputs, keeping `p + 2`: to ask whether it keeps 66 bits,
    /// past x87's 64.
    Past,
    /// To ask whether it keeps `p`.
    Own,
    /// Keeps `lo` bits (two always are), not `hi`.
    Between(u32, u32),
    /// The bits kept, `None` for the exact product.
    Done(Option<u32>),
}

impl Search {
    /// The number of bits to ask about next, `None` once done.
    fn question(&self, p: u32) -> Option<u32> {
        match *self {
            Search::Start => Some(p + 2),
            Search::Past => Some(X87_QUESTION),
            Search::Own => Some(p),
            Search::Between(lo, hi) => Some((lo + hi) / 2),
            Search::Done(_) => None,
        }
    }

    fn answer(&mut self, kept: bool, p: u32) {
        *self = match (*self, kept) {
            (Search::Start, true) if p == Format::F64.precision() => Search::Past,
            (Search::Start, true) | (Search::Past, true) => Search::Done(None),
            (Search::Past, false) => Search::Done(Some(Format::X87.precision())),
            (Search::Start, false) => Search::Own,
            (Search::Own, true) => Search::Done(Some(p)),
            (Search::Own, false) => Search::Between(2, p),
            (Search::Between(lo, hi), k) => {
                let mid = (lo + hi) / 2;
                if k {
                    Search::Between(mid, hi)
                } else {
                    Search::Between(lo, mid)
                }
            }
            (done, _) => done,
        };
        if let Search::Between(lo, hi) = *self
            && hi - lo <= 1
        {
            *self = Search::Done(Some(lo));
        }
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
    Error::BlackBox(Fault::ProductBits { i, bits })
}

/// The format of `precision` significant bits among those a node or a
/// product may round to.
fn named_by_precision(precision: u32) -> Option<Format> {
    FORMATS.into_iter().find(|f| f.precision() == precision)
}
