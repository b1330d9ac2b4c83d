//! Number formats: the inputs a black box takes and the accumulators it sums in.
//!
//! Every value fprev handles is carried as an `f64` that is exactly
//! representable in its [`Format`]; [`Format::round`] is the rounding of one
//! operation in that format. Because `f64` has more than `2p + 2` bits for
//! every narrower format here, an `f64` addition followed by
//! [`Format::round`] is the correctly rounded addition of that format (double
//! rounding is innocuous), so native orders and tree replay can compute in any
//! format through one code path. The one exception is [`Format::X87`], an
//! accumulator wider than `f64`: a replay carries its partial sums as
//! [`Extended`](crate::arith::Extended) values.
//!
//! ```
//! use fprev::Format;
//!
//! let f = Format::Bf16;
//! assert_eq!(f.precision(), 8);
//! // 256 + 1 is not representable with 8 significant bits: ties to even.
//! assert_eq!(f.add(256.0, 1.0), 256.0);
//! assert_eq!(f.mask(), 2f64.powi(127));
//! ```

use std::fmt;
use std::str::FromStr;

use float8::{F8E4M3, F8E5M2};
use half::{bf16, f16};

/// A floating-point format that fprev can probe and accumulate in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// IEEE binary64.
    F64,
    /// IEEE binary32, the default.
    #[default]
    F32,
    /// IEEE binary16.
    F16,
    /// bfloat16 (8 significant bits, f32's exponent range).
    Bf16,
    /// OCP fp8 E4M3 ("fn": no infinities, max 448; overflow saturates).
    E4m3,
    /// OCP fp8 E5M2 (max 57344; overflow saturates).
    E5m2,
    /// NVIDIA's TensorFloat-32: f32's exponent range with 11 significant
    /// bits, the inputs of a tensor core's TF32 instructions (and AMD's
    /// XF32), stored as f32 values whose low 13 bits are zero.
    Tf32,
    /// NVIDIA's E8M13: f32's exponent range with 14 significant bits, what
    /// the fp8 instructions of Ada's and Hopper's tensor cores round their
    /// f32 results to (toward zero; MMA-Sim's RZ-E8M13). An accumulator
    /// format only, never an input's, and not in [`Format::ALL`].
    E8m13,
    /// The x87 80-bit extended format (64 significant bits), `long double`
    /// on x86: an accumulator format only, never an input's, and not in
    /// [`Format::ALL`]. An `f64` is one of its values, but not every one of
    /// its values is an `f64` ([`Extended`](crate::arith::Extended) holds them).
    X87,
}

impl Format {
    /// Every format inputs can come in, widest first.
    pub const ALL: [Format; 7] = [
        Format::F64,
        Format::F32,
        Format::Tf32,
        Format::F16,
        Format::Bf16,
        Format::E4m3,
        Format::E5m2,
    ];

