//! What each node of a summation tree computes: the format its partial sum
//! is rounded to and how it rounds. A revealed order says *which* numbers
//! meet; this model says what the meeting produces, so that a replay
//! reproduces the black box's bits and not only its order
//! (docs/ALGORITHMS.md, Arithmetic).
//!
//! Most black boxes add every node alike ([`Arithmetic::uniform`]); some do
//! not: OpenBLAS's `sdot` adds its SIMD body in f32 and its tail in f64.
//! A model is a default for every node and the nodes that differ from it,
//! each named by its leaves ([`NodeKey`]), so it survives the tree's round
//! trip through a file.
//!
//! ```
//! use fprev::arith::{Arithmetic, NodeArithmetic, Rounding};
//! use fprev::reduce::Replay;
//! use fprev::{Format, SummationTree};
//!
//! let tree: SummationTree = "((0+1)+2)".parse().unwrap();
//! let truncating = Arithmetic::uniform(NodeArithmetic {
//!     rounding: Rounding::TowardZero,
//!     ..NodeArithmetic::ieee(Format::F32)
//! });
//! let replay = Replay::with_arithmetic(&tree, &truncating);
//! // 1 + 2^-24 + 2^-24 in f32: each addition truncates the half-ulp away.
//! let tiny = 2f64.powi(-24);
//! assert_eq!(replay.sum(&[1.0, tiny, tiny]), 1.0);
//! let nearest = Replay::new(&tree, Format::F32);
//! assert_eq!(nearest.sum(&[tiny, tiny, 1.0]), 1.0 + 2.0 * tiny);
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::format::{FUSED_FRACTION_BITS, Format, fused_exact_at, fused_sum, leading_exponent};

mod extended;
mod model;
mod products;
mod rounding;

pub use extended::Extended;
pub use model::{Arithmetic, MODEL_VERSION, NodeKey, Parting};
pub use products::{Product, Products};
pub use rounding::Rounding;
use rounding::truncate;

/// The most bits a fused node may keep below its largest term: more than
/// a reveal can find (it asks up to 63) and what the replay's 128-bit
/// integer sum holds.
pub const MAX_FUSED_BITS: u32 = 64;

/// What one node computes: its exact result rounded to `format` in the way
/// `rounding` says. A fused node (three or more children) aligns its terms
/// to the largest exponent among them, truncates each to `fused_bits` bits
/// below it (the tensor-core model: the accumulator's fraction bits plus a
/// few extra), adds them exactly and rounds the sum once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NodeArithmetic {
    /// The format the node's result is rounded to.
    #[serde(with = "format_name")]
    pub format: Format,
    /// How it rounds.
    pub rounding: Rounding,
    /// Of a fused node: the bits kept below the largest term's leading bit
    /// (`None`: [`crate::format::FUSED_FRACTION_BITS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fused_bits: Option<u32>,
    /// A step of Kahan's compensated sum, in `format`: the node adds its
    /// second child `x` to its first `s` as `y = x - c`, `t = s + y`, and
    /// carries the error `c' = (t - s) - y` to its parent, `c` being what
    /// its first child carried (0 unless that child is such a step too).
    /// The last step of a chain (its parent is not one) returns `t - c'`,
    /// or `t` where it drops its error. XLA's sum on CPU adds the sums of
    /// its chunks of 64 so (a lane's rest, if any, in a last step that
    /// drops its error).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compensated: bool,
    /// Of the last step of a compensated chain: it returns its sum `t`
    /// without taking its error off (as Kahan's textbook loop does).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drops_error: bool,
    /// Of a fused node of products: the format of their factors, whose
    /// exponents align them. A tensor core aligns a product `x * y` at
    /// `e(x) + e(y)` (a subnormal factor counting as the format's least
    /// normal exponent), not at the product's own leading bit, which lies
    /// one higher where the significands' product reaches 2: its window
    /// then keeps one bit more of such products (MMA-Sim's T-FDPA).
    /// `None`: every term aligns at its own leading bit.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "model::format_option"
    )]
    pub aligns_factors: Option<Format>,
}

impl NodeArithmetic {
    /// IEEE addition in `format`, rounding to nearest.
    pub fn ieee(format: Format) -> Self {
        NodeArithmetic {
            format,
            rounding: Rounding::NearestEven,
            fused_bits: None,
            compensated: false,
            drops_error: false,
            aligns_factors: None,
        }
    }

    /// This node's result of `terms` (two for an addition, more for a
    /// fused node).
    #[inline]
    pub fn sum(&self, terms: &[f64]) -> f64 {
        match terms {
            [a, b] if self.fused_bits.is_none() => self.rounding.add(self.format, *a, *b),
            _ if terms.iter().any(|t| !t.is_finite()) => fused_sum(terms, self.format),
            _ => {
                let top = terms
                    .iter()
                    .filter(|t| **t != 0.0)
                    .map(|t| leading_exponent(*t))
                    .max();
                top.map_or(0.0, |top| self.fused_at(terms, top))
            }
        }
    }

    /// This fused node's result of `terms`, whose `x_i * y_i` products are
    /// the operands `o < leaves` (the first `leaves` values are the
    /// products of `x` and `y`): where the node aligns products by their
    /// factors' exponents, its window starts at the largest such
    /// exponent; elsewhere as [`NodeArithmetic::sum`].
    pub fn sum_of_products(&self, terms: &[f64], operands: &[u32], xy: [&[f64]; 2]) -> f64 {
        let Some(factors) = self
            .aligns_factors
            .filter(|_| terms.iter().all(|t| t.is_finite()))
        else {
            return self.sum(terms);
        };
        let leaves = xy[0].len();
        let least = leading_exponent(factors.min_normal());
        let factor = |v: f64| leading_exponent(v).max(least);
        let top = terms
            .iter()
            .zip(operands)
            .filter(|(t, _)| **t != 0.0)
            .map(|(&t, &o)| match o as usize {
                o if o < leaves => factor(xy[0][o]) + factor(xy[1][o]),
                _ => leading_exponent(t),
            })
            .max();
        top.map_or(0.0, |top| self.fused_at(terms, top))
    }

    /// The fused sum of finite `terms` in a window of this node's bits
    /// below `2^top`, rounded as the node rounds.
    fn fused_at(&self, terms: &[f64], top: i32) -> f64 {
        let bits = self.fused_bits.map_or(FUSED_FRACTION_BITS, |b| b as i32);
        let exact = fused_exact_at(terms, top, bits);
        match self.rounding {
            Rounding::NearestEven => self.format.round(exact),
            Rounding::TowardZero => truncate(self.format, exact),
        }
    }
}

/// `f32`, `f32 toward-zero`, `f32 fused keeping 26 bits`, `f32 compensated`.
impl fmt::Display for NodeArithmetic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.format)?;
        if self.rounding != Rounding::NearestEven {
            write!(f, " {}", self.rounding)?;
        }
        if let Some(bits) = self.fused_bits {
            write!(f, " fused keeping {bits} bits")?;
        }
        if self.compensated {
            f.write_str(" compensated")?;
        }
        if self.drops_error {
            f.write_str(" dropping its error")?;
        }
        if let Some(format) = self.aligns_factors {
            write!(f, " aligning products at their {format} factors' exponents")?;
        }
        Ok(())
    }
}

/// A [`Format`] as its name in files (the survey's GPU arithmetic too).
pub(crate) mod format_name {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::format::Format;

    pub fn serialize<S: Serializer>(f: &Format, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(f.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Format, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}
