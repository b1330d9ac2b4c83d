//! How a multiplying black box's products reach their additions: exact
//! or rounded to a format, one default and the summands that differ.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::format::Format;

/// How one summand of a dot product, GEMV or GEMM, the product
/// `x_i * y_i`, reaches the addition that takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Product {
    /// Exactly: a fused multiply-add, or a format wide enough for every
    /// product of the inputs (f32 products in f64).
    Exact,
    /// Rounded to nearest (ties to even) in this format first.
    Rounded(Format),
}

impl Product {
    /// The product of `x` and `y` as its addition sees it: a value and,
    /// for an exact product that `f64` cannot hold, the rest of it.
    #[inline]
    pub fn of(self, x: f64, y: f64) -> (f64, f64) {
        let p = x * y;
        match self {
            // Factors of 53 significant bits together (any two f32 values)
            // multiply exactly in f64, without the slower fused
            // multiply-add that finds the rest of a longer product.
            Product::Exact if significant_bits(x) + significant_bits(y) <= 53 => (p, 0.0),
            Product::Exact => (p, x.mul_add(y, -p)),
            Product::Rounded(format) => (format.round(p), 0.0),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Product::Exact => "exact",
            Product::Rounded(format) => format.name(),
        }
    }
}

/// The significant bits of `x`'s f64 significand, from its leading bit to
/// its last 1 (over-counted for subnormals, which only costs speed).
#[inline]
fn significant_bits(x: f64) -> u32 {
    53 - (x.to_bits() | 1 << 52).trailing_zeros()
}

impl fmt::Display for Product {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Product {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "exact" => Ok(Product::Exact),
            _ => s
                .parse()
                .map(Product::Rounded)
                .map_err(|_| format!("unknown product '{s}': expected exact or a format")),
        }
    }
}

impl Serialize for Product {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Product {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The products of a black box that multiplies: a default and the leaves
/// that differ (an FMA loop rounds the product that starts each
/// accumulator and fuses the rest).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Products {
    /// What every product not listed in `leaves` does.
    pub default: Product,
    /// The summands whose products do otherwise, by index.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub leaves: BTreeMap<usize, Product>,
}

impl Products {
    /// The products of `per_leaf` (one per summand), the most common as
    /// the default.
    pub fn from_leaves(per_leaf: &[Product]) -> Self {
        let mut counts: Vec<(Product, usize)> = Vec::new();
        for p in per_leaf {
            match counts.iter_mut().find(|(q, _)| q == p) {
                Some((_, c)) => *c += 1,
                None => counts.push((*p, 1)),
            }
        }
        let default = counts
            .iter()
            .max_by_key(|(_, c)| *c)
            .map_or(Product::Exact, |(p, _)| *p);
        Products {
            default,
            leaves: per_leaf
                .iter()
                .enumerate()
                .filter(|(_, p)| **p != default)
                .map(|(i, p)| (i, *p))
                .collect(),
        }
    }

    /// What summand `leaf`'s product does.
    pub fn at(&self, leaf: usize) -> Product {
        self.leaves.get(&leaf).copied().unwrap_or(self.default)
    }
}

/// `exact`; `f32, 3 exact`.
impl fmt::Display for Products {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.default)?;
        let mut others: BTreeMap<&str, usize> = BTreeMap::new();
        for p in self.leaves.values() {
            *others.entry(p.name()).or_default() += 1;
        }
        for (what, count) in others {
            write!(f, ", {count} {what}")?;
        }
        Ok(())
    }
}
