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

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use petgraph::graph::NodeIndex;
use serde::{Deserialize, Serialize};

use crate::format::{FUSED_FRACTION_BITS, Format, fused_exact, fused_sum};
use crate::tree::SummationTree;

mod extended;

pub use extended::Extended;

/// The version of the model's file form this build writes; it reads every
/// version up to this one. Version 2 adds `inputs` and `products`,
/// version 3 `compensated`, version 4 the `x87` format.
pub const MODEL_VERSION: u32 = 4;

/// The most bits a fused node may keep below its largest term: more than
/// a reveal can find (it asks up to 63) and what the replay's 128-bit
/// integer sum holds.
pub const MAX_FUSED_BITS: u32 = 64;

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
fn truncate(format: Format, x: f64) -> f64 {
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
    // One ulp of `x` in `format`, at its binade (or the subnormal spacing).
    let p = format.precision() as i32;
    let binade = x.abs().log2().floor() as i32;
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
                let bits = self.fused_bits.map_or(FUSED_FRACTION_BITS, |b| b as i32);
                let exact = fused_exact(terms, bits);
                match self.rounding {
                    Rounding::NearestEven => self.format.round(exact),
                    Rounding::TowardZero => truncate(self.format, exact),
                }
            }
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
        Ok(())
    }
}

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

/// A node named by its leaves: the smallest summand under it and how many
/// there are. No two nodes of a tree share both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NodeKey {
    /// The smallest summand index under the node.
    pub first: usize,
    /// The number of summands under it.
    pub size: usize,
}

impl NodeKey {
    /// The key of every node of `tree`, indexed by node index.
    pub fn all(tree: &SummationTree) -> Vec<NodeKey> {
        let mut keys = vec![
            NodeKey {
                first: usize::MAX,
                size: 0
            };
            tree.graph().node_count()
        ];
        for i in 0..tree.n() {
            keys[tree.leaf(i).index()] = NodeKey { first: i, size: 1 };
        }
        for node in tree.post_order() {
            let children = tree.children(node);
            keys[node.index()] = NodeKey {
                first: children
                    .iter()
                    .map(|c| keys[c.index()].first)
                    .min()
                    .unwrap_or(usize::MAX),
                size: children.iter().map(|c| keys[c.index()].size).sum(),
            };
        }
        keys
    }
}

impl fmt::Display for NodeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the node of {} summands from x{}", self.size, self.first)
    }
}

/// The arithmetic of a whole tree: a default and the nodes that differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arithmetic {
    /// The file form's version ([`MODEL_VERSION`]).
    pub version: u32,
    /// What every node not listed in `nodes` computes.
    pub default: NodeArithmetic,
    /// The nodes that compute otherwise.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        with = "node_list"
    )]
    pub nodes: BTreeMap<NodeKey, NodeArithmetic>,
    /// The format the black box rounds its inputs to before it uses them
    /// (`None`: as given), as a GPU's TF32 mode or a bf16 GEMM fed f32.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "format_option"
    )]
    pub inputs: Option<Format>,
    /// Of a black box that multiplies: how its products are rounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub products: Option<Products>,
}

impl Arithmetic {
    /// Every node computes `node`.
    pub fn uniform(node: NodeArithmetic) -> Self {
        Arithmetic {
            version: MODEL_VERSION,
            default: node,
            nodes: BTreeMap::new(),
            inputs: None,
            products: None,
        }
    }

    /// What the node `key` computes.
    pub fn at(&self, key: &NodeKey) -> NodeArithmetic {
        self.nodes.get(key).copied().unwrap_or(self.default)
    }

