//! The order language: summation orders as short formulas that hold at
//! every size, composed from a few parts (docs/ALGORITHMS.md, Formulas).
//!
//! A formula is at once a tree at any `n` ([`Formula::tree`]), a black box
//! (`native:FORMULA`) and a sentence ([`Formula::sentence`]). NumPy's
//! pairwise sum, for one, is
//!
//! ```
//! use fprev::formula::Formula;
//!
//! let numpy: Formula =
//!     "below(8, sequential, halves(128, 8, body(8, interleave(8, sequential, pairwise), then)))"
//!         .parse()
//!         .unwrap();
//! assert_eq!(
//!     numpy.tree(18).to_text(),
//!     "((((((0+8)+(1+9))+((2+10)+(3+11)))+(((4+12)+(5+13))+((6+14)+(7+15))))+16)+17)"
//! );
//! assert!(numpy.sentence().starts_with("fewer than 8 summands added left to right"));
//! ```
//!
//! The parts, each applied to the summands it is given:
//!
//! - the reference orders of [`Order`]: `sequential`, `reverse`,
//!   `pairwise`, `binary-tree`, `strided:K`, `blocked:B`, `fused:K`;
//! - `interleave(K, INNER, OUTER)`: `K` interleaved lanes (lane `r` holds
//!   summands `r, r+K, …`), each summed by `INNER`, the lane sums by `OUTER`;
//!   a lane one summand longer than the shortest is cut as the shortest is
//!   (its `body` and its `pieces`), the extra summand joining its last
//!   piece: a vectorised loop counts its blocks from `n / K`;
//! - `blocks(B, INNER, OUTER)`: consecutive blocks of `B`, each summed by
//!   `INNER`, the block sums by `OUTER`;
//! - `body(M, BODY, then)`: the largest multiple of `M` summands by `BODY`,
//!   then the rest added to it one by one; `body(M, BODY, TAIL)`: the rest
//!   summed by `TAIL`, and the two sums added; `body(M, LANES, first)`: the
//!   rest joins the first lane of `LANES` (an `interleave`), after its own
//!   summands, before the lanes are combined (OpenBLAS's SGEMM K loop);
//! - `halves(LEAF, M, INNER)`: split at half the count rounded down to a
//!   multiple of `M`, each half likewise, down to `LEAF` summands or fewer,
//!   which `INNER` sums;
//! - `below(M, SMALL, LARGE)`: `SMALL` for fewer than `M` summands, else
//!   `LARGE`;
//! - `windows(W, INNER)`: more than `W` summands are padded on both sides
//!   to a multiple of `W` (the extra one after), each window of `W`
//!   summed by `INNER`, and the window sums by `windows(W, INNER)` again,
//!   down to `W` or fewer, which `INNER` sums (XLA's tree reduction
//!   rewriter on CPU, `jnp.sum`, with `W` = 32);
//! - `split(P, INNER, OUTER)`: `P` consecutive blocks as even as can be (the
//!   first `n mod P` one longer), each summed by `INNER`, the block sums by
//!   `OUTER` (an MPI job's ranks, each holding a block);
//! - `doubling`: recursive doubling as MPI implements it: with `m` values
//!   and `2^k` the largest power of two up to `m`, the first `2(m - 2^k)`
//!   are added in pairs, then the `2^k` values halve pairwise;
//! - `pieces(A, B, …, INNER)`: pieces of `A` summands while at least `A`
//!   remain, then of `B`, …, then the rest as one piece, each piece summed
//!   by `INNER`, the piece sums left to right (a vectorised loop's rest);
//! - `fold`: folded in halves, as a vector register's lanes are summed:
//!   the values at even places and those at odd places each folded so,
//!   then added (of 16 lane sums, lane `r + 8` joins lane `r` first, then
//!   `r + 4`, ...: XLA's vectorised reduction combines its lanes so);
//! - `kblocks(Q, U, INNER)`: blocks of `Q` summands while at least `2Q`
//!   remain; a rest between `Q` and `2Q` is cut in two, the first part
//!   half of it (rounded down) rounded up to a multiple of `U`; each block
//!   summed by `INNER`, the block sums left to right (OpenBLAS's GEMM
//!   driver, which accumulates `C` over blocks of `K`, with `Q = GEMM_Q`);
//!   `kblocks(Q, INNER)`: the same with the first part of a rest its
//!   larger half (OpenBLAS's threaded GEMM driver);
//! - `peel(P, LANES)`: where at least `P` summands are left over past the
//!   largest multiple of `M`, the first `P` start lanes `0..P` and `LANES`
//!   sums the rest (alignment peeling, as OpenBLAS's SGEMV kernel does it);
//!   `LANES` is `interleave(M, …)` or `body(M, interleave(…), …)`.

pub mod infer;
pub mod known;

use std::fmt;
use std::str::FromStr;

use crate::error::abbreviated;
use crate::order::{Adder, MAX_PARAMETER, Order};
use crate::tree::SummationTree;

