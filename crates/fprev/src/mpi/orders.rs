//! The order each of Open MPI's and MPICH's allreduce algorithms gives an
//! element of the vector, written from the algorithm's description, not from a
//! reveal: what reveals of `mpi:allreduce[:LOCAL]@ALGORITHM` are checked
//! against (docs/ALGORITHMS.md, MPI's allreduce algorithms).
//!
//! Each rank sums its block in the local order; the algorithm combines the
//! ranks' sums, so every formula is `split(P, LOCAL, OUTER)`:
//!
//! - `linear`: rank 0 receives every other rank's sum and adds them from
//!   the last down (`reverse`);
//! - `recursive-doubling` and `rabenseifner`: ranks pair at distance 1, 2,
//!   4, …, the first `2(P - 2^k)` folded in pairs first (`doubling`);
//!   Rabenseifner's halving of the vector pairs the ranks as recursive
//!   doubling does, for every element; Open MPI's Rabenseifner with fewer
//!   elements than the largest power of two of ranks is its linear
//!   algorithm instead (`reverse`), MPICH's is not;
//! - `ring` and `segmented-ring`: the vector is cut into `P` chunks (the
//!   first `count mod P` one longer), and the reduction of chunk `K`
//!   starts at rank `K` and goes round (`rotate(K, sequential)`); with
//!   fewer elements than ranks Open MPI uses recursive doubling instead;
//!   the segmented ring with no segment size set is the ring;
//! - `nonoverlapping`: a reduce, then a broadcast; the reduce is Open
//!   MPI's own choice by message size (a binary tree, `fanout(2)`, for
//!   small messages, a chain, `reverse`, or a binomial tree, `binary-tree`,
//!   for larger ones: `outputs/mpi/regimes.md`), so no one
//!   formula is its description's;
//! - MPICH's `smp` on one node: a binomial reduce to rank 0 (rank `r`
//!   sends to `r - 2^j` at its lowest set bit `j`: `binary-tree`), then a
//!   broadcast, for messages MPICH reduces so (up to 256 elements, its 2 KiB
//!   short-message size in f64); past them its reduce is its own choice by
//!   size;
//! - MPICH's `nb`: `MPI_Iallreduce`, whose algorithm MPICH chooses by size,
//!   so no one formula is its description's.
//!
//! ```
//! use fprev::mpi::algorithm::Algorithm;
//! use fprev::mpi::orders::formula;
//! use fprev::Order;
//! use fprev::mpi::Implementation::{Mpich, OpenMpi};
//!
//! let ring = formula(OpenMpi, Algorithm::Ring, 4, 64, 63, Order::Sequential).unwrap();
//! assert_eq!(ring.to_string(), "split(4, sequential, rotate(3, sequential))");
//! let few = formula(OpenMpi, Algorithm::Ring, 4, 3, 2, Order::Sequential).unwrap();
//! assert_eq!(few.to_string(), "split(4, sequential, doubling)");
//! assert!(formula(OpenMpi, Algorithm::Nonoverlapping, 4, 64, 0, Order::Sequential).is_none());
//! let smp = formula(Mpich, Algorithm::Smp, 5, 64, 0, Order::Sequential).unwrap();
//! assert_eq!(smp.to_string(), "split(5, sequential, binary-tree)");
//! assert!(formula(Mpich, Algorithm::Smp, 5, 131072, 0, Order::Sequential).is_none());
//! // Open MPI's Rabenseifner falls back to its linear algorithm; MPICH's does not.
//! let few = |mpi| formula(mpi, Algorithm::Rabenseifner, 4, 3, 0, Order::Sequential).unwrap();
//! assert_eq!(few(OpenMpi).to_string(), "split(4, sequential, reverse)");
//! assert_eq!(few(Mpich).to_string(), "split(4, sequential, doubling)");
//! ```

use super::Implementation;
use super::algorithm::Algorithm;
use crate::formula::Formula;
use crate::order::Order;

/// The order `algorithm` of `implementation` on `ranks` ranks gives element
/// `element` of a vector of `count` elements, each rank's block summed in
/// `local`; `None`
/// where the algorithm's description gives no one order (`nonoverlapping`,
/// whose reduce Open MPI chooses by size).
pub fn formula(
    implementation: Implementation,
    algorithm: Algorithm,
    ranks: usize,
    count: usize,
    element: usize,
    local: Order,
) -> Option<Formula> {
    let outer = match algorithm {
        Algorithm::Linear => Order::Reverse.into(),
        Algorithm::Rabenseifner
            if implementation == Implementation::OpenMpi && count < 1 << ranks.ilog2() =>
        {
            Order::Reverse.into()
        }
        Algorithm::RecursiveDoubling | Algorithm::Rabenseifner => Formula::Doubling,
        Algorithm::Ring | Algorithm::SegmentedRing if count < ranks => Formula::Doubling,
        Algorithm::Ring | Algorithm::SegmentedRing => Formula::Rotate(
            ring_chunk(ranks, count, element),
            Box::new(Order::Sequential.into()),
        ),
        Algorithm::Smp if count <= SHORT_REDUCE => Order::BinaryTree.into(),
        Algorithm::Nonoverlapping | Algorithm::Smp | Algorithm::Nonblocking => return None,
    };
    Some(Formula::Split(
        ranks,
        Box::new(local.into()),
        Box::new(outer),
    ))
}

/// Elements of the longest vector MPICH reduces by a binomial tree (its
/// `MPIR_CVAR_REDUCE_SHORT_MSG_SIZE`, 2,048 bytes, in f64).
const SHORT_REDUCE: usize = 256;

/// The chunk of a ring allreduce that holds `element`: `ranks` chunks as
/// even as can be, the first `count mod ranks` one element longer.
pub fn ring_chunk(ranks: usize, count: usize, element: usize) -> usize {
    let (len, longer) = (count / ranks, count % ranks);
    let long_part = longer * (len + 1);
    match element < long_part {
        true => element / (len + 1),
        false => longer + (element - long_part) / len.max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_chunks_are_as_even_as_can_be() {
        // 10 elements on 4 ranks: chunks of 3, 3, 2, 2.
        let chunks: Vec<usize> = (0..10).map(|e| ring_chunk(4, 10, e)).collect();
        assert_eq!(chunks, [0, 0, 0, 1, 1, 1, 2, 2, 3, 3]);
        assert_eq!(ring_chunk(4, 64, 16), 1);
        assert_eq!(ring_chunk(6, 64, 63), 5);
    }
}
