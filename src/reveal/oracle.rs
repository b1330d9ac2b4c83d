//! Asking the black box for `l_{i,j}`: masked inputs in, validated leaf
//! counts out (ALGORITHMS.md section 2).
//!
//! Only the leaves of the current subproblem (plus at most one context leaf)
//! hold units; every other summand is 0, which adds nothing and is swamped
//! like a unit. The answer to the input masking `i` and `j` is then the number
//! of *live* units outside the lowest common ancestor of `i` and `j`.

use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::check::Inputs;
use crate::error::{Error, Result};
use crate::format::{FUSED_FRACTION_BITS, Format};
use crate::probe::{Batch, Probe};

/// The mask `M`, the unit `u` and the counting limit for one black box.
#[derive(Clone, Copy, Debug)]
pub struct Masks {
    /// The mask `M`.
    pub m: f64,
    /// The unit `u`.
    pub u: f64,
    /// Answers of this many units or more may be rounded: `2^p` of the
    /// accumulator.
    pub exact_below: u64,
}

impl Masks {
    /// Masks for a black box taking `input` and accumulating in `acc` (and,
    /// if `may_fuse`, in fused nodes), or an error if no mask can swamp
    /// `n - 2` units there.
    pub fn new(n: usize, input: Format, acc: Format, may_fuse: bool) -> Result<Self> {
        // The accumulator's own masks when the input can hold them (f16
        // summed in f32 still needs f16's), else the input's.
        let fits = |f: Format, g: Format| g.represents(f.mask()) && g.represents(f.unit());
        let (m, u) = if fits(acc, input) {
            (acc.mask(), acc.unit())
        } else if fits(input, acc) {
            (input.mask(), input.unit())
        } else {
            return Err(Error::Input(format!(
                "{input} inputs cannot be probed through a {acc} accumulator: no mask fits both"
            )));
        };
        // M + k*u must round back to M: k*u at most half an ulp of M in the
        // accumulator, with a factor 2 for counts that were rounded up.
        let half_ulp = m * 2f64.powi(-(acc.precision() as i32));
        let most = (half_ulp / (2.0 * u)).floor().min(1e18) as u64 + 2;
        if most < 3 {
            return Err(Error::Input(format!(
                "{input} inputs accumulated in {acc} cannot be probed: the largest mask {input} \
                 holds ({m:e}) cannot swamp its smallest unit ({u:e}) in {acc}'s {} bits",
                acc.precision()
            )));
        }
        if n as u64 > most {
            return Err(Error::Input(format!(
                "n = {n} is too large for {input} inputs accumulated in {acc}: the mask {m:e} \
                 swamps at most {} units of {u:e}; use a wider --dtype or --acc",
                most - 2
            )));
        }
        // A fused node adds exactly within a window of FUSED_FRACTION_BITS
        // below its largest term: every unit must fall below that window.
        let window = 2f64.powi(FUSED_FRACTION_BITS + 1);
        let most_fused = (m / (u * window)).floor().min(1e18) as u64 + 2;
        if may_fuse && n as u64 > most_fused {
            let why = if most_fused < 3 {
                format!("cannot swamp even one unit ({u:e}) there")
            } else {
                format!("swamps at most {} units of {u:e} there", most_fused - 2)
            };
            return Err(Error::Input(format!(
                "n = {n} is too large for {input} inputs if the black box may add in fused \
                 (tensor-core) nodes: such a node keeps {FUSED_FRACTION_BITS} bits below its \
                 largest term, and the mask {m:e} {why}; use a wider --dtype, or a black box \
                 that declares IEEE additions only"
            )));
        }
        Ok(Masks {
            m,
            u,
            exact_below: acc.exact_count(),
        })
    }
}

/// Counters of the work a reveal did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    /// `l_{i,j}` values asked for.
    pub queries: u64,
    /// Calls of [`Probe::sum`].
    pub calls: u64,
    /// Time spent inside the black box.
    pub in_probe: Duration,
}

/// Masked queries against one black box.
pub struct Oracle<'p> {
    probe: &'p mut dyn Probe,
    masks: Masks,
    n: usize,
    /// The input with the current live units; masks are set per query.
    base: Vec<f64>,
    /// Mask positions and values of the queries in flight.
    positions: Vec<usize>,
    values: Vec<f64>,
    out: Vec<f64>,
    /// The rows of a batched black box that sum like row 0: the rows
    /// queries go to (others repeat a query and are ignored).
    slots: Vec<usize>,
    /// Work done so far.
    pub counters: Counters,
}