    /// The model that gives each of `tree`'s inner nodes what `of` says,
    /// the most common one as the default.
    pub fn from_nodes(
        tree: &SummationTree,
        mut of: impl FnMut(NodeIndex) -> NodeArithmetic,
    ) -> Self {
        let order = tree.post_order();
        let per_node: Vec<NodeArithmetic> = order.iter().map(|&node| of(node)).collect();
        // The classes are few (a format and a rounding each), so a list
        // scanned per node is quicker than a map; sorted by class after,
        // ties go to the last class in that order.
        let mut counts: Vec<((u32, bool, &str), usize, NodeArithmetic)> = Vec::new();
        for a in &per_node {
            let class = (
                a.format.precision(),
                a.rounding == Rounding::TowardZero,
                a.format.name(),
            );
            match counts.iter_mut().find(|(c, ..)| *c == class) {
                Some((_, count, _)) => *count += 1,
                None => counts.push((class, 1, *a)),
            }
        }
        counts.sort_by(|a, b| a.0.cmp(&b.0));
        let default = counts
            .iter()
            .max_by_key(|(_, count, _)| *count)
            .map(|(.., a)| *a)
            .unwrap_or(NodeArithmetic::ieee(Format::F64));
        // Keys only where a node differs: most models have none.
        let keys = per_node
            .iter()
            .any(|a| *a != default)
            .then(|| NodeKey::all(tree));
        let nodes = order
            .iter()
            .zip(per_node)
            .filter(|(_, a)| *a != default)
            .map(|(node, a)| (keys.as_ref().expect("keys")[node.index()], a))
            .collect();
        Arithmetic {
            version: MODEL_VERSION,
            default,
            nodes,
            inputs: None,
            products: None,
        }
    }

    /// Whether this model, read from a file, can be `tree`'s: a version
    /// this build reads, nodes and product leaves that are `tree`'s, fused
    /// windows of at most [`MAX_FUSED_BITS`]; else why not.
    pub fn fits(&self, tree: &SummationTree) -> Result<(), String> {
        if self.version > MODEL_VERSION {
            return Err(format!(
                "version {} of the model, and this fprev reads up to version {MODEL_VERSION}: \
                 upgrade fprev",
                self.version
            ));
        }
        if self.version == 0 {
            return Err(format!(
                "version 0 of the model: versions are 1 to {MODEL_VERSION}"
            ));
        }
        let wide = std::iter::once(&self.default)
            .chain(self.nodes.values())
            .find_map(|a| a.fused_bits.filter(|b| *b > MAX_FUSED_BITS));
        if let Some(bits) = wide {
            return Err(format!(
                "fused_bits {bits}: a fused node keeps at most {MAX_FUSED_BITS} bits"
            ));
        }
        if !self.nodes.is_empty() {
            let keys: std::collections::HashSet<NodeKey> = NodeKey::all(tree)
                .into_iter()
                .filter(|k| k.size > 1)
                .collect();
            if let Some(k) = self.nodes.keys().find(|k| !keys.contains(k)) {
                return Err(format!(
                    "\"nodes\" names {k}, and the tree has no node of {} summands from x{}",
                    k.size, k.first
                ));
            }
        }
        let n = tree.n();
        if let Some(leaf) = self
            .products
            .iter()
            .flat_map(|p| p.leaves.keys())
            .find(|&&i| i >= n)
        {
            return Err(format!(
                "\"products\" names summand {leaf}, and the tree has {n} summands"
            ));
        }
        Ok(())
    }

    /// Whether every node computes alike.
    pub fn is_uniform(&self) -> bool {
        self.nodes.is_empty()
    }

    /// For each node of `tree`, by node index: whether it ends a chain of
    /// compensated steps (it is one, and its parent, if any, is not);
    /// `keys` are the tree's ([`NodeKey::all`]).
    pub fn chain_ends(&self, tree: &SummationTree, keys: &[NodeKey]) -> Vec<bool> {
        let compensated = |v: NodeIndex| self.at(&keys[v.index()]).compensated;
        let mut ends = vec![false; tree.graph().node_count()];
        for v in tree.post_order() {
            ends[v.index()] = compensated(v) && tree.parent(v).is_none_or(|p| !compensated(p));
        }
        ends
    }

