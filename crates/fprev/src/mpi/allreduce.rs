//! The Binary Tree Reduction across MPI ranks (Stelz; docs/ALGORITHMS.md,
//! Reproducible reducers): the same tree as [`crate::reduce::binary_tree_sum`] over the
//! concatenation of every rank's summands, so the same bits for any number
//! of ranks.
//!
//! Node `x` (a summand index) roots the aligned block `[x, x + lowbit(x))`;
//! its parent is `x & (x - 1)`. A rank reduces the subtrees that start in
//! its block, in ascending order, receiving the parts that lie on higher
//! ranks, and sends each subtree root whose parent lies on a lower rank to
//! that rank; rank 0 ends with the root. A rank only ever receives from
//! higher ranks and sends to lower ones, and its sends never wait, so no
//! rank waits on one that waits on it.
//!
//! ```no_run
//! use fprev::mpi::binary_tree_allreduce;
//! use mpi::traits::Communicator;
//!
//! let universe = mpi::initialize().unwrap();
//! let world = universe.world();
//! // Each rank holds a slice of one long vector, in rank order.
//! let local: Vec<f64> = (0..1000).map(|i| 1.0 / (world.rank() as f64 * 1000.0 + i as f64 + 1.0)).collect();
//! let sum = binary_tree_allreduce(&world, &local);
//! // The same bits on 1, 2, 3 or 300 ranks.
//! println!("{sum:e}");
//! ```

use std::collections::HashMap;
use std::ops::Range;

use mpi::collective::CommunicatorCollectives;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::Communicator;
use mpi::traits::Root;

use crate::reduce::Real;

/// A float that travels in messages as an `f64` (exactly).
pub trait Wire: Real + Into<f64> {
    /// The value back from its `f64`.
    fn from_wire(x: f64) -> Self;
}

impl Wire for f64 {
    fn from_wire(x: f64) -> Self {
        x
    }
}

impl Wire for f32 {
    fn from_wire(x: f64) -> Self {
        x as f32
    }
}

/// Subtrees of more summands than this send what is buffered first, so a
/// finished root does not wait long for the next one (the thesis's rule).
const FLUSH_BEFORE: usize = 64;

/// How `n` summands are split into contiguous blocks over the ranks: rank
/// `r` holds `[start(r), start(r + 1))`. Blocks may be empty.
///
/// ```
/// use fprev::mpi::Blocks;
///
/// let even = Blocks::even(10, 3);
/// assert_eq!((even.range(0), even.range(2)), (0..4, 7..10));
/// // Starts moved down onto indices with more trailing zeros: far fewer
/// // subtrees cross ranks (the thesis's data set: 504,850 on 256 ranks).
/// let (even, aligned) = (Blocks::even(504_850, 256), Blocks::aligned(504_850, 256, 0.2));
/// assert!(aligned.crossings() < even.crossings() / 2);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocks {
    /// `ranks + 1` entries, from 0 to `n`.
    starts: Vec<usize>,
}

impl Blocks {
    /// Blocks as even as can be: the first `n mod ranks` ranks hold one more.
    ///
    /// # Panics
    /// If `ranks` is 0.
    pub fn even(n: usize, ranks: usize) -> Blocks {
        assert!(ranks > 0, "at least one rank");
        let (base, extra) = (n / ranks, n % ranks);
        let mut starts = vec![0];
        for r in 0..ranks {
            starts.push(starts[r] + base + usize::from(r < extra));
        }
        Blocks { starts }
    }

    /// Even blocks whose starts move down onto parents (`x & (x - 1)`, more
    /// trailing zeros) by at most `alpha` times a rank's even share: fewer
    /// subtrees cross a boundary, so fewer messages (the thesis's
    /// Algorithm 3), at the cost of a little imbalance.
    pub fn aligned(n: usize, ranks: usize, alpha: f64) -> Blocks {
        let even = Blocks::even(n, ranks);
        let most = (alpha * n as f64 / ranks as f64) as usize;
        let mut starts = even.starts.clone();
        for r in 1..ranks {
            let first = even.starts[r];
            let mut at = first;
            while at > 0 && first - (at & (at - 1)) <= most {
                at &= at - 1;
            }
            // Never below the rank before.
            starts[r] = at.max(starts[r - 1]);
        }
        Blocks { starts }
    }

