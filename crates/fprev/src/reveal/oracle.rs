//! Asking the black box for `l_{i,j}`: masked inputs in, validated leaf
//! counts out (docs/ALGORITHMS.md, Masked inputs).
//!
//! Only the leaves of the current subproblem (plus at most one context leaf)
//! hold units; every other summand is 0, which adds nothing and is swamped
//! like a unit. The answer to the input masking `i` and `j` is then the number
//! of *live* units outside the lowest common ancestor of `i` and `j`.

use std::ops::RangeInclusive;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Fault, Result};
use crate::format::Format;
use crate::inputs::Inputs;
use crate::probe::{Batch, Probe};

use super::Finding;

pub(super) use super::masks::{Edits, Masks};

/// Counters of the work a reveal did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    /// `l_{i,j}` values asked for (each counted once however often asked).
    pub queries: u64,
    /// Masked inputs summed: one carries one query per field.
    pub inputs: u64,
    /// Evaluations of the black box: one per input, or one per call of a
    /// black box that sums many rows at once, and those that check it first.
    pub calls: u64,
    /// Time spent inside the black box.
    pub in_probe: Duration,
}

/// Calls a reveal makes between the times it asks one random input again
/// to see whether the black box's answers change from call to call (twice
/// the first time): one call in 4,096, and none in a reveal of fewer.
pub const REPEAT_EVERY: u64 = 4_096;

/// A random input asked again as a reveal goes on ([`Oracle::watch_repeats`]):
/// a black box whose order changes from call to call shows it on the same
/// input long before its masked answers stop fitting a tree.
struct Repeat {
    input: Vec<f64>,
    /// The bits of its first answer.
    bits: Option<u64>,
    /// The calls at which it is asked next.
    next: u64,
}

/// Masked queries against one black box.
pub struct Oracle<'p> {
    probe: &'p mut dyn Probe,
    masks: Masks,
    n: usize,
    /// Row-expanded edits of the call being made.
    rows: Edits,
    out: Vec<f64>,
    /// The rows of a batched black box that sum like row 0: the rows
    /// inputs go to (the others repeat the input before them, ignored).
    slots: Vec<usize>,
    /// The last call summed a stream of inputs (see [`Oracle::sum_inputs`]).
    streaming: bool,
    /// The input asked again, where the reveal watches for answers that
    /// change from call to call.
    repeat: Option<Repeat>,
    /// Work done so far.
    pub counters: Counters,
}

impl<'p> Oracle<'p> {
    /// An oracle over `probe`.
    pub fn new(probe: &'p mut dyn Probe) -> Result<Self> {
        let n = probe.n();
        let masks = Masks::for_probe(probe)?;
        Ok(Oracle {
            probe,
            masks,
            n,
            rows: Edits::default(),
            out: Vec::new(),
            slots: vec![0],
            streaming: false,
            repeat: None,
            counters: Counters::default(),
        })
    }

    /// Number of summands.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The masks in use.
    pub fn masks(&self) -> &Masks {
        &self.masks
    }

    /// Asks with `masks` from now on.
    pub(super) fn use_masks(&mut self, masks: Masks) {
        self.masks = masks;
    }

    /// The black box itself.
    pub fn probe(&mut self) -> &mut dyn Probe {
        self.probe
    }

    /// Asks one seeded random input again every [`REPEAT_EVERY`] calls
    /// (twice the first time): other bits than its first answer's end the
    /// reveal with [`Fault::Unrepeatable`]. A pool that regroups once in a
    /// few calls is seen within a few thousand calls, where masked answers
    /// may fit a tree for hundreds of thousands. Not for a black box
    /// deterministic by construction.
    pub fn watch_repeats(&mut self) {
        if !self.probe.deterministic() {
            let mut rng = ChaCha8Rng::seed_from_u64(0x5eed);
            self.repeat = Some(Repeat {
                input: crate::inputs::random_input(self.probe.format(), self.n, &mut rng),
                bits: None,
                next: REPEAT_EVERY,
            });
        }
    }

    /// Asks the repeated input where its time has come (see
    /// [`Oracle::watch_repeats`]).
    fn repeat_due(&mut self) -> Result<()> {
        let Some(mut repeat) = self.repeat.take_if(|r| self.counters.calls >= r.next) else {
            return Ok(());
        };
        let first = match repeat.bits {
            Some(bits) => bits,
            None => self.sum_one(&repeat.input)?.to_bits(),
        };
        let again = self.sum_one(&repeat.input)?.to_bits();
        if again != first {
            return Err(Error::BlackBox(Fault::Unrepeatable {
                calls: self.counters.calls,
            }));
        }
        repeat.bits = Some(first);
        repeat.next = self.counters.calls + REPEAT_EVERY;
        self.repeat = Some(repeat);
        Ok(())
    }

