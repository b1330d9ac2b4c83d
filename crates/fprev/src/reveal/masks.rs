//! The masks and units of masked inputs (docs/ALGORITHMS.md, Masked
//! inputs), and inputs written as edits of the one before.

use crate::error::{Error, Param, Remedy, Result};
use crate::format::{FUSED_FRACTION_BITS, Format, Summand};
use crate::probe::Probe;

/// The masks, the unit `u` and the counting limits for one black box.
///
/// One input may carry several mask pairs (one per query packed into it,
/// see `fields`); pair `k` uses `M / 2^k`. A partial sum holds each pair's
/// mask once, negated, or not at all, and such a sum of distinct powers of
/// two is never 0: the largest outweighs all smaller ones together, by at
/// least the smallest. So it stays a large value and swamps the units it
/// meets, as one mask does.
#[derive(Clone, Debug)]
pub struct Masks {
    /// The mask `M` of the first pair.
    pub m: f64,
    /// The unit `u`.
    pub u: f64,
    /// Answers of this many units or more may be rounded: `2^p` of the
    /// accumulator (at most `2^24` where fused nodes may truncate).
    pub exact_below: u64,
    /// `capacity[k - 1]`: every count of units below it is exact and
    /// swamped in an input with `k` mask pairs.
    capacity: Vec<u64>,
    /// Of masks that survive additions rounding toward zero
    /// ([`Masks::toward_zero`]): the spacing `h` of the accumulator's
    /// values just below `M`, a multiple of every answer's truncation
    /// losses, which are read apart from its count.
    pub spacing: Option<f64>,
}

impl Masks {
    /// Masks for a black box taking `input` and accumulating in `acc` (and,
    /// if `may_fuse`, in fused nodes), or an error if no mask can swamp
    /// `n - 2` units there. Where its summands may be products of
    /// `operands` ([`Probe::operands`](crate::Probe::operands)) and the
    /// input's own values cannot mask `n` summands, products do: their
    /// range is the sum of the operands' (fp8 into f32).
    pub fn new(
        n: usize,
        input: Format,
        acc: Format,
        may_fuse: bool,
        operands: Option<(Format, Format)>,
    ) -> Result<Self> {
        // Where products fail too, their error says how far they reach.
        let plain = Self::of(n, Summand::Value(input), acc, may_fuse);
        match (plain, operands) {
            (Err(_), Some((a, b))) => Self::of(n, Summand::Product(a, b), acc, may_fuse),
            (plain, _) => plain,
        }
    }

    /// [`Masks::new`] for `probe`'s size, formats and operands.
    pub fn for_probe(probe: &dyn Probe) -> Result<Self> {
        Self::new(
            probe.n(),
            probe.format(),
            probe.accumulator(),
            probe.may_fuse(),
            probe.operands(),
        )
    }

