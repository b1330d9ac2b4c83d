//! The arithmetic of a whole tree: a default node, the nodes that differ
//! (named by their leaves), the inputs' and products' rounding; its file
//! form, whether it fits a tree, and where two models part.

use std::collections::BTreeMap;
use std::fmt;

use petgraph::graph::NodeIndex;
use serde::{Deserialize, Serialize};

use super::{MAX_FUSED_BITS, NodeArithmetic, Products, Rounding};
use crate::format::Format;
use crate::tree::SummationTree;

/// The version of the model's file form this build writes; it reads every
/// version up to this one. Version 2 adds `inputs` and `products`,
/// version 3 `compensated`, version 4 the `x87` format, version 5
/// `aligns_factors`.
pub const MODEL_VERSION: u32 = 5;

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
    /// The key of `tree`'s node `v`.
    pub fn of(tree: &SummationTree, v: NodeIndex) -> NodeKey {
        let node = tree.node(v);
        NodeKey {
            first: node.min_leaf,
            size: node.size,
        }
    }

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

    /// This model on the subtree over `leaves` (a node's, in order),
    /// numbered `0..` as [`SummationTree::subtree`] numbers them: the nodes
    /// and products it names there, renamed, the rest as they are. Only a
    /// node inside it or above it has its first leaf among `leaves`, and
    /// one above has more.
    pub fn restricted(&self, leaves: &[usize]) -> Arithmetic {
        let rank = |i: usize| leaves.binary_search(&i).ok();
        let nodes = self
            .nodes
            .iter()
            .filter(|(k, _)| k.size <= leaves.len())
            .filter_map(|(k, a)| {
                let first = rank(k.first)?;
                Some((
                    NodeKey {
                        first,
                        size: k.size,
                    },
                    *a,
                ))
            })
            .collect();
        let products = self.products.as_ref().map(|p| Products {
            default: p.default,
            leaves: p
                .leaves
                .iter()
                .filter_map(|(&i, &q)| Some((rank(i)?, q)))
                .collect(),
        });
        Arithmetic {
            nodes,
            products,
            ..self.clone()
        }
    }

    /// Whether this model, read from a file, can be `tree`'s: a version
    /// this build reads, nodes and product leaves that are `tree`'s, fused
    /// windows of at most [`MAX_FUSED_BITS`]; else why not.
    pub fn fits(&self, tree: &SummationTree) -> Result<(), String> {
        self.fits_n(tree.n())?;
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
        Ok(())
    }

    /// [`Arithmetic::fits`] but for the nodes it names: whether it can be
    /// the model of some tree of `n` summands.
    pub fn fits_n(&self, n: usize) -> Result<(), String> {
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

    /// This model with every fused node (and every node keeping a fused
    /// window) aligning its products at their `factors`' exponents (see
    /// [`NodeArithmetic::aligns_factors`]), as a tensor core does.
    pub fn aligning_factors(&self, factors: Format) -> Arithmetic {
        self.changing_fused(|a| a.aligns_factors = Some(factors))
    }

    /// This model with every node keeping a fused window rounding its sum
    /// by `rounding`.
    pub fn rounding_fused(&self, rounding: Rounding) -> Arithmetic {
        self.changing_fused(|a| a.rounding = rounding)
    }

    /// This model with every node keeping a fused window narrower than
    /// `format`'s precision, in a format of `format`'s range but more
    /// bits, rounding its sum to `format` instead (Ada's and Hopper's fp8
    /// instructions round to E8M13: their nodes' questions, asked within
    /// the window, cannot show it); `None` where no node is such.
    pub fn narrowing_fused(&self, format: Format) -> Option<Arithmetic> {
        let narrows = |a: &NodeArithmetic| {
            a.fused_bits.is_some_and(|w| w < format.precision())
                && a.format.min_normal() == format.min_normal()
                && a.format.precision() > format.precision()
        };
        let any = std::iter::once(&self.default)
            .chain(self.nodes.values())
            .any(narrows);
        any.then(|| {
            self.changing_fused(|a| {
                if narrows(a) {
                    a.format = format;
                }
            })
        })
    }

    /// This model with `change` made to every node keeping a fused window.
    fn changing_fused(&self, change: impl Fn(&mut NodeArithmetic)) -> Arithmetic {
        let mut model = self.clone();
        for a in std::iter::once(&mut model.default)
            .chain(model.nodes.values_mut())
            .filter(|a| a.fused_bits.is_some())
        {
            change(a);
        }
        model
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

pub(super) mod format_option {
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
    use crate::arith::Product;

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
