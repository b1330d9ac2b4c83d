//! How a node rounds: to nearest or toward zero, and the additions that
//! round an exact `a + b` once to any format from `f64` operands.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::format::Format;

/// How a node rounds its exact result to its format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rounding {
    /// To nearest, ties to even: IEEE's default.
    #[default]
    NearestEven,
    /// Toward zero (truncation), as some accelerators and soft-float
    /// kernels do.
    TowardZero,
}

impl Rounding {
    /// Every rounding the model knows.
    pub const ALL: [Rounding; 2] = [Rounding::NearestEven, Rounding::TowardZero];

    /// The name used in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Rounding::NearestEven => "nearest-even",
            Rounding::TowardZero => "toward-zero",
        }
    }

    /// The exact `a + b` rounded this way to `format`. The operands may be
    /// any `f64` values: a wider node's partial sum, or an exact product.
    #[inline]
    pub fn add(self, format: Format, a: f64, b: f64) -> f64 {
        match self {
            Rounding::NearestEven => add_nearest(format, a, b),
            Rounding::TowardZero => add_toward_zero(format, a, b),
        }
    }
}

impl fmt::Display for Rounding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Rounding {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Rounding::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| format!("unknown rounding '{s}': expected nearest-even or toward-zero"))
    }
}

/// The exact `a + b` rounded to nearest in `format`. Rounding the f64 sum
/// again would round twice; rounding it *to odd* first (the f64 neighbour
/// on the exact sum's side when it was inexact and its last bit is even)
/// keeps a single correct rounding to any format of 51 bits or fewer
/// (Boldo and Melquiond's rule).
///
/// Rounding `s = a + b` again is only wrong when `s` lands on a midpoint of
/// `format` (a value `f64` holds): any other `s` lies on the same side of
/// every midpoint as the exact sum, so most additions round once, fast.
#[inline]
fn add_nearest(format: Format, a: f64, b: f64) -> f64 {
    let s = a + b;
    let p = format.precision();
    if p >= Format::F64.precision() || !s.is_finite() {
        return s;
    }
    // The f64 fraction bits `format` drops, and the pattern of a midpoint;
    // below `format`'s normal range it drops more, so that goes the slow way.
    let dropped = (1u64 << (53 - p)) - 1;
    let midpoint = 1u64 << (52 - p);
    if s.to_bits() & dropped != midpoint && s.abs() >= format.min_normal() {
        return format.round(s);
    }
    add_rounding_to_odd(format, a, b)
}

/// [`add_nearest`] the slow way for every sum: TwoSum, to odd, then to
/// `format`.
fn add_rounding_to_odd(format: Format, a: f64, b: f64) -> f64 {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    let odd = if e == 0.0 || s.to_bits() & 1 == 1 {
        s
    } else if (e > 0.0) == (s > 0.0) {
        f64::from_bits(s.to_bits() + 1)
    } else {
        f64::from_bits(s.to_bits() - 1)
    };
    format.round(odd)
}

/// `a + b` truncated to `format`. The sum is split exactly into `s + e`
/// (Knuth's TwoSum), so truncation sees the exact value, not one already
/// rounded to nearest in f64.
fn add_toward_zero(format: Format, a: f64, b: f64) -> f64 {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    let t = truncate(format, s);
    // `s` itself may have been rounded away from zero: then the exact sum
    // lies just inside `t`'s magnitude when `t == s`.
    if t == s && e != 0.0 && (e < 0.0) != (s < 0.0) {
        step_toward_zero(format, t)
    } else {
        t
    }
}

/// `x` truncated to `format`'s precision (toward zero).
pub(super) fn truncate(format: Format, x: f64) -> f64 {
    let r = format.round(x);
    if r.abs() > x.abs() {
        step_toward_zero(format, r)
    } else {
        r
    }
}