    fn of(n: usize, input: Summand, acc: Format, may_fuse: bool) -> Result<Self> {
        // The accumulator's own masks when the input can hold them (f16
        // summed in f32 still needs f16's), else the input's, else the
        // range both hold (fp8 products into f16).
        let both = |(m, u): (f64, f64)| {
            [m, u]
                .iter()
                .all(|&v| input.represents(v) && acc.represents(v))
        };
        let (m, u) = if let Some(found) = [
            (acc.mask(), acc.unit()),
            (input.mask(), input.unit()),
            (acc.mask().min(input.mask()), acc.ulp(0.0).max(input.unit())),
        ]
        .into_iter()
        .find(|&c| both(c))
        {
            found
        } else {
            return Err(Error::Input(format!(
                "{input} inputs cannot be probed through a {acc} accumulator: no mask fits both"
            )));
        };
        // M + k*u must round back to M: k*u at most half an ulp of M in the
        // accumulator, with a factor 2 for counts that were rounded up.
        let swamped = |m: f64| {
            let half_ulp = m * 2f64.powi(-(acc.precision() as i32));
            (half_ulp / (2.0 * u)).floor().min(1e18) as u64 + 1
        };
        // A fused node adds exactly within a window of FUSED_FRACTION_BITS
        // below its largest term: every unit must fall below that window.
        let window = 2f64.powi(FUSED_FRACTION_BITS + 1);
        let below_window = |m: f64| (m / (u * window)).floor().min(1e18) as u64 + 1;
        let most = swamped(m) + 1;
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
                 swamps at most {} units of {u:e}",
                most - 2
            ))
            .advise(Remedy::Wider(&[Param::Dtype, Param::Accumulator])));
        }
        let most_fused = below_window(m) + 1;
        if may_fuse && n as u64 > most_fused {
            let why = if most_fused < 3 {
                format!("cannot swamp even one unit ({u:e}) there")
            } else {
                format!("swamps at most {} units of {u:e} there", most_fused - 2)
            };
            return Err(Error::Input(format!(
                "n = {n} is too large for {input} inputs if the black box may add in fused \
                 (tensor-core) nodes: such a node keeps {FUSED_FRACTION_BITS} bits below its \
                 largest term, and the mask {m:e} {why}"
            ))
            .advise(Remedy::Or(
                Box::new(Remedy::Wider(&[Param::Dtype])),
                "a black box that declares IEEE additions only",
            )));
        }
        // A fused node also truncates terms far below its largest one: a
        // unit beside a partial sum of 2^24 units would vanish.
        let exact_below = if may_fuse {
            acc.exact_count().min(1 << FUSED_FRACTION_BITS)
        } else {
            acc.exact_count()
        };
        let limit = |m: f64| {
            let c = swamped(m).min(exact_below);
            if may_fuse { c.min(below_window(m)) } else { c }
        };
        let mut capacity = vec![limit(m)];
        // More pairs: the smallest non-zero mix of masks is at least the
        // smallest mask (half of it, for margin); `k` masks span `k` bits
        // and mix exactly while that is at most p;
        // a context leaf shared by several fields holds a sum of their
        // units, exact in the input format below 2^p of the input.
        let shared = input.exact_count();
        for k in 1..acc.precision() as usize {
            let smallest = m / 2f64.powi(k as i32);
            if !input.represents(smallest) {
                break;
            }
            let c = limit(smallest / 2.0).min(shared).min(capacity[k - 1]);
            if c < 4 {
                break;
            }
            capacity.push(c);
        }
        Ok(Masks {
            m,
            u,
            exact_below,
            capacity,
            spacing: None,
        })
    }

    /// Masks whose answers hold under additions that round toward zero
    /// as under those that round to nearest (docs/ALGORITHMS.md, Masked
    /// inputs, Truncating accumulators), one pair an input; `None` where
    /// `n` summands leave them no room in these formats.
    ///
    /// A unit meeting the negative mask's partial sum is never absorbed by
    /// truncation: `-M + c` truncates to `-(M - h)`, `h` the spacing of
    /// the accumulator's values just below `M`, and each such meeting
    /// costs that partial sum one `h`. So `M` is `2^p h` with `h` at least
    /// `4n` units: a partial sum of units is below `h / 2` and the spacing
    /// `2h` above `M`, so it is absorbed by either mask when rounding to
    /// nearest, and by the positive one when truncating; where the masks
    /// cancel, `k` truncations leave `k h` exactly, and the answer is
    /// `k h` plus the units outside the pair's LCA, whose count is the
    /// answer modulo `h`, all exact below `2^p` units.
    pub fn toward_zero(n: usize, input: Format, acc: Format, may_fuse: bool) -> Option<Self> {
        let u = if input.represents(acc.unit()) {
            acc.unit()
        } else {
            input.unit()
        };
        let h = u * (4.0 * n.max(1) as f64).log2().ceil().exp2();
        let m = h * 2f64.powi(acc.precision() as i32);
        let fits = |f: Format| f.represents(m) && f.represents(u) && f.represents(h);
        let exact = input.precision().min(acc.precision()) as i32;
        let answers_exact = (n as f64 + 1.0) * h < 2f64.powi(exact) * u;
        // A fused node drops a unit only below its window next to M.
        let below_window = m / u > 2f64.powi(FUSED_FRACTION_BITS + 1) * n as f64;
        (fits(input) && fits(acc) && answers_exact && (below_window || !may_fuse)).then_some(
            Masks {
                m,
                u,
                exact_below: u64::MAX,
                capacity: vec![n as u64 + 2],
                spacing: Some(h),
            },
        )
    }

    /// The most summands [`Masks::toward_zero`] fits in these formats (0
    /// where none). Within each run of `n` from `2^(k-1) + 1` to `2^k`
    /// the spacing `h` is one, and each condition holds up to some `n`:
    /// that `n` is found by bisection, and the largest over the runs kept.
    pub fn toward_zero_reach(input: Format, acc: Format, may_fuse: bool) -> usize {
        let fits = |n: usize| Self::toward_zero(n, input, acc, may_fuse).is_some();
        let mut reach = 0;
        for k in 1..48 {
            let (mut lo, mut hi) = ((1usize << (k - 1)) + 1, 1usize << k);
            if !fits(lo) {
                continue;
            }
            // fits(lo), and the largest fitting n of the run is in lo..=hi.
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if fits(mid) { lo = mid } else { hi = mid - 1 }
            }
            reach = lo;
        }
        reach
    }

    /// The mask of pair `k` (0 for the first): `M / 2^k`.
    pub fn mask(&self, k: usize) -> f64 {
        self.m / 2f64.powi(k as i32)
    }

    /// Most mask pairs one input can carry.
    pub fn max_pairs(&self) -> usize {
        self.capacity.len()
    }

    /// Every count of units below this is exact in an input with `pairs`
    /// mask pairs (at most [`Masks::max_pairs`]).
    pub fn capacity(&self, pairs: usize) -> u64 {
        self.capacity[pairs.max(1) - 1]
    }
}