    /// The name used on the command line and in tree files.
    pub fn name(self) -> &'static str {
        match self {
            Format::F64 => "f64",
            Format::F32 => "f32",
            Format::F16 => "f16",
            Format::Bf16 => "bf16",
            Format::E4m3 => "e4m3",
            Format::E5m2 => "e5m2",
            Format::Tf32 => "tf32",
            Format::E8m13 => "e8m13",
            Format::X87 => "x87",
        }
    }

    /// Significand precision `p`, counting the implicit bit.
    #[inline]
    pub fn precision(self) -> u32 {
        match self {
            Format::X87 => 64,
            Format::F64 => 53,
            Format::F32 => 24,
            Format::E8m13 => 14,
            Format::F16 | Format::Tf32 => 11,
            Format::Bf16 => 8,
            Format::E4m3 => 4,
            Format::E5m2 => 3,
        }
    }

    /// The mask `M` of the masked all-one inputs (docs/ALGORITHMS.md, Masked inputs).
    pub fn mask(self) -> f64 {
        match self {
            Format::F64 | Format::X87 => 2f64.powi(1023),
            Format::F32 | Format::Tf32 | Format::Bf16 | Format::E8m13 => 2f64.powi(127),
            Format::F16 | Format::E5m2 => 2f64.powi(15),
            Format::E4m3 => 2f64.powi(8),
        }
    }

    /// The unit `u` every unmasked summand holds.
    pub fn unit(self) -> f64 {
        match self {
            Format::X87
            | Format::F64
            | Format::F32
            | Format::Tf32
            | Format::Bf16
            | Format::E8m13 => 1.0,
            Format::F16 => 2f64.powi(-24),
            Format::E5m2 => 2f64.powi(-16),
            Format::E4m3 => 2f64.powi(-9),
        }
    }

    /// Largest finite value.
    pub fn max_finite(self) -> f64 {
        match self {
            Format::F64 | Format::X87 => f64::MAX,
            Format::F32 => f32::MAX as f64,
            Format::Tf32 => TF32_MAX,
            Format::E8m13 => E8M13_MAX,
            Format::F16 => f16::MAX.to_f64(),
            Format::Bf16 => bf16::MAX.to_f64(),
            Format::E4m3 => F8E4M3::MAX.to_f64(),
            Format::E5m2 => F8E5M2::MAX.to_f64(),
        }
    }

    /// Smallest positive normal value: below it, values lose precision
    /// (and some hardware flushes them to zero).
    #[inline]
    pub fn min_normal(self) -> f64 {
        // Constants, not `2^e` computed: replays ask this of every addition.
        match self {
            Format::F64 => f64::MIN_POSITIVE,
            // Every f64, subnormal ones too, is a normal x87 value.
            Format::X87 => 5e-324,
            Format::F32 | Format::Tf32 | Format::Bf16 | Format::E8m13 => f32::MIN_POSITIVE as f64,
            Format::F16 | Format::E5m2 => 1.0 / 16384.0,
            Format::E4m3 => 1.0 / 64.0,
        }
    }

    /// The spacing of this format's values at `x`'s magnitude (a unit in
    /// the last place), the subnormals' below the smallest normal value.
    ///
    /// ```
    /// use fprev::Format;
    ///
    /// assert_eq!(Format::F32.ulp(1.0), f32::EPSILON as f64);
    /// assert_eq!(Format::F32.ulp(-3.0), 2.0 * f32::EPSILON as f64);
    /// assert_eq!(Format::F64.ulp(0.0), Format::F64.ulp(f64::MIN_POSITIVE));
    /// ```
    pub fn ulp(self, x: f64) -> f64 {
        // The exponent of |x| from its bits: exact where log2 may round.
        let of = |v: f64| ((v.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        let e = if x.abs() >= f64::MIN_POSITIVE {
            of(x.abs())
        } else {
            i32::MIN
        };
        let emin = match self {
            // x87 values reach below f64's normals; f64's subnormals bound it.
            Format::X87 => of(f64::MIN_POSITIVE),
            _ => of(self.min_normal()),
        };
        2f64.powi(e.max(emin) - self.precision() as i32 + 1)
    }

    /// How many units this format counts exactly when it accumulates them:
    /// every integer up to `2^p` is representable, so a sum of at most that
    /// many units is exact in any order.
    pub fn exact_count(self) -> u64 {
        1u64 << self.precision().min(63)
    }

    /// Rounds `x` to the nearest value of this format (ties to even).
    #[inline(always)]
    pub fn round(self, x: f64) -> f64 {
        match self {
            Format::F64 | Format::X87 => x,
            Format::F32 => x as f32 as f64,
            Format::F16 => round_binary(x, 11, -14, 65504.0),
            Format::Tf32 => round_binary(x, 11, -126, TF32_MAX),
            Format::E8m13 => round_binary(x, 14, -126, E8M13_MAX),
            Format::Bf16 => round_binary(x, 8, -126, BF16_MAX),
            Format::E4m3 => F8E4M3::from_f64(x).to_f64(),
            Format::E5m2 => F8E5M2::from_f64(x).to_f64(),
        }
    }

    /// `2^e` as `x * y`, both normal numbers of this format: `(2^e, 1)`
    /// where it holds `2^e` itself, else two factors near `2^(e/2)`; `None`
    /// where neither fits. Narrow inputs reach a wide accumulator's range
    /// so, as products a black box that multiplies forms exactly.
    ///
    /// ```
    /// use fprev::Format;
    ///
    /// assert_eq!(Format::F32.as_product(-25), Some((2f64.powi(-25), 1.0)));
    /// assert_eq!(Format::F16.as_product(25), Some((2f64.powi(12), 2f64.powi(13))));
    /// assert_eq!(Format::E4m3.as_product(-40), None);
    /// ```
    pub fn as_product(self, e: i32) -> Option<(f64, f64)> {
        let normal = |e: i32| {
            let v = scale_pow2(1.0, e);
            (v >= self.min_normal() && v <= self.max_finite()).then_some(v)
        };
        match normal(e) {
            Some(v) => Some((v, 1.0)),
            None => Some((normal(e / 2)?, normal(e - e / 2)?)),
        }
    }

    /// The encoding of `x`, a value of this format, in its own bits (the
    /// low 64, 32, 16 or 8), as other libraries store it.
    ///
    /// ```
    /// use fprev::Format;
    ///
    /// assert_eq!(Format::F32.to_bits(1.0), 0x3f80_0000);
    /// assert_eq!(Format::Bf16.to_bits(-2.0), 0xc000);
    /// assert_eq!(Format::E4m3.to_bits(448.0), 0x7e);
    /// ```
    pub fn to_bits(self, x: f64) -> u64 {
        match self {
            Format::F64 | Format::X87 => x.to_bits(),
            Format::F32 | Format::Tf32 | Format::E8m13 => (x as f32).to_bits().into(),
            Format::F16 => f16::from_f64(x).to_bits().into(),
            Format::Bf16 => bf16::from_f64(x).to_bits().into(),
            Format::E4m3 => F8E4M3::from_f64(x).to_bits().into(),
            Format::E5m2 => F8E5M2::from_f64(x).to_bits().into(),
        }
    }

    /// One IEEE addition in this format.
    #[inline]
    pub fn add(self, a: f64, b: f64) -> f64 {
        self.round(a + b)
    }

    /// Whether `x` is a value of this format.
    pub fn represents(self, x: f64) -> bool {
        x.is_nan() || self.round(x) == x
    }

    /// The format wide enough to accumulate this one in, as libraries
    /// commonly do: f64 stays f64, everything else accumulates in f32.
    pub fn default_accumulator(self) -> Format {
        match self {
            Format::F64 => Format::F64,
            _ => Format::F32,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        let found = match lower.as_str() {
            "f64" | "float64" | "double" => Format::F64,
            "f32" | "float32" | "float" | "single" => Format::F32,
            "f16" | "float16" | "half" => Format::F16,
            "bf16" | "bfloat16" => Format::Bf16,
            "tf32" | "tensorfloat32" | "xf32" => Format::Tf32,
            "e4m3" | "fp8-e4m3" | "float8_e4m3fn" | "e4m3fn" => Format::E4m3,
            "e5m2" | "fp8-e5m2" | "float8_e5m2" => Format::E5m2,
            "x87" | "f80" | "float80" | "long-double" => Format::X87,
            "e8m13" => Format::E8m13,
            _ => {
                return Err(format!(
                    "unknown format '{s}': expected one of f64, f32, tf32, f16, bf16, e4m3, \
                     e5m2 (or x87 or e8m13, accumulators)"
                ));
            }
        };
        Ok(found)
    }
}

/// bf16's largest finite value, `(2 - 2^-7) 2^127`.
const BF16_MAX: f64 = 3.3895313892515355e38;
/// TF32's largest finite value, `(2 - 2^-10) 2^127`.
const TF32_MAX: f64 = 3.4011621342146535e38;
/// E8M13's largest finite value, `(2 - 2^-13) 2^127`.
const E8M13_MAX: f64 = 3.4026159773350432e38;

/// `x` rounded to nearest, ties to even, in a binary format of `precision`
/// significant bits whose normal exponents start at `emin`, overflowing to
/// infinity past `max`. Once, from `f64`: the `half` crate's conversions
/// from `f64` pass through `f32` (with F16C) or drop its low 32 bits, so
/// they round twice, and a sum just past a tie lands on the even side.
#[inline]
fn round_binary(x: f64, precision: i32, emin: i32, max: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let quantum = scale_pow2(1.0, leading_exponent(x).max(emin) - precision + 1);
    // Dividing by a power of two is exact here, and so is the rounding.
    let r = (x / quantum).round_ties_even() * quantum;
    if r.abs() > max {
        f64::INFINITY.copysign(x)
    } else {
        r
    }
}

/// Fraction bits a fused node keeps below the largest term's leading bit
/// (docs/ALGORITHMS.md, Fused nodes: "at least 24").
pub const FUSED_FRACTION_BITS: i32 = 24;

/// One multi-term fused addition, the tensor-core model of docs/ALGORITHMS.md
/// (Fused nodes): the terms are aligned to the largest exponent among them, each
/// is truncated (toward zero) to [`FUSED_FRACTION_BITS`] bits below that
/// exponent, the truncated terms are added exactly, and the exact sum is
/// rounded once to `acc`.
///
/// ```
/// use fprev::format::{fused_sum, Format};
///
/// // Units vanish next to the cancelling masks: they fall below the window.
/// let m = Format::F32.mask();
/// assert_eq!(fused_sum(&[m, -m, 1.0, 1.0], Format::F32), 0.0);
/// assert_eq!(fused_sum(&[1.0, 2.0, 3.0], Format::F32), 6.0);
/// ```
pub fn fused_sum(terms: &[f64], acc: Format) -> f64 {
    if let Some(bad) = terms.iter().find(|t| !t.is_finite()) {
        return acc.round(terms.iter().sum::<f64>() + bad);
    }
    acc.round(fused_exact(terms, FUSED_FRACTION_BITS))
}

/// The sum a fused node rounds at its end: the terms aligned to the largest
/// exponent among them, each truncated toward zero to `fraction_bits` bits
/// below it, added exactly (finite terms; the result is exact in f64 for
/// windows up to about 50 bits and any realistic group width).
pub fn fused_exact(terms: &[f64], fraction_bits: i32) -> f64 {
    let Some(emax) = terms
        .iter()
        .filter(|t| **t != 0.0)
        .map(|t| leading_exponent(*t))
        .max()
    else {
        return 0.0;
    };
    fused_exact_at(terms, emax, fraction_bits)
}

/// [`fused_exact`] with the window's top given: each term truncated toward
/// zero to a multiple of `2^(top - fraction_bits)` (a term above `2^top`
/// keeps its high bits), added exactly.
pub fn fused_exact_at(terms: &[f64], top: i32, fraction_bits: i32) -> f64 {
    let quantum_exp = top - fraction_bits;
    let sum: i128 = terms
        .iter()
        .map(|&t| scale_pow2(t, -quantum_exp).trunc() as i128)
        .sum();
    scale_pow2(sum as f64, quantum_exp)
}

/// `floor(log2 |x|)` for finite non-zero `x`: the exponent of its leading
/// bit.
pub fn leading_exponent(x: f64) -> i32 {
    let bits = x.abs().to_bits();
    let biased = (bits >> 52) as i32;
    if biased == 0 {
        // Subnormal: the leading bit sits inside the fraction field.
        -1074 + (63 - bits.leading_zeros() as i32)
    } else {
        biased - 1023
    }
}

/// `x * 2^e` without intermediate overflow or underflow for the exponent
/// ranges fprev uses.
pub(crate) fn scale_pow2(x: f64, e: i32) -> f64 {
    let mut x = x;
    let mut e = e;
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e)
}

/// What a black box takes as a summand: a value of its input format, or
/// the product of one operand of each of two formats, which it forms
/// exactly (see `Probe::operands`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Summand {
    /// A value of this format.
    Value(Format),
    /// `x * y`, `x` of the first format and `y` a power of two of the
    /// second.
    Product(Format, Format),
}