impl<'p> Oracle<'p> {
    /// An oracle over `probe`.
    pub fn new(probe: &'p mut dyn Probe) -> Result<Self> {
        let n = probe.n();
        let masks = Masks::new(n, probe.format(), probe.accumulator(), probe.may_fuse())?;
        Ok(Oracle {
            probe,
            masks,
            n,
            base: vec![0.0; n],
            positions: Vec::new(),
            values: Vec::new(),
            out: Vec::new(),
            slots: vec![0],
            counters: Counters::default(),
        })
    }

    /// Number of summands.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The masks in use.
    pub fn masks(&self) -> Masks {
        self.masks
    }

    /// The black box itself.
    pub fn probe(&mut self) -> &mut dyn Probe {
        self.probe
    }

    /// Sums one arbitrary input, counted as a call.
    pub fn sum_one(&mut self, x: &[f64]) -> Result<f64> {
        let mut out = [0.0];
        let started = Instant::now();
        self.probe.sum(x, &mut out)?;
        self.counters.in_probe += started.elapsed();
        self.counters.calls += 1;
        Ok(out[0])
    }

    /// Measures `|LCA(pivot, j) ∩ live|` for every `j` in `others`, with
    /// units on the leaves in `live` (which holds `pivot` and `others`).
    /// `None` marks an answer too large to be exact in the accumulator.
    pub fn lca_sizes(
        &mut self,
        live: &[usize],
        pivot: usize,
        others: &[usize],
    ) -> Result<Vec<Option<usize>>> {
        let pairs: Vec<(usize, usize)> = others.iter().map(|&j| (pivot, j)).collect();
        self.measure(live, &pairs)
    }

    /// Measures `|LCA(i, j)|` for every pair, with units on every summand,
    /// as many pairs per call as the black box takes. Needs `n` below the
    /// accumulator's exact count, so that every answer is exact.
    pub fn lca_sizes_all(&mut self, pairs: &[(usize, usize)]) -> Result<Vec<usize>> {
        debug_assert!((self.n as u64) < self.masks.exact_below);
        let all: Vec<usize> = (0..self.n).collect();
        let answers = self.measure(&all, pairs)?;
        Ok(answers
            .into_iter()
            .map(|a| a.expect("exact below 2^p"))
            .collect())
    }

    fn measure(&mut self, live: &[usize], pairs: &[(usize, usize)]) -> Result<Vec<Option<usize>>> {
        let u = self.masks.u;
        for &k in live {
            self.base[k] = u;
        }
        let result = self.measure_live(live.len(), pairs);
        for &k in live {
            self.base[k] = 0.0;
        }
        result
    }

    fn measure_live(
        &mut self,
        live: usize,
        pairs: &[(usize, usize)],
    ) -> Result<Vec<Option<usize>>> {
        let m = self.masks.m;
        // One-input probes edit one buffer in place: hand them everything at
        // once, one call per input. Batched probes get a query in each row
        // that sums like row 0, and a repeat of the first in the others.
        let single = self.probe.max_batch() <= 1;
        let per_call = if single {
            pairs.len()
        } else {
            self.slots.len()
        };
        let mut answers = Vec::with_capacity(pairs.len());
        for chunk in pairs.chunks(per_call.max(1)) {
            let rows = if single {
                chunk.len()
            } else {
                self.slots[chunk.len() - 1] + 1
            };
            self.positions.clear();
            self.values.clear();
            let mut k = 0;
            for r in 0..rows {
                let (i, j) = if single || self.slots[k] == r {
                    k += 1;
                    chunk[k - 1]
                } else {
                    chunk[0]
                };
                self.positions.extend([i, j]);
                self.values.extend([m, -m]);
            }
            self.out.clear();
            self.out.resize(rows, 0.0);
            let batch = Batch {
                base: &self.base,
                positions: &self.positions,
                values: &self.values,
                width: 2,
            };
            let started = Instant::now();
            self.probe.sum_batch(&batch, &mut self.out)?;
            self.counters.in_probe += started.elapsed();
            self.counters.calls += if single { rows as u64 } else { 1 };
            for (k, &(i, j)) in chunk.iter().enumerate() {
                let row = if single { k } else { self.slots[k] };
                answers.push(self.validate(self.out[row], live, i, j)?);
            }
        }
        self.counters.queries += pairs.len() as u64;
        Ok(answers)
    }

