//! The Binary Tree Reduction (Stelz; docs/ALGORITHMS.md, Reproducible reducers): a fixed
//! summation tree that depends only on `n`, so the result has the same bits
//! whatever the number of threads (or ranks) that compute it.
//!
//! `S[lo, hi) = S[lo, lo + P) + S[lo + P, hi)`, with `P` the largest power of
//! two below `hi - lo`. Every subtree over an aligned block of `2^k`
//! summands is the perfect binary tree, which is summed level by level in a
//! small buffer; threads split the top of the tree.
//!
//! ```
//! use fprev::reduce::{binary_tree_sum, binary_tree_sum_threads};
//!
//! let x: Vec<f64> = (0..1000).map(|i| 1.0 / (i as f64 + 1.0)).collect();
//! let one = binary_tree_sum(&x);
//! for threads in 1..=8 {
//!     assert_eq!(binary_tree_sum_threads(&x, threads).to_bits(), one.to_bits());
//! }
//! ```

use std::ops::Add;

/// A float the reducers add: `f32` or `f64`.
pub trait Real: Copy + Add<Output = Self> + Send + Sync + Default {}
impl Real for f32 {}
impl Real for f64 {}

/// Summands in one perfect block summed level by level.
const BLOCK: usize = 256;
/// Below this many summands a subtree is not worth a thread.
const SPLIT: usize = 1 << 14;

/// The Binary Tree Reduction of `x`, on this thread. 0 for an empty slice.
pub fn binary_tree_sum<T: Real>(x: &[T]) -> T {
    if x.is_empty() {
        return T::default();
    }
    tree(x, &|l, r| (l(), r()))
}

/// The Binary Tree Reduction of `x` on `threads` threads: the same bits as
/// [`binary_tree_sum`] for every thread count. Builds a thread pool per
/// call; [`binary_tree_sum_on`] reuses one.
///
/// # Panics
/// If the thread pool cannot be built.
pub fn binary_tree_sum_threads<T: Real>(x: &[T], threads: usize) -> T {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .expect("a thread pool");
    binary_tree_sum_on(&pool, x)
}

/// The Binary Tree Reduction of `x` on the threads of `pool`.
pub fn binary_tree_sum_on<T: Real>(pool: &rayon::ThreadPool, x: &[T]) -> T {
    if x.is_empty() {
        return T::default();
    }
    pool.install(|| tree(x, &|l, r| rayon::join(l, r)))
}

/// How two independent halves are computed: in turn, or in parallel.
type Join<'a, T> = dyn Fn(&(dyn Fn() -> T + Sync), &(dyn Fn() -> T + Sync)) -> (T, T) + Sync + 'a;

fn tree<T: Real>(x: &[T], join: &Join<'_, T>) -> T {
    let n = x.len();
    if n == 1 {
        return x[0];
    }
    if n.is_power_of_two() && n <= BLOCK {
        return perfect(x);
    }
    // Largest power of two strictly below n.
    let p = 1usize << (usize::BITS - 1 - (n - 1).leading_zeros());
    let (l, r) = x.split_at(p);
    if n >= SPLIT {
        let (a, b) = join(&|| tree(l, join), &|| tree(r, join));
        a + b
    } else {
        tree(l, &|a, b| (a(), b())) + tree(r, &|a, b| (a(), b()))
    }
}

/// The perfect binary tree over `2^k <= BLOCK` summands, level by level.
fn perfect<T: Real>(x: &[T]) -> T {
    let mut buf = [T::default(); BLOCK / 2];
    let mut len = x.len() / 2;
    for i in 0..len {
        buf[i] = x[2 * i] + x[2 * i + 1];
    }
    while len > 1 {
        len /= 2;
        for i in 0..len {
            buf[i] = buf[2 * i] + buf[2 * i + 1];
        }
    }
    buf[0]
}