/// A summation order as a formula over the number of summands.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Formula {
    /// A reference order.
    Order(Order),
    /// `K` interleaved lanes, each summed by the first formula, the lane
    /// sums by the second.
    Interleave(usize, Box<Formula>, Box<Formula>),
    /// Consecutive blocks of `B`, each summed by the first formula, the
    /// block sums by the second.
    Blocks(usize, Box<Formula>, Box<Formula>),
    /// The largest multiple of `M` summands by the formula, then the rest
    /// added one by one (`Tail::Then`) or summed apart and added.
    Body(usize, Box<Formula>, Tail),
    /// Recursive halving at a multiple of `M` down to `LEAF` summands.
    Halves {
        /// The most summands summed without a split.
        leaf: usize,
        /// What the split point is a multiple of.
        multiple: usize,
        /// How at most `leaf` summands are summed.
        inner: Box<Formula>,
    },
    /// The first formula below `M` summands, the second from `M` on.
    Below(usize, Box<Formula>, Box<Formula>),
    /// Windows of `W` over the summands padded on both sides, each summed
    /// by the formula, the window sums by this again (see the module
    /// docs).
    Windows(usize, Box<Formula>),
    /// `P` blocks as even as can be, each summed by the first formula, the
    /// block sums by the second.
    Split(usize, Box<Formula>, Box<Formula>),
    /// Recursive doubling, the first values folded in pairs down to a
    /// power of two.
    Doubling,
    /// Folded in halves, as a vector register's lanes are summed: the
    /// values at even positions and those at odd positions, each folded
    /// so, then added (of `2^k` values, value `r + 2^(k-1)` joins value
    /// `r` first).
    Fold,
    /// Pieces of the first size while at least that many summands remain,
    /// then of the next, ..., then what is left as one piece, each piece
    /// summed by the formula, the piece sums added left to right (a loop's
    /// rest, taken in ever smaller steps). The sizes decrease.
    Pieces(Vec<usize>, Box<Formula>),
    /// Blocks of `Q` over the summands, a rest between `Q` and `2Q` halved
    /// (its half rounded down, then up to a multiple of `U`; without `U`,
    /// its larger half first), each summed by the formula, the block sums
    /// left to right.
    KBlocks(usize, Option<usize>, Box<Formula>),
    /// Where at least `P` summands are left over past the largest multiple
    /// of the formula's count, the first `P` start its first `P` lanes and
    /// the formula sums the rest; the formula is an `Interleave` or a
    /// `Body` of one.
    Peel(usize, Box<Formula>),
}

/// What follows the body of a [`Formula::Body`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tail {
    /// The remaining summands added to the body's sum one by one.
    Then,
    /// The remaining summands join the body's first lane (the body is an
    /// `Interleave`), after its own.
    First,
    /// The remaining summands summed by this formula, then added to the
    /// body's sum.
    Apart(Box<Formula>),
}

impl From<Order> for Formula {
    fn from(order: Order) -> Self {
        Formula::Order(order)
    }
}

impl Formula {
    /// The summation tree of this formula for `n` summands.
    ///
    /// # Panics
    /// If `n` is 0.
    pub fn tree(&self, n: usize) -> SummationTree {
        crate::order::tree_of(n, |leaves, b| self.run(leaves, b))
    }

    /// For each node of `tree` (by index), the part of this formula that
    /// adds it, where the formula gives `tree` (else `None`): 0 for the
    /// leaves, then 1, 2, … for the parts in the order they first add.
    /// Nodes of one part (the additions that join a lane's blocks, say) do
    /// alike in most kernels, so their arithmetic can be asked of a few of
    /// them
    /// ([`reveal_arithmetic_by_parts`](crate::reveal::arithmetic::reveal_arithmetic_by_parts)).
    ///
    /// ```
    /// use fprev::formula::Formula;
    ///
    /// let f: Formula = "blocks(4, sequential, pairwise)".parse().unwrap();
    /// let tree = f.tree(8);
    /// let parts = f.parts(&tree).unwrap();
    /// let root = tree.root();
    /// let block = tree.children(root)[0];
    /// // The blocks' own additions are one part, those joining them another.
    /// assert_ne!(parts[root.index()], parts[block.index()]);
    /// assert_eq!(parts[block.index()], parts[tree.children(root)[1].index()]);
    /// assert!(f.parts(&fprev::Order::Sequential.tree(8)).is_none());
    /// ```
    pub fn parts(&self, tree: &SummationTree) -> Option<Vec<u32>> {
        let n = tree.n();
        let mut marked = Marked {
            builder: crate::tree::TreeBuilder::new(n),
            parts: vec![0; n],
            names: std::collections::HashMap::new(),
            entered: Vec::new(),
        };
        let leaves: Vec<_> = (0..n).map(|i| marked.builder.leaf(i)).collect();
        let root = self.run(&leaves, &mut marked);
        let generated = marked.builder.finish(root).ok()?;
        if generated != *tree {
            return None;
        }
        // A node is its smallest leaf and its size, in any tree of it.
        let key = |t: &SummationTree, v| (t.node(v).min_leaf, t.node(v).size);
        let by_key: std::collections::HashMap<(usize, usize), u32> = generated
            .graph()
            .node_indices()
            .map(|v| (key(&generated, v), marked.parts[v.index()]))
            .collect();
        Some(
            tree.graph()
                .node_indices()
                .map(|v| by_key[&key(tree, v)])
                .collect(),
        )
    }

    /// Runs the formula over `x` with any adder: numbers or tree nodes.
    ///
    /// # Panics
    /// If `x` is empty.
    pub fn run<A: Adder>(&self, x: &[A::Value], a: &mut A) -> A::Value {
        assert!(!x.is_empty(), "a formula needs at least one summand");
        a.enter(self.part());
        let sum = self.run_part(x, a);
        a.leave();
        sum
    }

    /// This part's name while it runs: its address.
    fn part(&self) -> usize {
        self as *const Formula as usize
    }