    /// Sums one arbitrary input, counted as a call.
    pub fn sum_one(&mut self, x: &[f64]) -> Result<f64> {
        let mut out = [0.0];
        self.streaming = false;
        let started = Instant::now();
        self.probe.sum(x, &mut out)?;
        self.counters.in_probe += started.elapsed();
        self.counters.calls += 1;
        Ok(out[0])
    }

    /// Sums the inputs `edits` describes, starting from `base`, returning
    /// one output per input: in one call of a batched black box (at most
    /// [`Oracle::rows`] inputs), or one call per input of any other. With
    /// `stream`, `base` is the last input of the previous streamed call,
    /// which a probe keeping its input need not be sent again.
    pub fn sum_inputs(&mut self, base: &[f64], edits: &Edits, stream: bool) -> Result<&[f64]> {
        let inputs = edits.inputs();
        let single = self.probe.max_batch() <= 1;
        debug_assert!(single || inputs <= self.rows());
        // Batched probes: input k in row slots[k]; rows between repeat the
        // input before them.
        let rows = if single {
            inputs
        } else {
            self.slots[inputs - 1] + 1
        };
        self.rows.clear();
        let mut k = 0;
        for r in 0..rows {
            if single || self.slots[k] == r {
                let at = edits.starts[k]..edits.starts[k + 1];
                self.rows.positions.extend(&edits.positions[at.clone()]);
                self.rows.values.extend(&edits.values[at]);
                k += 1;
            }
            self.rows.end_input();
        }
        self.out.clear();
        self.out.resize(rows, 0.0);
        let batch = Batch {
            base,
            starts: &self.rows.starts,
            positions: &self.rows.positions,
            values: &self.rows.values,
            continues: stream && self.streaming,
        };
        self.streaming = false;
        let started = Instant::now();
        self.probe.sum_batch(&batch, &mut self.out)?;
        self.counters.in_probe += started.elapsed();
        self.streaming = stream;
        self.counters.calls += if single { inputs as u64 } else { 1 };
        self.counters.inputs += inputs as u64;
        if !single {
            // Back to one output per input, in input order.
            for (k, &r) in self.slots[..inputs].iter().enumerate() {
                self.out[k] = self.out[r];
            }
            self.out.truncate(inputs);
        }
        self.repeat_due()?;
        Ok(&self.out)
    }

    /// Measures `|LCA(pivot, j) ∩ live|` for every `j` in `others`, with
    /// units on the leaves in `live` (which holds `pivot` and `others`), one
    /// query per input. `None` marks an answer too large to be exact in
    /// the accumulator.
    pub fn lca_sizes(
        &mut self,
        live: &[usize],
        pivot: usize,
        others: &[usize],
    ) -> Result<Vec<Option<usize>>> {
        let (m, u) = (self.masks.m, self.masks.u);
        let mut base = vec![0.0; self.n];
        for &k in live {
            base[k] = u;
        }
        base[pivot] = m;
        let mut answers = Vec::with_capacity(others.len());
        let mut edits = Edits::default();
        let per_call = if self.probe.max_batch() <= 1 {
            others.len().max(1)
        } else {
            self.rows()
        };
        for chunk in others.chunks(per_call) {
            // Each input moves the second mask on from the one before.
            edits.clear();
            let mut last = None;
            for &j in chunk {
                if let Some(i) = last.replace(j) {
                    edits.set(i, u);
                }
                edits.set(j, -m);
                edits.end_input();
            }
            let outputs = self.sum_inputs(&base, &edits, false)?.to_vec();
            for (&j, y) in chunk.iter().zip(outputs) {
                answers.push(self.validate(y, live.len(), pivot, j)?);
            }
        }
        self.counters.queries += others.len() as u64;
        Ok(answers)
    }