    /// This model with the compensated nodes among `keys` dropping their
    /// error (see [`NodeArithmetic::drops_error`]).
    pub fn dropping_error_at(&self, keys: &[NodeKey]) -> Arithmetic {
        let mut model = self.clone();
        for key in keys {
            let a = self.at(key);
            if a.compensated {
                model.nodes.insert(
                    *key,
                    NodeArithmetic {
                        drops_error: true,
                        ..a
                    },
                );
            }
        }
        model
    }

    /// The first node, from the leaves up, where `self` and `other` differ
    /// on `tree`, with what each computes there.
    pub fn first_difference(
        &self,
        other: &Arithmetic,
        tree: &SummationTree,
    ) -> Option<(NodeKey, NodeArithmetic, NodeArithmetic)> {
        let keys = NodeKey::all(tree);
        tree.post_order().into_iter().find_map(|node| {
            let key = keys[node.index()];
            let (a, b) = (self.at(&key), other.at(&key));
            (a != b).then_some((key, a, b))
        })
    }
}

/// Where two models of one tree part ([`Arithmetic::parting`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parting {
    /// At a node, the first from the leaves up: what each computes there.
    Node(NodeKey, NodeArithmetic, NodeArithmetic),
    /// Before any node: in the inputs' or a product's rounding (a phrase).
    Leaves(String),
}

impl fmt::Display for Parting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Parting::Node(key, a, b) => write!(f, "{key} computes {a} against {b}"),
            Parting::Leaves(what) => f.write_str(what),
        }
    }
}

impl Arithmetic {
    /// Where `self` and `other` part on `tree`: at its first node from the
    /// leaves up, else before any node; `None` when they compute alike.
    pub fn parting(&self, other: &Arithmetic, tree: &SummationTree) -> Option<Parting> {
        match self.first_difference(other, tree) {
            Some((key, a, b)) => Some(Parting::Node(key, a, b)),
            None => self.leaf_difference(other).map(Parting::Leaves),
        }
    }

    /// Where `self` and `other` part before any node: in the rounding of
    /// the inputs, or of the first summand's product, as a phrase
    /// (`self`'s side first).
    pub fn leaf_difference(&self, other: &Arithmetic) -> Option<String> {
        let name = |f: Option<Format>| {
            f.map_or("kept as given".to_string(), |f| format!("rounded to {f}"))
        };
        if self.inputs != other.inputs {
            return Some(format!(
                "the inputs are {} against {}",
                name(self.inputs),
                name(other.inputs)
            ));
        }
        let exact = Products::from_leaves(&[]);
        let (a, b) = (
            self.products.as_ref().unwrap_or(&exact),
            other.products.as_ref().unwrap_or(&exact),
        );
        // Every summand listed in neither computes as the first of them.
        let listed = |i: &usize| a.leaves.contains_key(i) || b.leaves.contains_key(i);
        let unlisted = (0..).find(|i| !listed(i)).expect("finitely many listed");
        let first = a
            .leaves
            .keys()
            .chain(b.leaves.keys())
            .copied()
            .chain([unlisted])
            .filter(|&i| a.at(i) != b.at(i))
            .min()?;
        Some(format!(
            "the product of x{first} is {} against {}",
            a.at(first),
            b.at(first)
        ))
    }
}

/// `f32`; `f32 toward-zero`; `f32, 31 nodes f64` (the default first).
impl fmt::Display for Arithmetic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.default)?;
        let mut others: BTreeMap<String, usize> = BTreeMap::new();
        for a in self.nodes.values() {
            *others.entry(a.to_string()).or_default() += 1;
        }
        for (what, count) in others {
            let s = if count == 1 { "" } else { "s" };
            write!(f, ", {count} node{s} {what}")?;
        }
        if let Some(inputs) = self.inputs {
            write!(f, "; inputs rounded to {inputs}")?;
        }
        if let Some(products) = &self.products {
            write!(f, "; products {products}")?;
        }
        Ok(())
    }
}