    /// [`Formula::run`] of this part, its own additions unmarked.
    fn run_part<A: Adder>(&self, x: &[A::Value], a: &mut A) -> A::Value {
        match self {
            Formula::Order(order) => order.run(x, a),
            Formula::Interleave(..) => self.run_lanes(x, &[], &[], a),
            Formula::Blocks(b, inner, outer) => {
                let sums: Vec<A::Value> = x.chunks(*b).map(|c| inner.run(c, a)).collect();
                outer.run(&sums, a)
            }
            Formula::Body(_, _, Tail::First) => self.run_lanes(x, &[], &[], a),
            Formula::Body(..) => self.run_planned_part(x, x.len(), a),
            Formula::Halves {
                leaf,
                multiple,
                inner,
            } => halves(x, *leaf, *multiple, inner, a),
            Formula::Below(m, small, large) => {
                if x.len() < *m {
                    small.run(x, a)
                } else {
                    large.run(x, a)
                }
            }
            Formula::Windows(w, inner) => {
                if x.len() <= *w {
                    return inner.run(x, a);
                }
                let k = x.len().div_ceil(*w);
                let low = (k * w - x.len()) / 2;
                let sums: Vec<A::Value> = (0..k)
                    .map(|j| {
                        let start = (j * w).saturating_sub(low);
                        let end = ((j + 1) * w - low).min(x.len());
                        inner.run(&x[start..end], a)
                    })
                    .collect();
                self.run(&sums, a)
            }
            Formula::Split(p, inner, outer) => {
                let (len, longer) = (x.len() / p, x.len() % p);
                // Blocks past the n-th are empty: the work and the memory
                // are n's, however many blocks there are.
                let mut sums = Vec::with_capacity((*p).min(x.len()));
                let mut at = 0;
                for k in 0..(*p).min(x.len()) {
                    let take = len + usize::from(k < longer);
                    sums.push(inner.run(&x[at..at + take], a));
                    at += take;
                }
                match **outer {
                    // Ranks without summands still take their place.
                    Formula::Doubling => doubling(&sums, *p, a),
                    _ => outer.run(&sums, a),
                }
            }
            Formula::Doubling => doubling(x, x.len(), a),
            Formula::Fold => fold(x, a),
            Formula::Pieces(steps, inner) => pieces(x, x.len(), steps, inner, a),
            Formula::KBlocks(q, u, inner) => {
                let mut sums = Vec::new();
                let mut at = 0;
                while at < x.len() {
                    let left = x.len() - at;
                    let take = if left >= 2 * q {
                        *q
                    } else if left > *q {
                        match u {
                            Some(u) => (left / 2).div_ceil(*u) * u,
                            None => left.div_ceil(2),
                        }
                    } else {
                        left
                    };
                    sums.push(inner.run(&x[at..at + take], a));
                    at += take;
                }
                Order::Sequential.run(&sums, a)
            }
            Formula::Peel(p, lanes) => {
                let m = lanes.lane_count().expect("peel's formula has lanes");
                if x.len() % m >= *p && x.len() >= m + p {
                    lanes.run_lanes(&x[*p..], &x[..*p], &[], a)
                } else {
                    lanes.run(x, a)
                }
            }
        }
    }

    /// The multiple whose leftover a `peel` looks at: the body's multiple,
    /// or the lane count of a bare interleave (`None` for other formulas,
    /// which have no lanes to start).
    fn lane_count(&self) -> Option<usize> {
        self.lanes().map(|(m, _)| m)
    }

    /// The multiple a `peel` looks at and the number of lanes it may start.
    fn lanes(&self) -> Option<(usize, usize)> {
        match self {
            Formula::Interleave(k, ..) => Some((*k, *k)),
            Formula::Body(m, body, _) => match **body {
                Formula::Interleave(k, ..) => Some((*m, k)),
                _ => None,
            },
            _ => None,
        }
    }

    /// [`Formula::run`] of `x` planned for `planned` summands: a body and
    /// pieces are cut as for that many, and the summands past them join
    /// the last piece (the rest, where there are no pieces).
    fn run_planned<A: Adder>(&self, x: &[A::Value], planned: usize, a: &mut A) -> A::Value {
        a.enter(self.part());
        let sum = self.run_planned_part(x, planned, a);
        a.leave();
        sum
    }

    fn run_planned_part<A: Adder>(&self, x: &[A::Value], planned: usize, a: &mut A) -> A::Value {
        match self {
            Formula::Body(m, body, tail) if !matches!(tail, Tail::First) => {
                let cut = planned - planned % m;
                if cut == 0 {
                    return match tail {
                        Tail::Apart(t) => t.run_planned(x, planned, a),
                        _ => Order::Sequential.run(x, a),
                    };
                }
                let sum = body.run(&x[..cut], a);
                match tail {
                    Tail::Apart(t) if cut < x.len() => {
                        let r = t.run_planned(&x[cut..], planned - cut, a);
                        a.add(sum, r)
                    }
                    _ => finish_body(sum, &x[cut..], tail, a),
                }
            }
            Formula::Pieces(steps, inner) => pieces(x, planned, steps, inner, a),
            _ => self.run_part(x, a),
        }
    }

    /// [`Formula::run`] of an interleave (or a body of one) whose lane `r`
    /// starts with `seeds[r]` and whose first lane ends with `extra`.
    fn run_lanes<A: Adder>(
        &self,
        x: &[A::Value],
        seeds: &[A::Value],
        extra: &[A::Value],
        a: &mut A,
    ) -> A::Value {
        match self {
            Formula::Interleave(k, inner, outer) => {
                let k = (*k).min(x.len()).max(1);
                // Every lane is summed as the shortest one is, its extra
                // summand in its last piece: the loop counts its blocks and
                // pieces from `n / K` (XLA's vectorised reduction). (Lanes
                // with seeds or extras are peel's and OpenBLAS's.)
                let plain = seeds.is_empty() && extra.is_empty();
                let shortest = x.len() / k;
                let lanes: Vec<A::Value> = (0..k)
                    .map(|r| {
                        let lane: Vec<A::Value> = seeds
                            .get(r)
                            .into_iter()
                            .chain(x.get(r..).unwrap_or_default().iter().step_by(k))
                            .chain(if r == 0 { extra } else { &[] })
                            .copied()
                            .collect();
                        match plain {
                            true => inner.run_planned(&lane, shortest, a),
                            false => inner.run(&lane, a),
                        }
                    })
                    .collect();
                outer.run(&lanes, a)
            }
            Formula::Body(m, body, Tail::First) => {
                let cut = x.len() - x.len() % m;
                let rest: Vec<A::Value> = x[cut..].iter().chain(extra).copied().collect();
                body.run_lanes(&x[..cut], seeds, &rest, a)
            }
            Formula::Body(m, body, tail) => {
                let cut = x.len() - x.len() % m;
                let sum = body.run_lanes(&x[..cut], seeds, extra, a);
                finish_body(sum, &x[cut..], tail, a)
            }
            _ => unreachable!("peel's formula has lanes"),
        }
    }

