//! Values wider than `f64`: the partial sums of an x87 accumulator (64
//! significant bits, `long double` on x86), which a replay must carry whole
//! to round them as the hardware does.
//!
//! [`Extended`] is a binary floating-point value with a 64-bit significand
//! and an exponent wide enough for any sum of `f64` values; [`Extended::add`]
//! rounds the exact sum once to any precision up to 64 bits, with or
//! without a format's subnormal range.
//!
//! ```
//! use fprev::Format;
//! use fprev::arith::{Extended, Rounding};
//!
//! // 1 + 2^-60 needs 61 bits: f64 loses the 2^-60, an x87 register keeps it.
//! let one = Extended::from_f64(1.0);
//! let tiny = Extended::from_f64(2f64.powi(-60));
//! let sum = one.add(tiny, Format::X87, Rounding::NearestEven);
//! assert_eq!(sum.add(Extended::from_f64(-1.0), Format::X87, Rounding::NearestEven).to_f64(Format::F64), 2f64.powi(-60));
//! assert_eq!(sum.to_f64(Format::F64), 1.0);
//! ```

use super::Rounding;
use crate::format::{Format, scale_pow2};

/// A finite value `±sig 2^exp` with `sig`'s top bit set (or `sig = 0`), or
/// an infinity or NaN kept as its `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extended {
    neg: bool,
    exp: i32,
    sig: u64,
    /// An infinity or NaN: `sig` and `exp` are then unused.
    special: Option<f64>,
}

impl Extended {
    /// The value of `x`, exactly.
    pub fn from_f64(x: f64) -> Self {
        if !x.is_finite() {
            return Extended {
                neg: x < 0.0,
                exp: 0,
                sig: 0,
                special: Some(x),
            };
        }
        let bits = x.to_bits();
        let neg = bits >> 63 == 1;
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let fraction = bits & ((1 << 52) - 1);
        let (sig, exp) = match biased {
            0 => (fraction, -1074),
            _ => (fraction | 1 << 52, biased - 1075),
        };
        normalised(neg, sig.into(), exp)
    }

    /// Whether this is a zero.
    fn is_zero(self) -> bool {
        self.special.is_none() && self.sig == 0
    }

    /// `self + other`, exact, rounded once to `format`'s precision (its
    /// subnormal range too, for the IEEE formats) in the way `rounding`
    /// says.
    pub fn add(self, other: Extended, format: Format, rounding: Rounding) -> Extended {
        if self.special.is_some() || other.special.is_some() {
            return Extended::from_f64(self.as_f64_lossy() + other.as_f64_lossy());
        }
        if other.is_zero() || self.is_zero() {
            let (z, x) = if self.is_zero() {
                (self, other)
            } else {
                (other, self)
            };
            if x.is_zero() {
                // +0 unless both are -0 (to nearest and toward zero alike).
                return Extended {
                    neg: z.neg && x.neg,
                    ..z
                };
            }
            return round(x.neg, x.sig.into(), x.exp, format, rounding);
        }
        let (big, small) = if (self.exp + 64, self.sig) >= (other.exp + 64, other.sig) {
            (self, other)
        } else {
            (other, self)
        };
        // Both significands as 127-bit numbers with the big one's top bit at
        // 126: 63 guard bits below it, and the small one's bits shifted out
        // kept as a sticky bit, which is all a single rounding needs.
        let guard = 63;
        let b = (big.sig as u128) << guard;
        let shift = (big.exp - small.exp) as u32;
        let s = (small.sig as u128) << guard;
        let aligned = match shift {
            0 => s,
            1..=127 => (s >> shift) | u128::from(s & ((1u128 << shift) - 1) != 0),
            _ => 1,
        };
        let exp = big.exp - guard;
        if big.neg == small.neg {
            round(big.neg, b + aligned, exp, format, rounding)
        } else if b == aligned {
            // An exact cancellation is +0 to nearest and toward zero.
            Extended::from_f64(0.0)
        } else {
            round(big.neg, b - aligned, exp, format, rounding)
        }
    }