impl Summand {
    /// Whether `v` is one such summand.
    pub fn represents(self, v: f64) -> bool {
        match self {
            Summand::Value(f) => f.represents(v),
            Summand::Product(a, b) => product(a, b, v).is_some(),
        }
    }

    /// `v` rounded to the nearest such summand: a value of the format, or
    /// `v` to the first operand's precision where a product gives that.
    pub fn round(self, v: f64) -> f64 {
        match self {
            Summand::Value(f) => f.round(v),
            Summand::Product(a, _) => {
                let r = round_binary(v, a.precision() as i32, -1022, f64::MAX);
                if self.represents(r) { r } else { a.round(v) }
            }
        }
    }

    /// The largest power of two it holds.
    pub fn mask(self) -> f64 {
        match self {
            Summand::Value(f) => f.mask(),
            Summand::Product(a, b) => a.mask() * b.mask(),
        }
    }

    /// The unit: its format's own, or the smallest product.
    pub fn unit(self) -> f64 {
        match self {
            Summand::Value(f) => f.unit(),
            Summand::Product(a, b) => a.ulp(0.0) * b.ulp(0.0),
        }
    }

    /// Every whole number of units up to this is one summand (a context
    /// leaf holding several fields' units): the first operand's count.
    pub fn exact_count(self) -> u64 {
        match self {
            Summand::Value(f) | Summand::Product(f, _) => f.exact_count(),
        }
    }
}