    /// Whether it adds in fused nodes anywhere (`fused:K`).
    pub fn may_fuse(&self) -> bool {
        match self {
            Formula::Order(order) => matches!(order, Order::Fused(_)),
            Formula::Doubling | Formula::Fold => false,
            Formula::Split(_, a, b) => a.may_fuse() || b.may_fuse(),
            Formula::Interleave(_, a, b) | Formula::Blocks(_, a, b) | Formula::Below(_, a, b) => {
                a.may_fuse() || b.may_fuse()
            }
            Formula::Body(_, a, Tail::Then | Tail::First)
            | Formula::Halves { inner: a, .. }
            | Formula::Peel(_, a)
            | Formula::Windows(_, a)
            | Formula::Pieces(_, a)
            | Formula::KBlocks(_, _, a) => a.may_fuse(),
            Formula::Body(_, a, Tail::Apart(b)) => a.may_fuse() || b.may_fuse(),
        }
    }

    /// The formula in words, as one sentence without its full stop.
    pub fn sentence(&self) -> String {
        match self {
            Formula::Order(_) => format!("summands {}", self.phrase()),
            Formula::Below(m, small, large) => format!(
                "fewer than {m} summands {}; otherwise {}",
                small.phrase(),
                large.clause()
            ),
            _ => self.clause(),
        }
    }

    /// A clause that stands alone: "blocks of 128, each …".
    fn clause(&self) -> String {
        match self {
            Formula::Order(_) => format!("the summands {}", self.phrase()),
            Formula::Interleave(k, inner, outer) => format!(
                "{k} interleaved lanes, each {}, the lanes {}",
                inner.phrase(),
                outer.phrase()
            ),
            Formula::Blocks(b, inner, outer) => format!(
                "blocks of {b} summands, each {}, the blocks {}",
                inner.phrase(),
                outer.phrase()
            ),
            Formula::Body(m, body, Tail::Then) => format!(
                "a body of the largest multiple of {m} summands ({}), then the rest added one \
                 by one",
                body.clause()
            ),
            Formula::Body(m, body, Tail::First) => format!(
                "a body of the largest multiple of {m} summands ({}), the rest joining the \
                 first lane after its own summands",
                body.clause()
            ),
            Formula::Body(m, body, Tail::Apart(tail)) => format!(
                "a body of the largest multiple of {m} summands ({}) and the rest {}, the two \
                 sums added",
                body.clause(),
                tail.phrase()
            ),
            Formula::Halves {
                leaf,
                multiple,
                inner,
            } => {
                let at = match multiple {
                    1 => String::new(),
                    m => format!(" (rounded down to a multiple of {m})"),
                };
                format!(
                    "halved at half the count{at} down to {leaf} summands or fewer, which are \
                     summed as {}",
                    inner.clause()
                )
            }
            Formula::Below(..) => self.sentence(),
            Formula::Split(p, inner, outer) => format!(
                "{p} blocks as even as can be (the first ones one longer), each {}, the blocks \
                 {}",
                inner.phrase(),
                outer.phrase()
            ),
            Formula::Doubling | Formula::Fold => format!("the summands {}", self.phrase()),
            Formula::KBlocks(q, u, inner) => format!(
                "blocks of {q} summands while at least {} remain, a rest between {q} and {} \
                 cut in two ({}), each block {}, the blocks added left to right",
                2 * q,
                2 * q,
                match u {
                    Some(u) =>
                        format!("the first part half of it, rounded up to a multiple of {u}"),
                    None => "the larger half first".to_string(),
                },
                inner.phrase()
            ),
            Formula::Pieces(steps, inner) => format!(
                "pieces of {} summands while that many remain{}, then the rest as one \
                 piece, each piece {}, the pieces added left to right",
                steps[0],
                steps[1..]
                    .iter()
                    .map(|s| format!(", then of {s}"))
                    .collect::<String>(),
                inner.phrase()
            ),
            Formula::Windows(w, inner) => format!(
                "windows of {w} summands over the summands padded on both sides to a multiple \
                 of {w} (half the padding before, rounded down), each window {}, and the window \
                 sums likewise, down to {w} or fewer",
                inner.phrase()
            ),
            Formula::Peel(p, lanes) => format!(
                "where at least {p} summands are left over past a multiple of {}, the first \
                 {p} start lanes 0 to {} (alignment peeling) and the rest are {}",
                lanes.lane_count().expect("peel's formula has lanes"),
                p - 1,
                lanes.phrase()
            ),
        }
    }

    /// What the formula does to the values it is given, after "each" or
    /// "the lanes".
    fn phrase(&self) -> String {
        match self {
            Formula::Order(Order::Sequential) => "added left to right".into(),
            Formula::Order(Order::Reverse) => "added right to left".into(),
            Formula::Order(Order::Pairwise) => "combined by pairwise halving".into(),
            Formula::Order(Order::BinaryTree) => "combined by the binary tree reduction".into(),
            Formula::Order(Order::Strided(k)) => {
                format!("summed in {k} interleaved lanes combined pairwise")
            }
            Formula::Order(Order::Blocked(b)) => {
                format!("summed in blocks of {b}, each and then the blocks left to right")
            }
            Formula::Order(Order::Fused(k)) => format!("summed in {k}-term fused accumulations"),
            Formula::Doubling => "combined by recursive doubling (the first folded in pairs down \
                                  to a power of two, then halved pairwise)"
                .into(),
            Formula::Fold => "folded in halves, as a vector register's lanes are (those at even \
                              places and those at odd places each folded so, then added)"
                .into(),
            _ => format!("summed as {}", self.clause()),
        }
    }
}

/// Recursive doubling over `ranks` slots of which the first hold `values`
/// and the rest nothing: the first `2(m - 2^k)` folded in pairs, then the
/// `2^k` halved pairwise. Empty slots only pass a value on, so they are
/// never listed.
fn doubling<A: Adder>(values: &[A::Value], ranks: usize, a: &mut A) -> A::Value {
    // Pairs of slots, either of which may be empty (past `values`).
    let pairs = |v: &[A::Value], a: &mut A| -> Vec<A::Value> {
        v.chunks(2)
            .map(|p| match *p {
                [x, y] => a.add(x, y),
                [x] => x,
                _ => unreachable!("chunks of two"),
            })
            .collect()
    };
    let extra = ranks - (1usize << ranks.ilog2());
    let folded = (2 * extra).min(values.len());
    let mut level = pairs(&values[..folded], a);
    level.extend_from_slice(&values[folded..]);
    // A power of two: neighbours add, then neighbours of those, ...
    while level.len() > 1 {
        level = pairs(&level, a);
    }
    level[0]
}