    /// This value rounded to `format` (to nearest, ties to even), as an
    /// `f64`: the conversion of a wide result to the type a black box
    /// returns.
    pub fn to_f64(self, format: Format) -> f64 {
        let narrow = match format {
            Format::X87 => Format::F64,
            _ => format,
        };
        let rounded = match self.special {
            Some(_) => self,
            None => round(
                self.neg,
                self.sig.into(),
                self.exp,
                narrow,
                Rounding::NearestEven,
            ),
        };
        narrow.round(rounded.as_f64_lossy())
    }

    /// The nearest `f64`'s value when this holds 53 bits or fewer in
    /// `f64`'s range, as every [`Extended::to_f64`] result does.
    fn as_f64_lossy(self) -> f64 {
        if let Some(x) = self.special {
            return x;
        }
        let magnitude = scale_pow2(self.sig as f64, self.exp);
        if self.neg { -magnitude } else { magnitude }
    }
}

impl std::ops::Neg for Extended {
    type Output = Extended;
    fn neg(self) -> Extended {
        Extended {
            neg: !self.neg,
            special: self.special.map(|x| -x),
            ..self
        }
    }
}

/// `±m 2^exp` as an [`Extended`], exactly (`m` has at most 64 bits).
fn normalised(neg: bool, m: u128, exp: i32) -> Extended {
    if m == 0 {
        return Extended {
            neg,
            exp: 0,
            sig: 0,
            special: None,
        };
    }
    let top = 127 - m.leading_zeros() as i32;
    let shift = 63 - top;
    let sig = if shift >= 0 { m << shift } else { m >> -shift };
    Extended {
        neg,
        exp: exp - shift,
        sig: sig as u64,
        special: None,
    }
}