mod format_name {
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

mod format_option {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::format::Format;

    pub fn serialize<S: Serializer>(f: &Option<Format>, s: S) -> Result<S::Ok, S::Error> {
        match f {
            Some(f) => s.serialize_some(f.name()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Format>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|name| name.parse().map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// The exceptions as a list of `{"first", "size", "format", "rounding"}`,
/// which JSON can hold (its object keys are strings only).
mod node_list {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{NodeArithmetic, NodeKey};

    #[derive(Serialize, Deserialize)]
    struct Entry {
        #[serde(flatten)]
        key: NodeKey,
        #[serde(flatten)]
        arithmetic: NodeArithmetic,
    }

    pub fn serialize<S: Serializer>(
        nodes: &BTreeMap<NodeKey, NodeArithmetic>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(nodes.iter().map(|(k, a)| Entry {
            key: *k,
            arithmetic: *a,
        }))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<NodeKey, NodeArithmetic>, D::Error> {
        let entries = Vec::<Entry>::deserialize(d)?;
        Ok(entries.into_iter().map(|e| (e.key, e.arithmetic)).collect())
    }
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

    #[test]
    fn a_model_round_trips_through_json() {
        let tree: SummationTree = "(((0+1)+2)+3)".parse().unwrap();
        let model = Arithmetic::from_nodes(&tree, |node| {
            NodeArithmetic::ieee(if node == tree.root() {
                Format::F64
            } else {
                Format::F32
            })
        });
        assert_eq!(model.default, NodeArithmetic::ieee(Format::F32));
        assert_eq!(model.nodes.len(), 1);
        let json = serde_json::to_string(&model).unwrap();
        assert!(
            json.contains(r#""first":0,"size":4,"format":"f64""#),
            "{json}"
        );
        let back: Arithmetic = serde_json::from_str(&json).unwrap();
        assert_eq!(back, model);
        assert_eq!(model.to_string(), "f32, 1 node f64");
    }

    #[test]
    fn products_and_inputs_round_trip_and_part_where_they_differ() {
        let mut fma = Arithmetic::uniform(NodeArithmetic::ieee(Format::F32));
        let mut per_leaf = vec![Product::Exact; 8];
        per_leaf[0] = Product::Rounded(Format::F32);
        fma.products = Some(Products::from_leaves(&per_leaf));
        fma.inputs = Some(Format::Bf16);
        let json = serde_json::to_string(&fma).unwrap();
        assert!(
            json.contains(r#""inputs":"bf16","products":{"default":"exact","leaves":{"0":"f32"}}"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Arithmetic>(&json).unwrap(), fma);
        assert_eq!(
            fma.to_string(),
            "f32; inputs rounded to bf16; products exact, 1 f32"
        );
        // A version-1 model has neither.
        let v1: Arithmetic = serde_json::from_str(
            r#"{"version":1,"default":{"format":"f32","rounding":"nearest-even"}}"#,
        )
        .unwrap();
        assert_eq!((v1.inputs, v1.products), (None, None));

        let mut rounded = fma.clone();
        assert_eq!(fma.leaf_difference(&rounded), None);
        rounded.inputs = None;
        assert_eq!(
            fma.leaf_difference(&rounded).unwrap(),
            "the inputs are rounded to bf16 against kept as given"
        );
        rounded.inputs = fma.inputs;
        per_leaf[3] = Product::Rounded(Format::F16);
        rounded.products = Some(Products::from_leaves(&per_leaf));
        assert_eq!(
            fma.leaf_difference(&rounded).unwrap(),
            "the product of x3 is exact against f16"
        );
        // No products said: exact, as with y = ones.
        assert_eq!(
            fma.leaf_difference(&Arithmetic {
                products: None,
                ..fma.clone()
            })
            .unwrap(),
            "the product of x0 is f32 against exact"
        );
    }
}