/// `x` folded in halves: [`Formula::Fold`].
fn fold<A: Adder>(x: &[A::Value], a: &mut A) -> A::Value {
    if let [v] = x {
        return *v;
    }
    let even: Vec<A::Value> = x.iter().step_by(2).copied().collect();
    let odd: Vec<A::Value> = x.iter().skip(1).step_by(2).copied().collect();
    let (e, o) = (fold(&even, a), fold(&odd, a));
    a.add(e, o)
}

/// Builds a tree and marks each node with the part of the formula that
/// added it.
struct Marked {
    builder: crate::tree::TreeBuilder,
    parts: Vec<u32>,
    names: std::collections::HashMap<usize, u32>,
    entered: Vec<u32>,
}

impl Marked {
    /// Marks `node`, the builder's newest, with the part adding it.
    fn mark(&mut self, node: petgraph::graph::NodeIndex) -> petgraph::graph::NodeIndex {
        debug_assert_eq!(node.index(), self.parts.len(), "nodes are added in order");
        self.parts.push(self.entered.last().copied().unwrap_or(0));
        node
    }
}

impl Adder for Marked {
    type Value = petgraph::graph::NodeIndex;
    fn add(&mut self, a: Self::Value, b: Self::Value) -> Self::Value {
        let node = self.builder.sum(&[a, b]);
        self.mark(node)
    }
    fn fused(&mut self, terms: &[Self::Value]) -> Self::Value {
        let node = self.builder.sum(terms);
        self.mark(node)
    }
    fn enter(&mut self, part: usize) {
        let next = self.names.len() as u32 + 1;
        let name = *self.names.entry(part).or_insert(next);
        self.entered.push(name);
    }
    fn leave(&mut self) {
        self.entered.pop();
    }
}

/// Pieces of `x` as cut for `planned` summands (each step's size while
/// at least that many remain of them), the rest of `x` as the last piece;
/// each piece summed by `inner`, the piece sums left to right.
fn pieces<A: Adder>(
    x: &[A::Value],
    planned: usize,
    steps: &[usize],
    inner: &Formula,
    a: &mut A,
) -> A::Value {
    let mut sums = Vec::new();
    let mut at = 0;
    for &step in steps {
        while planned.saturating_sub(at) >= step {
            sums.push(inner.run(&x[at..at + step], a));
            at += step;
        }
    }
    if at < x.len() {
        sums.push(inner.run(&x[at..], a));
    }
    Order::Sequential.run(&sums, a)
}

/// A body's `sum` with the summands `rest` past it, as `tail` says.
fn finish_body<A: Adder>(sum: A::Value, rest: &[A::Value], tail: &Tail, a: &mut A) -> A::Value {
    match tail {
        _ if rest.is_empty() => sum,
        Tail::Then => rest.iter().fold(sum, |s, v| a.add(s, *v)),
        Tail::First => unreachable!("a first lane's tail joins the lanes"),
        Tail::Apart(t) => {
            let r = t.run(rest, a);
            a.add(sum, r)
        }
    }
}

/// Halves `x` at half its length rounded down to a multiple of `multiple`
/// until at most `leaf` summands remain.
fn halves<A: Adder>(
    x: &[A::Value],
    leaf: usize,
    multiple: usize,
    inner: &Formula,
    a: &mut A,
) -> A::Value {
    if x.len() <= leaf.max(1) {
        return inner.run(x, a);
    }
    let half = x.len() / 2;
    let cut = match half - half % multiple {
        0 => half,
        c => c,
    };
    let l = halves(&x[..cut], leaf, multiple, inner, a);
    let r = halves(&x[cut..], leaf, multiple, inner, a);
    a.add(l, r)
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Formula::Order(order) => write!(f, "{order}"),
            Formula::Interleave(k, i, o) => write!(f, "interleave({k}, {i}, {o})"),
            Formula::Blocks(b, i, o) => write!(f, "blocks({b}, {i}, {o})"),
            Formula::Body(m, body, Tail::Then) => write!(f, "body({m}, {body}, then)"),
            Formula::Body(m, body, Tail::First) => write!(f, "body({m}, {body}, first)"),
            Formula::Body(m, body, Tail::Apart(t)) => write!(f, "body({m}, {body}, {t})"),
            Formula::Halves {
                leaf,
                multiple,
                inner,
            } => write!(f, "halves({leaf}, {multiple}, {inner})"),
            Formula::Below(m, s, l) => write!(f, "below({m}, {s}, {l})"),
            Formula::Peel(p, lanes) => write!(f, "peel({p}, {lanes})"),
            Formula::Windows(w, inner) => write!(f, "windows({w}, {inner})"),
            Formula::Pieces(steps, inner) => {
                f.write_str("pieces(")?;
                for s in steps {
                    write!(f, "{s}, ")?;
                }
                write!(f, "{inner})")
            }
            Formula::KBlocks(q, Some(u), inner) => write!(f, "kblocks({q}, {u}, {inner})"),
            Formula::KBlocks(q, None, inner) => write!(f, "kblocks({q}, {inner})"),
            Formula::Split(p, i, o) => write!(f, "split({p}, {i}, {o})"),
            Formula::Doubling => f.write_str("doubling"),
            Formula::Fold => f.write_str("fold"),
        }
    }
}

impl FromStr for Formula {
    type Err = String;

    /// Reads a formula as [`Formula`]'s `Display` writes it (spaces are
    /// optional).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let text: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        let mut parser = Parser {
            text: &text,
            at: 0,
            depth: 0,
        };
        let formula = parser.formula()?;
        if parser.at != text.len() {
            return Err(format!(
                "'{}': unexpected '{}' after a whole formula",
                abbreviated(s),
                abbreviated(&text[parser.at..])
            ));
        }
        Ok(formula)
    }
}