/// The value of `format` next to `x` (one of its values) toward zero.
fn step_toward_zero(format: Format, x: f64) -> f64 {
    if x == 0.0 {
        return x;
    }
    // Past the largest finite value, truncation stops at it.
    if x.is_infinite() {
        return format.max_finite().copysign(x);
    }
    // One ulp of `x` in `format`, at its binade (or the subnormal spacing).
    let p = format.precision() as i32;
    // The binade from the exponent's bits: `log2` of a value just below a
    // power of two rounds up to it, which would double the step.
    let binade = ((x.abs().to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let lowest = format.min_normal().log2() as i32;
    let ulp = 2f64.powi(binade.max(lowest) - (p - 1));
    // At a power of two the spacing below is half the spacing above.
    let step = if x.abs() == 2f64.powi(binade) && binade > lowest {
        ulp / 2.0
    } else {
        ulp
    };
    x - step.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random words from `seed` (a 64-bit LCG).
    fn words(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed
        }
    }

    #[test]
    fn truncation_past_the_largest_value_stops_at_it() {
        // It was infinity: the step below infinity left it there.
        for format in [Format::F32, Format::F16, Format::Bf16] {
            let big = format.max_finite() * 4.0;
            assert_eq!(truncate(format, big), format.max_finite(), "{format}");
            assert_eq!(truncate(format, -big), -format.max_finite(), "{format}");
            assert_eq!(
                Rounding::TowardZero.add(format, big, big),
                format.max_finite(),
                "{format}"
            );
        }
    }

    #[test]
    fn truncation_matches_exact_rational_rounding() {
        // Exact sums of f32 values fit in f64 when their exponents are
        // close; truncating that f64 toward zero is the reference.
        let mut next = words(1);
        for _ in 0..100_000 {
            let a = f32::from_bits((next() >> 33) as u32 & 0x3fff_ffff | 0x3000_0000);
            let b = -f32::from_bits((next() >> 33) as u32 & 0x3fff_ffff | 0x3000_0000);
            let (a, b) = (f64::from(a), f64::from(b));
            let exact = a + b; // exact: exponents within 2^±32 of each other
            let want = {
                let r = exact as f32;
                if f64::from(r).abs() > exact.abs() {
                    f64::from(f32::from_bits(r.to_bits() - 1))
                } else {
                    f64::from(r)
                }
            };
            assert_eq!(add_toward_zero(Format::F32, a, b), want, "{a} + {b}");
        }
    }

    #[test]
    fn rounding_once_takes_the_short_way_only_off_midpoints() {
        // Pairs of products of f32 values (48 bits, as in a dot product),
        // half of them made to land on or beside a midpoint of the format.
        let mut next = words(7);
        for format in [Format::F32, Format::F16, Format::Bf16] {
            for k in 0..200_000 {
                let f = |bits: u64| f64::from(f32::from_bits((bits >> 33) as u32 & 0x3fff_ffff));
                let a = f(next()) * f(next());
                let b = if k % 2 == 0 {
                    -f(next()) * f(next())
                } else {
                    // Half an ulp of `a` in `format`, give or take a part f64
                    // loses beside `a`: the f64 sum lands on the midpoint.
                    // (A zero or infinite `a` takes 1's half ulp.)
                    let a = format.round(a);
                    let binade = match a.abs().log2().floor() {
                        e if e.is_finite() => e as i32,
                        _ => 0,
                    };
                    let half = 2f64.powi(binade - format.precision() as i32);
                    let side = (next() % 3) as f64 - 1.0;
                    half * (1.0 + side * 2f64.powi(-50))
                };
                let a = if k % 2 == 0 { a } else { format.round(a) };
                assert_eq!(
                    add_nearest(format, a, b).to_bits(),
                    add_rounding_to_odd(format, a, b).to_bits(),
                    "{format}: {a:e} + {b:e}"
                );
            }
        }
    }

    #[test]
    fn truncation_in_f64_sees_the_exact_sum() {
        let tiny = 2f64.powi(-60);
        assert_eq!(
            add_toward_zero(Format::F64, 1.0, -tiny),
            1.0 - f64::EPSILON / 2.0
        );
        assert_eq!(add_toward_zero(Format::F64, 1.0, tiny), 1.0);
        assert_eq!(
            add_toward_zero(Format::F64, -1.0, tiny),
            -1.0 + f64::EPSILON / 2.0
        );
        assert_eq!(Format::F64.add(1.0, -tiny), 1.0);
    }

    /// Just below a power of two `log2` rounds up to it: the step toward
    /// zero is still one ulp of the binade below (a right-to-left sum under
    /// `FE_TOWARDZERO` ends at 16383.999999999989, not ...987).
    #[test]
    fn truncation_just_below_a_power_of_two_steps_one_ulp() {
        let below = f64::from_bits(16384f64.to_bits() - 5);
        let tiny = 2f64.powi(-70);
        assert_eq!(
            add_toward_zero(Format::F64, below, -tiny),
            f64::from_bits(below.to_bits() - 1)
        );
        let below = f64::from(f32::from_bits(4096f32.to_bits() - 1));
        assert_eq!(
            add_toward_zero(Format::F32, below, -tiny),
            f64::from(f32::from_bits(4096f32.to_bits() - 2))
        );
    }
}