    /// Blocks of the given lengths, rank after rank.
    pub fn from_lengths(lengths: &[usize]) -> Blocks {
        let mut starts = vec![0];
        for l in lengths {
            starts.push(starts.last().expect("starts begins with 0") + l);
        }
        Blocks { starts }
    }

    /// Summands in all.
    pub fn n(&self) -> usize {
        *self.starts.last().expect("starts begins with 0")
    }

    /// Ranks.
    pub fn ranks(&self) -> usize {
        self.starts.len() - 1
    }

    /// The summands of rank `r`.
    pub fn range(&self, r: usize) -> Range<usize> {
        self.starts[r]..self.starts[r + 1]
    }

    /// The rank holding summand `x`.
    pub fn owner(&self, x: usize) -> usize {
        // The last rank starting at or before x (empty ranks start there too).
        self.starts[..self.ranks()].partition_point(|&s| s <= x) - 1
    }

    /// Subtree roots of rank `r`, ascending, each with its height: the
    /// blocks `[x, x + 2^h)` starting in `r`'s range.
    fn roots(&self, r: usize) -> Vec<(usize, u32)> {
        let Range { start, end } = self.range(r);
        if start == end {
            return Vec::new();
        }
        if start == 0 {
            // The root of the whole tree.
            return vec![(0, self.n().next_power_of_two().trailing_zeros())];
        }
        let mut roots = Vec::new();
        let mut x = start;
        while x < end {
            roots.push((x, x.trailing_zeros()));
            x += 1 << x.trailing_zeros();
        }
        roots
    }

    /// Messages the reduction sends with no buffering: subtree roots whose
    /// parent lies on another rank, `p - 1` at best and about
    /// `(p - 1)(log2((n - 1)/p) + 1)` at worst.
    pub fn crossings(&self) -> usize {
        (1..self.ranks()).map(|r| self.roots(r).len()).sum()
    }
}

/// The Binary Tree Reduction of the concatenation of every rank's `local`
/// summands (rank 0's first), returned on every rank: the same bits as
/// [`crate::reduce::binary_tree_sum`] of the whole vector, whatever the number of
/// ranks and however the summands are split. Collective: every rank of
/// `comm` calls it.
pub fn binary_tree_allreduce<C: Communicator, T: Wire + mpi::datatype::Equivalence>(
    comm: &C,
    local: &[T],
) -> T {
    let mut lengths = vec![0u64; comm.size() as usize];
    comm.all_gather_into(&(local.len() as u64), &mut lengths[..]);
    let lengths: Vec<usize> = lengths.iter().map(|&l| l as usize).collect();
    let blocks = Blocks::from_lengths(&lengths);
    let (root, _) = reduce_rows(comm, &blocks, local, 1);
    let mut value = root.map_or_else(T::default, |r| r[0]);
    comm.process_at_rank(0).broadcast_into(&mut value);
    value
}