/// The deepest a formula nests (the parts inside parts): real kernels
/// need a handful, and the reader, the printer and the runner recurse once
/// a level, so the bound keeps them far from the end of the stack.
pub const MAX_DEPTH: usize = 64;

/// A recursive-descent reader of the grammar in the module docs.
struct Parser<'t> {
    text: &'t str,
    at: usize,
    /// Parts open around the one being read.
    depth: usize,
}

impl<'t> Parser<'t> {
    fn formula(&mut self) -> Result<Formula, String> {
        if self.depth >= MAX_DEPTH {
            return Err(format!(
                "the formula is nested more than {MAX_DEPTH} parts deep"
            ));
        }
        self.depth += 1;
        let formula = self.part();
        self.depth -= 1;
        formula
    }

    fn part(&mut self) -> Result<Formula, String> {
        let name = self.name();
        if !self.eat('(') {
            match name {
                "doubling" => return Ok(Formula::Doubling),
                "fold" => return Ok(Formula::Fold),
                _ => {}
            }
            let order: Order = name.parse()?;
            return Ok(Formula::Order(order));
        }
        let count = |what: &str, v: usize| -> Result<usize, String> {
            if v == 0 {
                Err(format!("{name}(…): {what} must be at least 1"))
            } else {
                Ok(v)
            }
        };
        let formula = match name {
            "interleave" | "blocks" | "split" => {
                let k = count("the count", self.number()?)?;
                self.expect(',')?;
                let inner = Box::new(self.formula()?);
                self.expect(',')?;
                let outer = Box::new(self.formula()?);
                match name {
                    "interleave" => Formula::Interleave(k, inner, outer),
                    "split" => Formula::Split(k, inner, outer),
                    _ => Formula::Blocks(k, inner, outer),
                }
            }
            "body" => {
                let m = count("the multiple", self.number()?)?;
                self.expect(',')?;
                let body = Box::new(self.formula()?);
                self.expect(',')?;
                let rest = &self.text[self.at..];
                let word = &rest[..rest.find(['(', ',', ')']).unwrap_or(rest.len())];
                let tail = match word {
                    "then" => Tail::Then,
                    "first" if !matches!(*body, Formula::Interleave(..)) => {
                        return Err(format!(
                            "body({m}, {}, first): the rest joins the first lane, so the \
                             body must be interleave(…)",
                            abbreviated(&body.to_string())
                        ));
                    }
                    "first" => Tail::First,
                    _ => Tail::Apart(Box::new(self.formula()?)),
                };
                if !matches!(tail, Tail::Apart(_)) {
                    self.at += word.len();
                }
                Formula::Body(m, body, tail)
            }
            "halves" => {
                let leaf = count("the leaf size", self.number()?)?;
                self.expect(',')?;
                let multiple = count("the multiple", self.number()?)?;
                self.expect(',')?;
                let inner = Box::new(self.formula()?);
                Formula::Halves {
                    leaf,
                    multiple,
                    inner,
                }
            }
            "below" => {
                let m = self.number()?;
                self.expect(',')?;
                let small = Box::new(self.formula()?);
                self.expect(',')?;
                let large = Box::new(self.formula()?);
                Formula::Below(m, small, large)
            }
            "kblocks" => {
                let q = count("the block", self.number()?)?;
                self.expect(',')?;
                let starts_number = self.text[self.at..].starts_with(|c: char| c.is_ascii_digit());
                let u = if starts_number {
                    let u = count("the multiple", self.number()?)?;
                    self.expect(',')?;
                    if u > q {
                        return Err(format!(
                            "kblocks({q}, {u}, …): the multiple must be at most the block"
                        ));
                    }
                    Some(u)
                } else {
                    None
                };
                Formula::KBlocks(q, u, Box::new(self.formula()?))
            }
            "windows" => {
                let w = count("the window", self.number()?)?;
                self.expect(',')?;
                let inner = Box::new(self.formula()?);
                if w < 2 {
                    return Err(
                        "windows(1, …): windows of one summand never shrink the count".into(),
                    );
                }
                Formula::Windows(w, inner)
            }
            "pieces" => {
                let mut steps = vec![count("a piece", self.number()?)?];
                self.expect(',')?;
                while self.text[self.at..].starts_with(|c: char| c.is_ascii_digit()) {
                    let step = count("a piece", self.number()?)?;
                    self.expect(',')?;
                    if step >= *steps.last().expect("one piece") {
                        return Err(format!(
                            "pieces({}, {step}, …): each piece must be smaller than the one \
                             before",
                            steps.last().expect("one piece")
                        ));
                    }
                    steps.push(step);
                }
                Formula::Pieces(steps, Box::new(self.formula()?))
            }
            "peel" => {
                let p = count("the count peeled", self.number()?)?;
                self.expect(',')?;
                let lanes = self.formula()?;
                match lanes.lanes() {
                    Some((m, k)) if p < m && p <= k => Formula::Peel(p, Box::new(lanes)),
                    Some((m, k)) => {
                        return Err(format!(
                            "peel({p}, …): the peeled summands start lanes, and at most {} \
                             can (at most {} left over past a multiple of {m}, {k} lanes)",
                            (m - 1).min(k),
                            m - 1
                        ));
                    }
                    None => {
                        return Err(format!(
                            "peel({p}, {}): the peeled summands start lanes, so the \
                             formula must be interleave(…) or body(M, interleave(…), …)",
                            abbreviated(&lanes.to_string())
                        ));
                    }
                }
            }
            _ => {
                return Err(format!(
                    "unknown formula '{}(…)': expected interleave, blocks, body, halves, \
                     below, windows, kblocks, split, pieces or peel (or doubling, fold, or an order: sequential, reverse, pairwise, binary-tree, \
                     strided:K, blocked:B, fused:K)",
                    abbreviated(name)
                ));
            }
        };
        self.expect(')')?;
        Ok(formula)
    }