/// Inputs written as edits, each input relative to the one before it (see
/// [`Batch`](crate::probe::Batch)).
#[derive(Clone, Debug)]
pub struct Edits {
    /// Input `k`'s edits are `positions[starts[k]..starts[k + 1]]`.
    pub(super) starts: Vec<usize>,
    pub(super) positions: Vec<usize>,
    pub(super) values: Vec<f64>,
}

impl Default for Edits {
    fn default() -> Self {
        Edits {
            starts: vec![0],
            positions: Vec::new(),
            values: Vec::new(),
        }
    }
}

impl Edits {
    /// Forgets the inputs ended so far. Edits of an input not ended yet
    /// stay, as the start of the next one.
    pub fn clear(&mut self) {
        let open = *self.starts.last().expect("starts begins with 0");
        self.positions.drain(..open);
        self.values.drain(..open);
        self.starts.clear();
        self.starts.push(0);
    }

    /// Sets summand `at` to `v` in the input being written.
    pub fn set(&mut self, at: usize, v: f64) {
        self.positions.push(at);
        self.values.push(v);
    }

    /// Ends the input being written.
    pub fn end_input(&mut self) {
        self.starts.push(self.positions.len());
    }

    /// Applies the edits of every input ended so far to `values`.
    pub fn apply_ended(&self, values: &mut [f64]) {
        let ended = *self.starts.last().expect("starts begins with 0");
        for (&at, &v) in self.positions[..ended].iter().zip(&self.values) {
            values[at] = v;
        }
    }

    /// Inputs ended so far.
    pub fn inputs(&self) -> usize {
        self.starts.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reach_of_masks_that_hold_under_truncation_is_the_last_size_they_fit() {
        for (format, reach) in [(Format::F32, 2046), (Format::F64, 1 << 25)] {
            for may_fuse in [false, true] {
                assert_eq!(
                    Masks::toward_zero_reach(format, format, may_fuse),
                    reach,
                    "{format}"
                );
                assert!(Masks::toward_zero(reach, format, format, may_fuse).is_some());
                assert!(Masks::toward_zero(reach + 1, format, format, may_fuse).is_none());
            }
        }
    }

    #[test]
    fn fp8_summands_mask_an_f32_accumulator_only_as_products() {
        let e4m3 = Format::E4m3;
        assert!(Masks::new(64, e4m3, Format::F32, true, None).is_err());
        let m = Masks::new(64, e4m3, Format::F32, true, Some((e4m3, e4m3))).unwrap();
        assert_eq!((m.m, m.u), (65536.0, 2f64.powi(-18)));
        // The mask, 2^34 units, swamps 2^9 of them below a fused node's
        // window of 2^25 (and f32's half ulp of it), and no more.
        assert!(Masks::new(514, e4m3, Format::F32, true, Some((e4m3, e4m3))).is_ok());
        assert!(Masks::new(515, e4m3, Format::F32, true, Some((e4m3, e4m3))).is_err());
        // Where the input's own masks work, they stay.
        let f16 = Masks::new(
            64,
            Format::F16,
            Format::F32,
            true,
            Some((Format::F16, Format::F16)),
        );
        assert_eq!(f16.unwrap().m, Format::F16.mask());
    }
}