/// The Binary Tree Reduction of `rows` vectors at once, split over the
/// ranks by `blocks`: this rank's `local` holds, row after row, its
/// `blocks.range(rank)` of each. Returns the `rows` sums on rank 0 (`None`
/// elsewhere) and the messages this rank sent.
pub fn reduce_rows<C: Communicator, T: Wire>(
    comm: &C,
    blocks: &Blocks,
    local: &[T],
    rows: usize,
) -> (Option<Vec<T>>, usize) {
    let rank = comm.rank() as usize;
    let Range { start, end } = blocks.range(rank);
    let len = end - start;
    debug_assert_eq!(local.len(), len * rows);
    let n = blocks.n();
    if n == 0 {
        return ((rank == 0).then(|| vec![T::default(); rows]), 0);
    }
    let roots = blocks.roots(rank);
    // Messages planned up front (their buffers must not move while sent):
    // runs of roots to one rank, split before a large subtree.
    let target = |x: usize| blocks.owner(x & (x - 1));
    let mut plan: Vec<(usize, Vec<usize>)> = Vec::new();
    if rank > 0 {
        for (k, &(x, h)) in roots.iter().enumerate() {
            let to = target(x);
            let large = (1usize << h).min(end - x) > FLUSH_BEFORE;
            match plan.last_mut() {
                Some((t, ks)) if *t == to && !large => ks.push(k),
                _ => plan.push((to, vec![k])),
            }
        }
    }
    let mut buffers: Vec<Vec<f64>> = plan
        .iter()
        .map(|(_, ks)| Vec::with_capacity(ks.len() * (1 + rows)))
        .collect();
    let mut part = Part {
        comm,
        blocks,
        local,
        rows,
        inbox: Inbox::default(),
    };
    let mut result = None;
    mpi::request::scope(|scope| {
        let mut sends = Vec::new();
        let mut message = plan.iter().zip(buffers.iter_mut()).peekable();
        for (k, &(x, h)) in roots.iter().enumerate() {
            let sums = part.subtree(x, h);
            if rank == 0 {
                result = Some(sums);
                continue;
            }
            let Some(((to, ks), buffer)) = message.peek_mut() else {
                unreachable!("every root of a rank above 0 is planned")
            };
            buffer.push(x as f64);
            buffer.extend(sums.into_iter().map(Into::into));
            if ks.last() == Some(&k) {
                let to = *to as i32;
                let ((_, _), buffer) = message.next().expect("just peeked");
                sends.push(comm.process_at_rank(to).immediate_send(scope, &buffer[..]));
            }
        }
        for send in sends {
            send.wait();
        }
    });
    (result, plan.len())
}

/// This rank's share of the reduction: its summands, and the subtree sums
/// received from higher ranks.
struct Part<'a, C, T> {
    comm: &'a C,
    blocks: &'a Blocks,
    local: &'a [T],
    rows: usize,
    inbox: Inbox,
}

impl<C: Communicator, T: Wire> Part<'_, C, T> {
    /// The `rows` sums of the subtree over `[x, x + 2^h)` (summands past
    /// `n` left out). A subtree held here whole is summed by
    /// [`binary_tree_sum`](super::binary_tree_sum), one held elsewhere
    /// arrives in a message, and one that crosses this block's end is split
    /// into its halves.
    fn subtree(&mut self, x: usize, h: u32) -> Vec<T> {
        let Range { start, end } = self.blocks.range(self.comm.rank() as usize);
        let top = self.blocks.n().min(x + (1 << h));
        if top <= end {
            let len = end - start;
            return (0..self.rows)
                .map(|r| {
                    crate::reduce::binary_tree_sum(
                        &self.local[r * len + x - start..r * len + top - start],
                    )
                })
                .collect();
        }
        if x >= end {
            let from = self.blocks.owner(x);
            let sums = self.inbox.take(self.comm, from, x, self.rows);
            return sums.into_iter().map(T::from_wire).collect();
        }
        let mut sums = self.subtree(x, h - 1);
        let half = x + (1 << (h - 1));
        if half < top {
            for (s, t) in sums.iter_mut().zip(self.subtree(half, h - 1)) {
                *s = *s + t;
            }
        }
        sums
    }
}

/// Subtree roots received from higher ranks, by index, until used.
#[derive(Default)]
struct Inbox {
    waiting: HashMap<usize, Vec<f64>>,
}

impl Inbox {
    /// The `rows` values of the subtree rooted at `x`, from rank `from`.
    fn take<C: Communicator>(&mut self, comm: &C, from: usize, x: usize, rows: usize) -> Vec<f64> {
        loop {
            if let Some(v) = self.waiting.remove(&x) {
                return v;
            }
            let (message, _) = comm.process_at_rank(from as i32).receive_vec::<f64>();
            for entry in message.chunks_exact(1 + rows) {
                self.waiting.insert(entry[0] as usize, entry[1..].to_vec());
            }
        }
    }
}