    /// For a batched black box, finds the rows that sum in the same order
    /// as row `row` (whose order is revealed), uses only those for queries
    /// (at most `cap` a call), and describes any split. Rows agree when one
    /// random input repeated in every row gives one result, on each of
    /// [`Self::ROW_TRIALS`] inputs. Most cancel in pairs: two orders that
    /// differ only in their last two additions agree on about 70% of those
    /// at n = 1024 (and on 90% of inputs of close magnitudes), so a few
    /// trials are not enough.
    pub fn calibrate_rows(&mut self, cap: Option<usize>, row: usize) -> Result<Option<Finding>> {
        let most = self.probe.max_batch().max(1);
        if row >= most {
            return Err(Error::Input(if most == 1 {
                format!("no row {row}: this black box sums one input a call, row 0")
            } else {
                format!(
                    "no row {row}: this black box sums {most} rows a call, rows 0 to {}",
                    most - 1
                )
            }));
        }
        self.slots = vec![row];
        // One row a call, or n <= 2 (at most one query): nothing to check.
        if most == 1 || cap == Some(1) || self.n <= 2 {
            return Ok(None);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut differs = vec![false; most];
        let mut out = vec![0.0; most];
        for trial in 0..Self::ROW_TRIALS {
            // Mostly cancelling pairs, which tell close orders apart best in
            // long sums; wide-range inputs for short ones, whose cancelling
            // pairs can leave sums every order adds exactly.
            let kind = match trial % 3 {
                2 => Inputs::Wide,
                _ => Inputs::Cancelling,
            };
            let input = kind.draw(self.probe.format(), self.n, &mut rng);
            let starts = vec![0; most + 1];
            let batch = Batch {
                base: &input,
                starts: &starts,
                positions: &[],
                values: &[],
                continues: false,
            };
            self.streaming = false;
            let started = Instant::now();
            self.probe.sum_batch(&batch, &mut out)?;
            self.counters.in_probe += started.elapsed();
            self.counters.calls += 1;
            for (d, y) in differs.iter_mut().zip(&out) {
                *d |= y.to_bits() != out[row].to_bits();
            }
        }
        let agree: Vec<bool> = differs.iter().map(|d| !d).collect();
        // The reference row first, then the others that agree.
        self.slots
            .extend((0..most).filter(|&r| r != row && agree[r]));
        self.slots.truncate(cap.unwrap_or(usize::MAX));
        // Each input of a call builds on the one before it, row after row:
        // the rows in ascending order, the reference row among them.
        self.slots.sort_unstable();
        if !differs.contains(&true) {
            return Ok(None);
        }
        Ok(Some(Finding::RowsDiffer {
            row,
            differ: row_ranges(&differs),
            agree: row_ranges(&agree),
            per_call: self.slots.len(),
        }))
    }

    /// Checks, in one call, that the black box counts as far as packed
    /// inputs reach; `None` if it does, else the finding that says why
    /// queries go one per input. Packed counts stay below `2^b`, and a sum of `2^b - 1`
    /// units (one summand holding most of them) needs all `b` bits: an
    /// accumulator narrower than declared rounds it, where the counts of
    /// single queries may still fit it, while the rounded digits of packed
    /// ones could read as other counts.
    pub fn calibrate_packing(&mut self) -> Result<Option<Finding>> {
        if self.masks.max_pairs() < 2 {
            return Ok(None);
        }
        let bits = u64::BITS - (self.masks.capacity(2) - 1).leading_zeros();
        let total = (1u64 << bits) - 1;
        let ones = (self.n as u64).min(total);
        let u = self.masks.u;
        let mut x = vec![0.0; self.n];
        x[..ones as usize].fill(u);
        x[0] = (total - ones + 1) as f64 * u;
        let y = self.sum_one(&x)?;
        if y == total as f64 * u {
            return Ok(None);
        }
        Ok(Some(Finding::Unpacked {
            units: total,
            summed: y / u,
            accumulator: self.probe.accumulator(),
        }))
    }

    /// Whether the black box gives the same bits for every order of its
    /// summands: each of [`Self::ROW_TRIALS`] random inputs (of every
    /// [`Inputs`] kind, which an order-based sum of three or more summands
    /// almost never survives) summed in five random permutations. Every
    /// result must also be a sum: finite, and within the error bound of
    /// some order (a constant is not order-independent, it is broken).
    pub fn order_independent(&mut self) -> Result<bool> {
        if self.n <= 2 {
            return Ok(false);
        }
        let format = self.probe.format();
        let precision = format.precision().min(self.probe.accumulator().precision());
        let eps = 2f64.powi(1 - precision as i32);
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for trial in 0..Self::ROW_TRIALS {
            let mut input = Inputs::ALL[trial % Inputs::ALL.len()].draw(format, self.n, &mut rng);
            let reference: f64 = input.iter().sum();
            let bound = 2.0 * self.n as f64 * eps * input.iter().map(|x| x.abs()).sum::<f64>();
            let mut first = None;
            for _ in 0..5 {
                input.shuffle(&mut rng);
                let y = self.sum_one(&input)?;
                if !y.is_finite()
                    || (y - reference).abs() > bound
                    || *first.get_or_insert(y.to_bits()) != y.to_bits()
                {
                    return Ok(false);
                }
            }
        }
        self.cancels_alike()
    }

    /// Whether `big + 1 - big` gives the same bits in every order, `big`
    /// past the accumulator's precision: no order-based sum does. Narrow
    /// inputs in a wide accumulator (f16 in a tensor core's f32) seldom
    /// make random sums round at all; where the inputs' format cannot hold
    /// such a `big`, a black box that multiplies forms it as a product, and
    /// one that does not cannot be told from an order-independent one.
    fn cancels_alike(&mut self) -> Result<bool> {
        let (format, accumulator) = (self.probe.format(), self.probe.accumulator());
        let Some((x_big, y_big)) = format.as_product(accumulator.precision() as i32 + 1) else {
            return Ok(false);
        };
        let n = self.n;
        let mut x = vec![0.0; n];
        let mut y = vec![1.0; n];
        let mut answers = Vec::new();
        // Far apart, so that no one fused group holds all three.
        let (a, b, c) = (0, n / 2, n - 1);
        for (plus, one, minus) in [(a, b, c), (a, c, b), (b, a, c)] {
            x.fill(0.0);
            y.fill(1.0);
            (x[plus], y[plus]) = (x_big, y_big);
            (x[minus], y[minus]) = (-x_big, y_big);
            x[one] = 1.0;
            let mut out = [0.0];
            match self.probe.as_dot() {
                Some(dot) if y_big != 1.0 => dot.dot(&x, &y, &mut out)?,
                _ if y_big != 1.0 => return Ok(false),
                _ => self.probe.sum(&x, &mut out)?,
            }
            self.counters.calls += 1;
            answers.push(out[0].to_bits());
        }
        Ok(answers.iter().all(|a| *a == answers[0]))
    }

    /// Random inputs that rows must agree on to share row 0's order.
    pub const ROW_TRIALS: usize = 12;

    /// Inputs one call takes: the rows of a batched black box that sum
    /// like row 0 (1 for others).
    pub fn rows(&self) -> usize {
        self.slots.len()
    }

    /// Turns one output into `|LCA ∩ live|`, or `None` when it is too large
    /// to be exact, or an error when no summation tree can produce it.
    pub(super) fn validate(
        &self,
        y: f64,
        live: usize,
        i: usize,
        j: usize,
    ) -> Result<Option<usize>> {
        // Truncations of the negative mask's partial sum cost it whole
        // spacings, read apart from the count of units (see
        // `Masks::toward_zero`).
        let y = match self.masks.spacing {
            Some(h) if y.is_finite() && y >= 0.0 => y % h,
            _ => y,
        };
        let units = y / self.masks.u;
        let n = self.n;
        if y.is_nan() {
            return Err(Error::BlackBox(Fault::Nan { i, j, n }));
        }
        if units >= self.masks.exact_below as f64 && units.is_finite() {
            return Ok(None);
        }
        if !units.is_finite() || units.fract() != 0.0 || units < 0.0 {
            return Err(Error::BlackBox(Fault::Fraction {
                y,
                i,
                j,
                n,
                u: self.masks.u,
                accumulator: self.probe_acc(),
            }));
        }
        let units = units as usize;
        if units + 2 > live {
            return Err(Error::BlackBox(Fault::MoreUnits {
                units,
                i,
                j,
                n,
                unmasked: live - 2,
            }));
        }
        Ok(Some(live - units))
    }

    fn probe_acc(&self) -> Format {
        self.probe.accumulator()
    }
}

/// The rows marked true, as ranges of rows (`6..=11, 18..=23, …`), in
/// ascending order.
fn row_ranges(marked: &[bool]) -> Vec<RangeInclusive<usize>> {
    let mut ranges = Vec::new();
    let mut r = 0;
    while r < marked.len() {
        if marked[r] {
            let start = r;
            while r < marked.len() && marked[r] {
                r += 1;
            }
            ranges.push(start..=r - 1);
        }
        r += 1;
    }
    ranges
}