    /// The text up to the next `(`, `,` or `)`.
    fn name(&mut self) -> &'t str {
        let rest: &'t str = &self.text[self.at..];
        let len = rest.find(['(', ',', ')']).unwrap_or(rest.len());
        self.at += len;
        &rest[..len]
    }

    /// A whole number of at most [`MAX_PARAMETER`].
    fn number(&mut self) -> Result<usize, String> {
        let word = self.name();
        match word.parse::<usize>() {
            Ok(v) if v <= MAX_PARAMETER => Ok(v),
            Err(_) if !word.bytes().all(|b| b.is_ascii_digit()) || word.is_empty() => Err(format!(
                "expected a whole number, found '{}'",
                abbreviated(word)
            )),
            _ => Err(format!(
                "{} is too large: a formula's numbers are at most {MAX_PARAMETER}",
                abbreviated(word)
            )),
        }
    }

    fn eat(&mut self, c: char) -> bool {
        let yes = self.text[self.at..].starts_with(c);
        if yes {
            self.at += 1;
        }
        yes
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        let rest = &self.text[self.at..];
        if self.eat(c) {
            Ok(())
        } else if rest.is_empty() {
            Err(format!("expected '{c}' where the formula ends"))
        } else {
            Err(format!(
                "expected '{c}' at '{}'",
                rest.chars().take(20).collect::<String>()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(s: &str) -> Formula {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn formulas_print_as_they_parse() {
        for s in [
            "sequential",
            "strided:8",
            "interleave(4, pairwise, sequential)",
            "body(32, interleave(32, sequential, interleave(4, pairwise, pairwise)), sequential)",
            "below(8, sequential, halves(128, 8, body(8, interleave(8, sequential, pairwise), then)))",
            "blocks(128, pairwise, binary-tree)",
            "peel(4, body(8, interleave(8, sequential, pairwise), sequential))",
            "windows(32, sequential)",
            "body(8, interleave(2, sequential, sequential), first)",
            "kblocks(320, 8, body(8, interleave(2, sequential, sequential), first))",
            "split(4, sequential, doubling)",
        ] {
            assert_eq!(f(s).to_string(), s);
        }
    }

    /// Lanes of 8 and 7 summands: both cut their body and pieces as the
    /// shorter lane does (a body of 4, one piece of 2), the longer lane's
    /// extra summand joining its last piece.
    #[test]
    fn lanes_are_cut_as_the_shortest_lane_is() {
        let lanes = f("interleave(2, body(4, sequential, pieces(2, sequential)), sequential)");
        assert_eq!(
            lanes.tree(15).to_text(),
            "(((((0+2)+4)+6)+((8+10)+(12+14)))+((((1+3)+5)+7)+((9+11)+13)))"
        );
        // Lanes of one length are cut as they are: bodies of 8, no rest.
        assert_eq!(
            lanes.tree(16).to_text(),
            "((((((((0+2)+4)+6)+8)+10)+12)+14)+(((((((1+3)+5)+7)+9)+11)+13)+15))"
        );
    }

    #[test]
    fn the_parts_match_the_reference_orders_they_generalise() {
        for n in [1, 2, 7, 64, 100, 1000] {
            // strided:K is K lanes left to right combined pairwise.
            assert_eq!(
                f("interleave(8, sequential, pairwise)").tree(n),
                Order::Strided(8).tree(n)
            );
            assert_eq!(
                f("blocks(16, sequential, sequential)").tree(n),
                Order::Blocked(16).tree(n)
            );
            // Halving at any count down to single summands is pairwise.
            assert_eq!(
                f("halves(1, 1, sequential)").tree(n),
                Order::Pairwise.tree(n)
            );
        }
    }

    #[test]
    fn a_body_and_its_tail() {
        let then = f("body(4, interleave(4, sequential, pairwise), then)");
        assert_eq!(then.tree(6).to_text(), "((((0+1)+(2+3))+4)+5)");
        let apart = f("body(4, interleave(4, sequential, pairwise), sequential)");
        assert_eq!(apart.tree(6).to_text(), "(((0+1)+(2+3))+(4+5))");
        assert_eq!(apart.tree(3), Order::Sequential.tree(3));
    }

    #[test]
    fn peeled_summands_start_the_first_lanes() {
        // OpenBLAS's SGEMV kernel, written out: 4 summands peeled when
        // 4 to 7 are left over past a multiple of 8, 8 lanes, a tail.
        let peel = f(
            "peel(4, body(8, interleave(8, sequential, interleave(4, pairwise, pairwise)), sequential))",
        );
        assert_eq!(
            peel.tree(20).to_text(),
            "(((((0+4)+12)+(8+16))+(((1+5)+13)+(9+17)))+((((2+6)+14)+(10+18))+(((3+7)+15)+(11+19))))"
        );
        // Fewer than 4 left over: no peeling, the body and its tail.
        let plain =
            f("body(8, interleave(8, sequential, interleave(4, pairwise, pairwise)), sequential)");
        assert_eq!(peel.tree(18), plain.tree(18));
        assert_eq!(peel.tree(7), plain.tree(7));
        assert!(peel.sentence().contains("the first 4 start lanes 0 to 3"));
    }

    #[test]
    fn a_first_lane_tail_joins_lane_0() {
        // OpenBLAS's SGEMM K loop: 2 lanes over a body of 8, the rest into
        // lane 0, then the two lanes added.
        let gemm = f("body(8, interleave(2, sequential, sequential), first)");
        assert_eq!(
            gemm.tree(11).to_text(),
            "(((((((0+2)+4)+6)+8)+9)+10)+(((1+3)+5)+7))"
        );
        assert_eq!(gemm.tree(6), Order::Sequential.tree(6));
        let e = "body(8, pairwise, first)".parse::<Formula>().unwrap_err();
        assert!(e.contains("must be interleave"), "{e}");
    }

    #[test]
    fn ranks_fold_then_double() {
        // Open MPI's allreduce of one summand per rank (outputs/mpi).
        let d = f("doubling");
        assert_eq!(d.tree(5).to_text(), "(((0+1)+2)+(3+4))");
        assert_eq!(d.tree(4).to_text(), "((0+1)+(2+3))");
        assert_eq!(d.tree(3).to_text(), "((0+1)+2)");
        // 10 summands on 4 ranks: blocks of 3, 3, 2, 2.
        assert_eq!(
            f("split(4, sequential, doubling)").tree(10).to_text(),
            "((((0+1)+2)+((3+4)+5))+((6+7)+(8+9)))"
        );
    }

    /// Recursive doubling as MPI runs it, every rank's slot listed (the
    /// empty ones as `None`): what `doubling`, which lists only the
    /// values, must give.
    fn doubling_over_every_slot(values: &[usize], ranks: usize) -> String {
        let mut slots: Vec<Option<String>> = values.iter().map(|v| Some(v.to_string())).collect();
        slots.resize(ranks, None);
        let add = |x: &Option<String>, y: &Option<String>| match (x, y) {
            (Some(x), Some(y)) => Some(format!("({x}+{y})")),
            (x, y) => x.clone().or(y.clone()),
        };
        let extra = ranks - (1 << ranks.ilog2());
        let mut level: Vec<Option<String>> = slots[..2 * extra]
            .chunks(2)
            .map(|p| add(&p[0], &p[1]))
            .collect();
        level.extend_from_slice(&slots[2 * extra..]);
        while level.len() > 1 {
            level = level.chunks(2).map(|p| add(&p[0], &p[1])).collect();
        }
        level[0].clone().expect("one value at least")
    }

    #[test]
    fn doubling_lists_only_the_ranks_that_hold_summands() {
        // At most one summand a rank: the ranks past the n-th are empty.
        for ranks in 1..70 {
            let split = f(&format!("split({ranks}, sequential, doubling)"));
            for n in 1..=ranks {
                let values: Vec<usize> = (0..n).collect();
                let expected = doubling_over_every_slot(&values, ranks);
                assert_eq!(split.tree(n).to_text(), expected, "split({ranks}) of {n}");
            }
        }
        // Every rank full: the plain formula.
        for n in 1..70 {
            let values: Vec<usize> = (0..n).collect();
            assert_eq!(
                f("doubling").tree(n).to_text(),
                doubling_over_every_slot(&values, n)
            );
        }
    }

    #[test]
    fn k_blocks_halve_a_rest_below_two_blocks() {
        let k = f("kblocks(4, 2, sequential)");
        // 13: a block of 4, then 9 left (at least 8): another, then 5 left
        // (between 4 and 8): half of it, 2, a multiple of 2 already, and 3.
        assert_eq!(
            k.tree(13).to_text(),
            "((((((0+1)+2)+3)+(((4+5)+6)+7))+(8+9))+((10+11)+12))"
        );
        assert_eq!(k.tree(4), Order::Sequential.tree(4));
        // Without the multiple, the larger half of a rest comes first: 13
        // is 4, 4, then 5 cut 3 + 2.
        let k = f("kblocks(4, sequential)");
        assert_eq!(k.to_string(), "kblocks(4, sequential)");
        assert_eq!(
            k.tree(13).to_text(),
            "((((((0+1)+2)+3)+(((4+5)+6)+7))+((8+9)+10))+(11+12))"
        );
        assert!(k.sentence().contains("the larger half first"));
    }

    #[test]
    fn fold_adds_the_far_half_first() {
        let fold = f("fold");
        assert_eq!(fold.to_string(), "fold");
        assert_eq!(fold.tree(8).to_text(), "(((0+4)+(2+6))+((1+5)+(3+7)))");
        // Any count: even places against odd ones, recursively.
        assert_eq!(fold.tree(5).to_text(), "(((0+4)+2)+(1+3))");
        // As nested halves of interleave(2): the lanes of a vector register.
        let nested = f(
            "interleave(2, interleave(2, interleave(2, sequential, sequential), \
                        sequential), sequential)",
        );
        assert_eq!(fold.tree(16), nested.tree(16));
    }

    #[test]
    fn pieces_take_ever_smaller_steps() {
        let p = f("pieces(4, 2, sequential)");
        assert_eq!(p.to_string(), "pieces(4, 2, sequential)");
        assert_eq!(
            f("pieces(16, 4, 2, fold)").to_string(),
            "pieces(16, 4, 2, fold)"
        );
        // 11: a piece of 4, another, one of 2, then the one left.
        assert_eq!(
            p.tree(11).to_text(),
            "((((((0+1)+2)+3)+(((4+5)+6)+7))+(8+9))+10)"
        );
        // 7: a piece of 4, then the three left as one piece.
        let p = f("pieces(4, sequential)");
        assert_eq!(p.tree(7).to_text(), "((((0+1)+2)+3)+((4+5)+6))");
        assert!("pieces(2, 4, sequential)".parse::<Formula>().is_err());
    }

    #[test]
    fn windows_are_centred_on_the_padded_summands() {
        let w = f("windows(4, sequential)");
        assert_eq!(w.tree(4), Order::Sequential.tree(4));
        // 5 summands padded to 8: one pad before, two after.
        assert_eq!(w.tree(5).to_text(), "(((0+1)+2)+(3+4))");
        // 20 summands: five windows of 4, whose sums are windows again.
        assert_eq!(
            w.tree(20).to_text(),
            "((((((0+1)+2)+3)+(((4+5)+6)+7))+(((8+9)+10)+11))+((((12+13)+14)+15)+(((16+17)+18)+19)))"
        );
    }

    #[test]
    fn bad_formulas_say_what_is_wrong() {
        for (s, says) in [
            ("interleave(8, sequential)", "expected ','"),
            ("lanes(8, sequential, pairwise)", "unknown formula 'lanes"),
            ("blocks(0, sequential, sequential)", "at least 1"),
            ("halves(x, 8, sequential)", "whole number"),
            ("pairwise)", "unexpected ')'"),
            ("strided", "needs a lane count"),
            ("peel(4, pairwise)", "must be interleave"),
            ("windows(1, sequential)", "never shrink"),
            ("peel(8, interleave(8, sequential, pairwise))", "at most 7"),
            (
                "peel(4, body(8, interleave(2, sequential, sequential), first))",
                "at most 2",
            ),
        ] {
            let e = s.parse::<Formula>().unwrap_err();
            assert!(e.contains(says), "{s}: {e}");
        }
    }
}
