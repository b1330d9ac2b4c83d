//! Reference summation orders, each written once as a loop over an abstract
//! [`Adder`]: run with numbers it is a native black box, run with tree nodes
//! it writes its own summation tree (used to name the shape of revealed
//! trees).
//!
//! ```
//! use fprev::{Format, Order};
//!
//! let order: Order = "strided:2".parse().unwrap();
//! assert_eq!(order.tree(4).to_text(), "((0+2)+(1+3))");
//! assert_eq!(order.sum(&[1.0, 2.0, 3.0, 4.0], Format::F32), 10.0);
//! ```

use std::fmt;
use std::str::FromStr;

use crate::format::{Format, fused_sum};
use crate::tree::{SummationTree, TreeBuilder};
use petgraph::graph::NodeIndex;

/// The largest number an order or a formula takes (a lane count, a block,
/// a count of ranks): 2^40, past any `n` a reveal can hold (a terabyte at
/// [`crate::memory::BYTES_PER_SUMMAND`] a summand), and small enough that
/// sums and products of a few such never overflow.
pub const MAX_PARAMETER: usize = crate::error::bounds::MOST as usize;

/// A summation order defined by a formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// `((x0 + x1) + x2) + …`, left to right.
    Sequential,
    /// `x0 + (x1 + (… + (x[n-2] + x[n-1])))`, right to left.
    Reverse,
    /// Recursive halving: `S[0,n) = S[0,h) + S[h,n)` with `h = floor(n/2)`.
    Pairwise,
    /// `K` interleaved lanes (lane `r` sums `x[r], x[r+K], …` left to
    /// right), the lanes then combined pairwise, as NumPy's SIMD sum does.
    Strided(usize),
    /// Blocks of `B` consecutive summands each summed left to right, the
    /// block sums then added left to right.
    Blocked(usize),
    /// The Binary Tree Reduction (docs/ALGORITHMS.md, Reproducible reducers):
    /// `S[0,n) = S[0,P) + S[P,n)`, `P` the largest power of two below `n`.
    BinaryTree,
    /// Tensor-core style: `K`-term fused nodes, each adding the running sum
    /// and the next `K-1` summands (the first node takes `K-1` summands
    /// alone); a 2-term group is an IEEE addition.
    Fused(usize),
}

/// How an order combines values: numbers, or tree nodes.
pub trait Adder {
    /// What is being added.
    type Value: Copy;
    /// One IEEE addition.
    fn add(&mut self, a: Self::Value, b: Self::Value) -> Self::Value;
    /// One fused addition of three or more terms.
    fn fused(&mut self, terms: &[Self::Value]) -> Self::Value;
    /// A part of a formula (named by `part`, unique while it runs) starts
    /// adding; its additions are its own until [`Adder::leave`].
    fn enter(&mut self, _part: usize) {}
    /// The part last entered is done.
    fn leave(&mut self) {}
    /// What the part last entered returns, `sum`, as it returns it: an
    /// adder that keeps a summand unread until an addition reads it (an
    /// emitted function's plan) reads one a part returns alone here.
    fn returned(&mut self, sum: Self::Value) -> Self::Value {
        sum
    }
    /// A summand `v` loaded alone into an empty register (a vectorised
    /// kernel's lane slot), as it stands there: an adder that keeps a
    /// summand unread reads it here, as a lane's start is read.
    fn loaded(&mut self, v: Self::Value) -> Self::Value {
        v
    }
}

/// Adds numbers in an accumulator format; `round` is that format's
/// rounding, a function of its own per format so that the loops inline it.
struct Numbers<R: Fn(f64) -> f64> {
    acc: Format,
    round: R,
}

impl<R: Fn(f64) -> f64> Adder for Numbers<R> {
    type Value = f64;
    fn add(&mut self, a: f64, b: f64) -> f64 {
        (self.round)(a + b)
    }
    fn fused(&mut self, terms: &[f64]) -> f64 {
        fused_sum(terms, self.acc)
    }
}

impl Adder for TreeBuilder {
    type Value = NodeIndex;
    fn add(&mut self, a: NodeIndex, b: NodeIndex) -> NodeIndex {
        self.sum(&[a, b])
    }
    fn fused(&mut self, terms: &[NodeIndex]) -> NodeIndex {
        self.sum(terms)
    }
}

impl Order {
    /// Sums `x` in this order, rounding every partial sum to `acc`.
    pub fn sum(&self, x: &[f64], acc: Format) -> f64 {
        match acc {
            Format::F64 => self.run(x, &mut Numbers { acc, round: |v| v }),
            Format::F32 => self.run(
                x,
                &mut Numbers {
                    acc,
                    round: |v| v as f32 as f64,
                },
            ),
            _ => self.run(
                x,
                &mut Numbers {
                    acc,
                    round: |v| acc.round(v),
                },
            ),
        }
    }

    /// The summation tree of this order for `n` summands.
    ///
    /// # Panics
    /// If `n` is 0.
    pub fn tree(&self, n: usize) -> SummationTree {
        tree_of(n, |leaves, b| self.run(leaves, b))
    }