    /// For a batched black box, finds the rows that sum in the same order
    /// as row 0, uses only those for queries, and describes any split.
    /// Rows agree when one random input repeated in every row gives one
    /// result, on each of [`Self::ROW_TRIALS`] inputs. The inputs cancel in
    /// pairs: two orders that differ only in their last two additions agree
    /// on about 70% of those at n = 1024 (and on 90% of inputs of close
    /// magnitudes), so a few trials are not enough.
    pub fn calibrate_rows(&mut self, cap: Option<usize>) -> Result<Option<String>> {
        let most = self.probe.max_batch().min(cap.unwrap_or(usize::MAX)).max(1);
        self.slots = (0..most).collect();
        // With n <= 2 there is at most one query: nothing to batch.
        if most == 1 || self.n <= 2 {
            return Ok(None);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut differs = vec![false; most];
        let mut out = vec![0.0; most];
        for _ in 0..Self::ROW_TRIALS {
            let input = Inputs::Cancelling.draw(self.probe.format(), self.n, &mut rng);
            let positions = vec![0; most];
            let values = vec![input[0]; most];
            let batch = Batch {
                base: &input,
                positions: &positions,
                values: &values,
                width: 1,
            };
            let started = Instant::now();
            self.probe.sum_batch(&batch, &mut out)?;
            self.counters.in_probe += started.elapsed();
            self.counters.calls += 1;
            for (d, y) in differs.iter_mut().zip(&out) {
                *d |= y.to_bits() != out[0].to_bits();
            }
        }
        self.slots.retain(|r| !differs[*r]);
        if self.slots.len() == most {
            return Ok(None);
        }
        let agree: Vec<bool> = differs.iter().map(|d| !d).collect();
        Ok(Some(format!(
            "rows {} of this black box sum in a different order from row 0 (the same input \
             in every row gave different results); this is row 0's order, revealed with \
             rows {} ({} per call)",
            row_ranges(&differs),
            row_ranges(&agree),
            self.slots.len()
        )))
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
        let mut out = [0.0];
        for trial in 0..Self::ROW_TRIALS {
            let mut input = Inputs::ALL[trial % Inputs::ALL.len()].draw(format, self.n, &mut rng);
            let reference: f64 = input.iter().sum();
            let bound = 2.0 * self.n as f64 * eps * input.iter().map(|x| x.abs()).sum::<f64>();
            let mut first = None;
            for _ in 0..5 {
                input.shuffle(&mut rng);
                let started = Instant::now();
                self.probe.sum(&input, &mut out)?;
                self.counters.in_probe += started.elapsed();
                self.counters.calls += 1;
                let y = out[0];
                if !y.is_finite()
                    || (y - reference).abs() > bound
                    || *first.get_or_insert(y.to_bits()) != y.to_bits()
                {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Random inputs that rows must agree on to share row 0's order.
    pub const ROW_TRIALS: usize = 12;

    /// Queries per call of a batched black box (1 for others).
    pub fn rows(&self) -> usize {
        self.slots.len()
    }

    /// Turns one output into `|LCA ∩ live|`, or `None` when it is too large
    /// to be exact, or an error when no summation tree can produce it.
    fn validate(&self, y: f64, live: usize, i: usize, j: usize) -> Result<Option<usize>> {
        let units = y / self.masks.u;
        let what = || format!("the input masking summands {i} and {j} (n = {})", self.n);
        if y.is_nan() {
            return Err(Error::BlackBox(format!(
                "the black box returned NaN for {}: its order may depend on the values, or it \
                 does not sum its inputs",
                what()
            )));
        }
        if units >= self.masks.exact_below as f64 && units.is_finite() {
            return Ok(None);
        }
        if !units.is_finite() || units.fract() != 0.0 || units < 0.0 {
            return Err(Error::BlackBox(format!(
                "the black box returned {y} for {}, which is not a whole number of units \
                 (u = {}): the masks did not cancel exactly, so its order depends on the values \
                 or its accumulator is narrower than {}",
                what(),
                self.masks.u,
                self.probe_acc()
            )));
        }
        let units = units as usize;
        if units + 2 > live {
            return Err(Error::BlackBox(format!(
                "the black box returned {units} units for {}, but only {} were unmasked: \
                 it does not compute a sum of its inputs",
                what(),
                live - 2
            )));
        }
        Ok(Some(live - units))
    }

    fn probe_acc(&self) -> Format {
        self.probe.accumulator()
    }
}

/// `6-11, 18-23, 30-35, …`: the rows marked true, as ranges (at most four).
fn row_ranges(marked: &[bool]) -> String {
    let mut ranges = Vec::new();
    let mut r = 0;
    while r < marked.len() {
        if marked[r] {
            let start = r;
            while r < marked.len() && marked[r] {
                r += 1;
            }
            ranges.push(if r - start == 1 {
                start.to_string()
            } else {
                format!("{start}-{}", r - 1)
            });
        }
        r += 1;
    }
    let more = ranges.len() > 4;
    ranges.truncate(4);
    ranges.join(", ") + if more { ", …" } else { "" }
}
