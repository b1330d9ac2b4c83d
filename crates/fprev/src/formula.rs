//! The order language: summation orders as short formulas that hold at
//! every size, composed from a few parts (docs/ALGORITHMS.md, Formulas).
//!
//! A formula is at once a tree at any `n` ([`Formula::tree`]) and a black
//! box (`native:FORMULA`); fprev-present words it as a sentence. NumPy's
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
//! - `lead(M, BODY, REST)`: the first `n mod M` summands by `REST`, the
//!   others (a multiple of `M`) by `BODY`, the rest's sum first (Polars
//!   sums the odd summands at the front apart);
//! - `below(M, SMALL, LARGE)`: `SMALL` for fewer than `M` summands, else
//!   `LARGE`;
//! - `windows(W, INNER)`: more than `W` summands are padded on both sides
//!   to a multiple of `W` (the extra one after), each window of `W`
//!   summed by `INNER`, and the window sums by `windows(W, INNER)` again,
//!   down to `W` or fewer, which `INNER` sums (XLA's tree reduction
//!   rewriter on CPU, `jnp.sum`, with `W` = 32);
//! - `bisect(D, INNER)`: halved at half the count rounded down, each half
//!   likewise, `D` levels deep (a piece of one summand is not halved),
//!   each piece summed by `INNER`, the halves added as they were cut:
//!   Rayon's parallel iterators split so, `D` being one more than the
//!   base-2 logarithm of the thread count (rounded down) where no work
//!   is stolen;
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
//!   `LANES` is `interleave(M, …)` or `body(M, interleave(…), …)`;
//! - `rotate(K, INNER)`: the summands from the `K`-th on (none where there
//!   are `K` or fewer), then those before it, summed by `INNER` (a ring
//!   allreduce's element in chunk `K`: `split(P, sequential, rotate(K,
//!   sequential))`; where ranks `K` and past hold no summand, the ring
//!   meets the first rank's next);
//! - `fanout(F)`: Open MPI's `F`-ary tree rooted at the first value (its
//!   `ompi_coll_base_topo_build_tree`): levels of 1, `F`, `F^2`, … values,
//!   value `r` of level `L` the parent of `r + i·F^L` for `i = 1..=F`;
//!   each value adds its children's sums to its own one at a time, in
//!   order (a reduce over that tree; Open MPI's `nonoverlapping` allreduce
//!   of small messages is `split(P, sequential, fanout(2))`);
//! - `simd(W, U1[MERGE], U2, …, FOLD, TAIL)`: a vectorised kernel as it is
//!   built ([`simd`]): registers of `W` lanes, loops in stages each taking
//!   `Ui` registers' worth of summands into the first `Ui` accumulators
//!   lane by lane, a merge (`[(0+2)+4, 1+3]`) summing the accumulators
//!   live into fewer between stages, `FOLD` summing the lane sums of those
//!   left (register by register), and the rest joining: one by one after
//!   (`then`) or into the first lane (`first`), or summed apart by a
//!   formula and added after (`F`) or into the first lane (`first(F)`):
//!
//! ```
//! use fprev::formula::Formula;
//!
//! let tree: Formula = "fanout(2)".parse().unwrap();
//! // Value 1 (level 1) is the parent of 3 and 5; value 2 of 4.
//! assert_eq!(tree.tree(6).to_text(), "((0+((1+3)+5))+(2+4))");
//! ```

pub mod infer;
pub mod known;
pub mod simd;

mod eval;
mod parse;

pub use parse::MAX_DEPTH;

use crate::order::Order;

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
    /// The first `n mod M` summands by the second formula, the rest by the
    /// first, the two sums added in that order.
    Lead(usize, Box<Formula>, Box<Formula>),
    /// The first formula below `M` summands, the second from `M` on.
    Below(usize, Box<Formula>, Box<Formula>),
    /// Windows of `W` over the summands padded on both sides, each summed
    /// by the formula, the window sums by this again (see the module
    /// docs).
    Windows(usize, Box<Formula>),
    /// Halved at half the count rounded down, `D` levels deep, each piece
    /// summed by the formula.
    Bisect(usize, Box<Formula>),
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
    /// The summands rotated to start at the `K`-th (unturned where there
    /// are `K` or fewer), then summed by the formula: a ring's reduction,
    /// which starts at the rank that holds the element's chunk.
    Rotate(usize, Box<Formula>),
    /// Open MPI's tree of fan-out `F` rooted at the first value: value `r`
    /// of level `L` (levels of 1, `F`, `F^2`, … values) adds the sums of
    /// its children `r + i·F^L`, `i = 1..=F`, to its own value, one at a
    /// time in order of `i`.
    Fanout(usize),
    /// A vectorised kernel: registers, loops in stages, merges, a fold of
    /// the lanes and a tail ([`simd::Simd`]).
    Simd(Box<simd::Simd>),
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
    /// The multiple whose leftover a `peel` looks at: the body's multiple,
    /// or the lane count of a bare interleave (`None` for other formulas,
    /// which have no lanes to start).
    pub fn lane_count(&self) -> Option<usize> {
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

    /// The part that sums fewer than `n` summands where a `below` at the
    /// top chooses by the count (`SMALL` of `below(M, SMALL, LARGE)` for
    /// `n <= M`, and so on down); the formula itself otherwise.
    ///
    /// ```
    /// use fprev::formula::Formula;
    ///
    /// let f: Formula = "below(8, sequential, pairwise)".parse().unwrap();
    /// assert_eq!(f.for_fewer_than(8).to_string(), "sequential");
    /// assert_eq!(f.for_fewer_than(9).to_string(), f.to_string());
    /// ```
    pub fn for_fewer_than(&self, n: usize) -> &Formula {
        match self {
            Formula::Below(m, small, _) if n <= *m => small.for_fewer_than(n),
            _ => self,
        }
    }

    /// Whether it adds in fused nodes anywhere (`fused:K`).
    pub fn may_fuse(&self) -> bool {
        match self {
            Formula::Order(order) => matches!(order, Order::Fused(_)),
            Formula::Doubling | Formula::Fold | Formula::Fanout(_) => false,
            Formula::Split(_, a, b) => a.may_fuse() || b.may_fuse(),
            Formula::Interleave(_, a, b)
            | Formula::Blocks(_, a, b)
            | Formula::Below(_, a, b)
            | Formula::Lead(_, a, b) => a.may_fuse() || b.may_fuse(),
            Formula::Body(_, a, Tail::Then | Tail::First)
            | Formula::Halves { inner: a, .. }
            | Formula::Bisect(_, a)
            | Formula::Peel(_, a)
            | Formula::Rotate(_, a)
            | Formula::Windows(_, a)
            | Formula::Pieces(_, a)
            | Formula::KBlocks(_, _, a) => a.may_fuse(),
            Formula::Body(_, a, Tail::Apart(b)) => a.may_fuse() || b.may_fuse(),
            Formula::Simd(s) => {
                s.fold.may_fuse() || s.rest.formula().is_some_and(Formula::may_fuse)
            }
        }
    }
}