    /// Runs the order over `x` with any adder.
    ///
    /// # Panics
    /// If `x` is empty.
    pub fn run<A: Adder>(&self, x: &[A::Value], a: &mut A) -> A::Value {
        assert!(!x.is_empty(), "an order needs at least one summand");
        match *self {
            Order::Sequential => sequential(x.iter().copied(), a),
            Order::Reverse => {
                let mut rev = x.iter().rev().copied();
                let last = rev.next().unwrap_or(x[0]);
                rev.fold(last, |s, v| a.add(v, s))
            }
            Order::Pairwise => pairwise(x, a),
            Order::Strided(k) => {
                let lanes: Vec<A::Value> = (0..k.min(x.len()))
                    .map(|r| sequential(x[r..].iter().step_by(k).copied(), a))
                    .collect();
                pairwise(&lanes, a)
            }
            Order::Blocked(b) => {
                let blocks: Vec<A::Value> = x
                    .chunks(b)
                    .map(|c| sequential(c.iter().copied(), a))
                    .collect();
                sequential(blocks.into_iter(), a)
            }
            Order::BinaryTree => binary_tree(x, a),
            Order::Fused(k) => {
                let mut chunks = x.chunks(k - 1);
                let first = chunks.next().unwrap_or(x);
                let mut acc = group(first, a);
                // A node holds the running sum and at most k - 1 summands,
                // and no more than there are.
                let mut terms = Vec::with_capacity(k.min(x.len() + 1));
                for c in chunks {
                    terms.clear();
                    terms.push(acc);
                    terms.extend_from_slice(c);
                    acc = group(&terms, a);
                }
                acc
            }
        }
    }

    /// The orders tried when naming the shape of an `n`-leaf tree.
    pub fn candidates(n: usize) -> Vec<Order> {
        let mut out = vec![
            Order::Sequential,
            Order::Reverse,
            Order::Pairwise,
            Order::BinaryTree,
        ];
        let mut k = 2;
        while k < n {
            out.push(Order::Strided(k));
            out.push(Order::Blocked(k));
            k *= 2;
        }
        out
    }
}

/// The tree that `run` builds over `n` leaves, run as an [`Adder`] of
/// tree nodes.
///
/// # Panics
/// If `run` leaves a summand out.
pub(crate) fn tree_of(
    n: usize,
    run: impl FnOnce(&[NodeIndex], &mut TreeBuilder) -> NodeIndex,
) -> SummationTree {
    let mut b = TreeBuilder::new(n);
    let leaves: Vec<NodeIndex> = (0..n).map(|i| b.leaf(i)).collect();
    let root = run(&leaves, &mut b);
    b.finish(root).expect("an order covers every summand")
}

fn sequential<A: Adder>(mut x: impl Iterator<Item = A::Value>, a: &mut A) -> A::Value {
    let first = x.next().expect("at least one summand");
    x.fold(first, |s, v| a.add(s, v))
}

fn pairwise<A: Adder>(x: &[A::Value], a: &mut A) -> A::Value {
    match *x {
        [one] => return one,
        [l, r] => return a.add(l, r),
        _ => {}
    }
    let (l, r) = x.split_at(x.len() / 2);
    let l = pairwise(l, a);
    let r = pairwise(r, a);
    a.add(l, r)
}

fn binary_tree<A: Adder>(x: &[A::Value], a: &mut A) -> A::Value {
    match *x {
        [one] => return one,
        [l, r] => return a.add(l, r),
        _ => {}
    }
    // Largest power of two strictly below len.
    let p = (x.len() - 1).next_power_of_two();
    let p = if p >= x.len() { p / 2 } else { p };
    let (l, r) = x.split_at(p);
    let l = binary_tree(l, a);
    let r = binary_tree(r, a);
    a.add(l, r)
}

fn group<A: Adder>(terms: &[A::Value], a: &mut A) -> A::Value {
    match terms {
        [one] => *one,
        [x, y] => a.add(*x, *y),
        _ => a.fused(terms),
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Order::Sequential => f.write_str("sequential"),
            Order::Reverse => f.write_str("reverse"),
            Order::Pairwise => f.write_str("pairwise"),
            Order::Strided(k) => write!(f, "strided:{k}"),
            Order::Blocked(b) => write!(f, "blocked:{b}"),
            Order::BinaryTree => f.write_str("binary-tree"),
            Order::Fused(k) => write!(f, "fused:{k}"),
        }
    }
}

impl FromStr for Order {
    type Err = String;

    /// Reads `sequential`, `reverse`, `pairwise`, `strided:K`, `blocked:B`,
    /// `binary-tree` or `fused:K`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        let number = |what: &str, min: usize| -> Result<usize, String> {
            let a = arg.ok_or_else(|| format!("'{name}' needs {what}, e.g. '{name}:8'"))?;
            match a.parse::<usize>() {
                Ok(k) if (min..=MAX_PARAMETER).contains(&k) => Ok(k),
                _ => Err(format!(
                    "'{name}:{}': {what} must be a whole number of at least {min} and at most \
                     {MAX_PARAMETER}",
                    crate::error::abbreviated(a)
                )),
            }
        };
        let order = match name {
            "sequential" => Order::Sequential,
            "reverse" => Order::Reverse,
            "pairwise" => Order::Pairwise,
            "binary-tree" => Order::BinaryTree,
            "strided" => Order::Strided(number("a lane count", 1)?),
            "blocked" => Order::Blocked(number("a block size", 1)?),
            "fused" => Order::Fused(number("a group width", 2)?),
            _ => {
                return Err(format!(
                    "unknown order '{}': expected sequential, reverse, pairwise, strided:K, \
                     blocked:B, binary-tree or fused:K",
                    crate::error::abbreviated(name)
                ));
            }
        };
        if arg.is_some() && matches!(name, "sequential" | "reverse" | "pairwise" | "binary-tree") {
            return Err(format!("'{name}' takes no argument"));
        }
        Ok(order)
    }
}