/// `±m 2^exp` rounded to `format`'s precision and, below its smallest
/// normal value, to its subnormal spacing (x87's range holds any sum of
/// `f64` values: no spacing limit there).
fn round(neg: bool, m: u128, exp: i32, format: Format, rounding: Rounding) -> Extended {
    if m == 0 {
        return normalised(neg, 0, 0);
    }
    let p = format.precision() as i32;
    let top = exp + 127 - m.leading_zeros() as i32;
    // The exponent of the last bit kept.
    let mut last = top - (p - 1);
    if format != Format::X87 {
        let lowest = format.min_normal().log2() as i32 - (p - 1);
        last = last.max(lowest);
    }
    let drop = last - exp;
    if drop <= 0 {
        return normalised(neg, m, exp);
    }
    // `m` is below 2^128: dropping 129 bits or more leaves less than half
    // of the last bit kept.
    let drop = drop as u32;
    let (kept, rest, half) = match drop {
        ..128 => (m >> drop, m & ((1u128 << drop) - 1), 1u128 << (drop - 1)),
        128 => (0, m, 1u128 << 127),
        _ => (0, 0, 1),
    };
    let up = match rounding {
        Rounding::NearestEven => rest > half || (rest == half && kept & 1 == 1),
        Rounding::TowardZero => false,
    };
    normalised(neg, kept + u128::from(up), last)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random `f64` values over a wide range of exponents and signs, with
    /// subnormals, zeros and neighbours of each other among them.
    fn values(count: usize) -> Vec<f64> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..count)
            .map(|k| {
                let r = next();
                let x = match k % 5 {
                    0 => f64::from_bits(r & !(0x7ff << 52) | (((r >> 52) % 80 + 980) << 52)),
                    1 => f64::from_bits(r >> 12),
                    2 => f64::from_bits(r & !(0x7ff << 52) | (1023 << 52)),
                    3 => (r % 1000) as f64,
                    _ => f64::from_bits(r & !(0x7ff << 52) | (((r >> 52) % 2046 + 1) << 52)),
                };
                if r & 1 == 1 { -x } else { x }
            })
            .collect()
    }

    #[test]
    fn every_f64_comes_back_whole() {
        for x in values(4000)
            .into_iter()
            .chain([0.0, -0.0, f64::MAX, 5e-324])
        {
            let e = Extended::from_f64(x);
            assert_eq!(e.to_f64(Format::F64).to_bits(), x.to_bits(), "{x:e}");
        }
    }

    /// At 53 and 24 bits, with their subnormal ranges, the rounding is the
    /// hardware's own `f64` and `f32` addition: an independent check of the
    /// alignment, the sticky bit and both rounding directions' ties.
    #[test]
    fn additions_round_as_the_hardware_does() {
        let xs = values(3000);
        for (k, &a) in xs.iter().enumerate() {
            for &b in xs[k..].iter().take(40).chain([-a, a, 0.0].iter()) {
                let sum = Extended::from_f64(a).add(
                    Extended::from_f64(b),
                    Format::F64,
                    Rounding::NearestEven,
                );
                assert_eq!(
                    sum.to_f64(Format::F64).to_bits(),
                    (a + b).to_bits(),
                    "{a:e} + {b:e}"
                );
                let (a, b) = (a as f32, b as f32);
                let sum = Extended::from_f64(a.into()).add(
                    Extended::from_f64(b.into()),
                    Format::F32,
                    Rounding::NearestEven,
                );
                let (got, want) = (sum.to_f64(Format::F32), f64::from(a + b));
                assert!(
                    got == want || got.is_nan() && want.is_nan(),
                    "{a:e} + {b:e} in f32"
                );
            }
        }
    }

    /// At 64 bits, an addition is exact wherever the exact sum fits 64 bits
    /// (TwoSum splits it into two `f64` values whose span tells).
    #[test]
    fn sixty_four_bits_keep_what_f64_drops() {
        let xs = values(2000);
        let mut exact = 0;
        for (k, w) in xs.windows(2).enumerate() {
            // b a few binades below a: the exact sum spans about 64 bits.
            let (a, b) = (
                w[0],
                w[1].abs() * 2f64.powi(-(k as i32 % 14)).copysign(w[0]),
            );
            let b = b * 2f64.powi(exponent(a) - exponent(b) - (k as i32 % 12));
            let (s, e) = two_sum(a, b);
            if e == 0.0 || !s.is_finite() || a == 0.0 || b == 0.0 {
                continue;
            }
            // The exact sum's bits lie between s's top and the lower of
            // a's and b's last set bits.
            let span = exponent(s) + 1 - last_bit(a).min(last_bit(b));
            if span < 64 {
                let wide = Extended::from_f64(a).add(
                    Extended::from_f64(b),
                    Format::X87,
                    Rounding::NearestEven,
                );
                let back = wide.add(Extended::from_f64(-s), Format::X87, Rounding::NearestEven);
                assert_eq!(back.to_f64(Format::F64), e, "{a:e} + {b:e}");
                exact += 1;
            }
        }
        assert!(exact > 100, "only {exact} sums fit 64 bits");
    }

    /// Truncation, checked at 53 bits against TwoSum: the sum rounded to
    /// nearest steps back toward zero when its error points that way.
    #[test]
    fn truncation_never_rounds_away() {
        let xs = values(3000);
        for w in xs.windows(2) {
            let (a, b) = (w[0], w[1]);
            let (s, e) = two_sum(a, b);
            if !s.is_finite() || s.abs() < f64::MIN_POSITIVE {
                continue;
            }
            let want = if e != 0.0 && (e < 0.0) != (s < 0.0) {
                f64::from_bits(s.to_bits() - 1)
            } else {
                s
            };
            let got =
                Extended::from_f64(a).add(Extended::from_f64(b), Format::F64, Rounding::TowardZero);
            assert_eq!(got.to_f64(Format::F64), want, "{a:e} + {b:e}");
        }
    }

    fn two_sum(a: f64, b: f64) -> (f64, f64) {
        let s = a + b;
        let bb = s - a;
        (s, (a - (s - bb)) + (b - bb))
    }

    fn exponent(x: f64) -> i32 {
        x.abs().log2().floor() as i32
    }

    /// The exponent of `x`'s lowest set bit (`x` normal).
    fn last_bit(x: f64) -> i32 {
        let bits = x.to_bits();
        let m = bits & ((1 << 52) - 1) | 1 << 52;
        ((bits >> 52) & 0x7ff) as i32 - 1075 + m.trailing_zeros() as i32
    }
}