impl fmt::Display for Summand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Summand::Value(v) => write!(f, "{v}"),
            Summand::Product(a, b) if a == b => write!(f, "{a} (as products of two)"),
            Summand::Product(a, b) => write!(f, "{a} x {b} products"),
        }
    }
}

/// `v` as `x * y`, `x` a value of `a` and `y` a power of two of `b`
/// (`y = 1` where `a` holds `v`), or `None` where no such pair gives it.
///
/// ```
/// use fprev::format::product;
/// use fprev::Format;
///
/// // 2^16 is no e4m3 value (at most 448), but 256 * 256 is.
/// assert_eq!(product(Format::E4m3, Format::E4m3, 65536.0), Some((256.0, 256.0)));
/// ```
pub fn product(a: Format, b: Format, v: f64) -> Option<(f64, f64)> {
    if a.represents(v) && b.represents(1.0) {
        return Some((v, 1.0));
    }
    let exponent = |x: f64| x.log2().round() as i32;
    let (lo, hi) = (exponent(b.ulp(0.0)), exponent(b.mask()));
    (lo..=hi)
        .map(|k| 2f64.powi(k))
        .filter(|&y| b.represents(y))
        .map(|y| (v / y, y))
        .find(|&(x, y)| a.represents(x) && x * y == v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_product_splits_into_an_operand_of_each_format() {
        let e4m3 = Format::E4m3;
        // 2^16 is no e4m3 value (at most 448), but 256 * 256 is.
        assert_eq!(product(e4m3, e4m3, 65536.0), Some((256.0, 256.0)));
        assert_eq!(product(e4m3, e4m3, 3.0), Some((3.0, 1.0)));
        let tiny = 2f64.powi(-18);
        assert_eq!(
            product(e4m3, e4m3, tiny),
            Some((2f64.powi(-9), 2f64.powi(-9)))
        );
        // 17 needs 5 significant bits; e4m3 holds 4.
        assert_eq!(product(e4m3, e4m3, 17.0), None);
        assert_eq!(
            product(e4m3, Format::E5m2, 2f64.powi(23)),
            Some((256.0, 32768.0))
        );
    }

    /// Every finite value of an 8-bit format, found independently of
    /// `round` by decoding all 256 bit patterns.
    fn fp8_values(format: Format) -> Vec<f64> {
        let mut v: Vec<f64> = (0u8..=255)
            .map(|b| match format {
                Format::E4m3 => F8E4M3::from_bits(b).to_f64(),
                _ => F8E5M2::from_bits(b).to_f64(),
            })
            .filter(|x| x.is_finite())
            .collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    }

    /// Between each two neighbouring f16 (and bf16) values, found by
    /// decoding every bit pattern: the midpoint rounds to the even one, and
    /// the f64 just past it either way to the nearer one, as rounding once
    /// does (rounding through f32 first lands those on the midpoint).
    #[test]
    fn f16_and_bf16_rounding_is_once_and_nearest_even() {
        for format in [Format::F16, Format::Bf16] {
            let mut values: Vec<(f64, u16)> = (0u16..=u16::MAX)
                .map(|b| match format {
                    Format::F16 => (f16::from_bits(b).to_f64(), b),
                    _ => (bf16::from_bits(b).to_f64(), b),
                })
                .filter(|(x, _)| x.is_finite() && *x >= 0.0)
                .collect();
            values.sort_by(|a, b| a.0.total_cmp(&b.0));
            values.dedup_by(|a, b| a.0 == b.0);
            for w in values.windows(2) {
                let ((a, a_bits), (b, _)) = (w[0], w[1]);
                let mid = (a + b) / 2.0;
                let even = if a_bits % 2 == 0 { a } else { b };
                assert_eq!(format.round(mid), even, "{format} midpoint of {a} and {b}");
                assert_eq!(format.round(mid.next_up()), b, "{format} past {mid}");
                assert_eq!(format.round(mid.next_down()), a, "{format} short of {mid}");
                assert_eq!(format.round(-mid.next_up()), -b, "{format} past -{mid}");
            }
            let max = format.max_finite();
            assert_eq!(format.round(max), max);
            assert!(format.round(max * 1.01).is_infinite());
        }
        // The sum a tensor core's f16 result rounds: 1292.5 + 2^-15.
        assert_eq!(Format::F16.round(-1292.5000305175781), -1293.0);
    }

    #[test]
    fn fp8_rounding_is_nearest_even() {
        for format in [Format::E4m3, Format::E5m2] {
            let values = fp8_values(format);
            let max = format.max_finite();
            for w in values.windows(2) {
                let (a, b) = (w[0], w[1]);
                for x in [a, b, a + (b - a) * 0.25, a + (b - a) * 0.75] {
                    let want = if (x - a).abs() < (b - x).abs() { a } else { b };
                    assert_eq!(format.round(x), want, "{format} {x}");
                }
                let mid = (a + b) / 2.0;
                let r = format.round(mid);
                assert!(r == a || r == b, "{format} midpoint {mid}");
                // The even neighbour has a zero last significand bit.
                let even = if format.represents(a) && (a / ulp_at(format, a)) % 2.0 == 0.0 {
                    a
                } else {
                    b
                };
                if a != 0.0 && b != 0.0 && a.abs() < max {
                    assert_eq!(r, even, "{format} tie {mid} between {a} and {b}");
                }
            }
        }
    }

    fn ulp_at(format: Format, x: f64) -> f64 {
        let e = leading_exponent(x).max(emin(format));
        2f64.powi(e - format.precision() as i32 + 1)
    }

    fn emin(format: Format) -> i32 {
        match format {
            Format::E4m3 => -6,
            Format::E5m2 => -14,
            _ => unreachable!(),
        }
    }

    #[test]
    fn masks_and_units_satisfy_the_swamping_conditions() {
        for f in Format::ALL {
            let m = f.mask();
            let u = f.unit();
            assert!(f.represents(m) && f.represents(u), "{f}");
            assert!(m <= f.max_finite(), "{f}");
            assert_eq!(f.add(m, -m), 0.0);
            // Units count exactly up to 2^p in the format itself.
            let top = f.exact_count() as f64 * u;
            assert!(f.represents(top) && f.represents(top - u), "{f}");
            // 2^p + 1 units is a tie between 2^p and 2^p + 2: to even.
            assert_eq!(f.add(top, u), top, "{f}: 2^p + 1 units must round");
            // A handful of units is swamped by the mask.
            assert_eq!(f.add(m, 8.0 * u), m, "{f}");
        }
    }

    #[test]
    fn tf32_keeps_f32s_range_and_11_bits() {
        let t = Format::Tf32;
        // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: to even.
        assert_eq!(t.round(1.0 + 2f64.powi(-11)), 1.0);
        assert_eq!(t.round(1.0 + 3.0 * 2f64.powi(-11)), 1.0 + 2f64.powi(-9));
        assert!(t.represents(f32::MIN_POSITIVE as f64) && t.represents(2f64.powi(127)));
        assert_eq!(t.round(f32::MAX as f64), f64::INFINITY);
        assert_eq!(t.round(t.max_finite()), t.max_finite());
        // Its values are f32 values whose low 13 bits are zero.
        let x = t.round(std::f64::consts::PI);
        assert_eq!(t.to_bits(x) & 0x1fff, 0);
        assert_eq!(t.to_bits(x), Format::F32.to_bits(x));
        assert_eq!("xf32".parse::<Format>(), Ok(Format::Tf32));
    }

    #[test]
    fn fused_sum_aligns_truncates_and_rounds_once() {
        // 2^24 + 1 + 1: exact in fixed point, 2^24 + 2 is an f32 value.
        let big = 2f64.powi(24);
        assert_eq!(fused_sum(&[big, 1.0, 1.0], Format::F32), big + 2.0);
        // Sequential f32 adds would lose both ones.
        assert_eq!(Format::F32.add(Format::F32.add(big, 1.0), 1.0), big);
        // A term below the window is truncated away.
        assert_eq!(fused_sum(&[1.0, 2f64.powi(-30)], Format::F64), 1.0);
        assert_eq!(fused_sum(&[], Format::F32), 0.0);
        assert!(fused_sum(&[1.0, f64::NAN], Format::F32).is_nan());
    }

    #[test]
    fn format_names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>().unwrap(), f);
        }
        assert!(
            "f8".parse::<Format>()
                .unwrap_err()
                .contains("expected one of")
        );
    }
}
