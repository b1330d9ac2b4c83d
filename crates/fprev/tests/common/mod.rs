//! What several test files share.
// Each test file uses a part of these helpers.
#![allow(dead_code)]

use fprev::{Format, Probe};

/// A black box that sums `rows` inputs per call, each with `inner`: the
/// engine then packs queries into rows as well as into fields.
pub struct Rows<P>(pub P, pub usize);

impl<P: Probe> Probe for Rows<P> {
    fn n(&self) -> usize {
        self.0.n()
    }
    fn format(&self) -> Format {
        self.0.format()
    }
    fn accumulator(&self) -> Format {
        self.0.accumulator()
    }
    fn may_fuse(&self) -> bool {
        self.0.may_fuse()
    }
    fn max_batch(&self) -> usize {
        self.1
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> fprev::Result<()> {
        let n = self.n();
        for (x, o) in inputs.chunks_exact(n).zip(out) {
            self.0.sum(x, std::slice::from_mut(o))?;
        }
        Ok(())
    }
}

/// A random tree whose nodes have 2 to `max_width` children. `ordered`:
/// its nodes add neighbours (every node holds a run of consecutive
/// summands, as in pairwise, blocked and most library orders), where
/// groups complete early; else [`fprev::SummationTree::random`], which
/// shuffles them.
pub fn random_tree(n: usize, max_width: usize, ordered: bool, seed: u64) -> fprev::SummationTree {
    if ordered {
        ordered_tree(n, max_width, seed)
    } else {
        fprev::SummationTree::random(n, max_width, seed)
    }
}

fn ordered_tree(n: usize, max_width: usize, seed: u64) -> fprev::SummationTree {
    use fprev::tree::TreeBuilder;
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let b = TreeBuilder::new(n);
    let roots: Vec<_> = (0..n).map(|i| b.leaf(i)).collect();
    add_neighbours(b, roots, max_width, &mut rng)
}

/// Adds neighbouring `roots`, 2 to `max_width` at a time, into one tree.
fn add_neighbours(
    mut b: fprev::tree::TreeBuilder,
    mut roots: Vec<petgraph::graph::NodeIndex>,
    max_width: usize,
    rng: &mut rand_chacha::ChaCha8Rng,
) -> fprev::SummationTree {
    use rand::Rng;
    while roots.len() > 1 {
        let k = rng.random_range(2..=max_width.min(roots.len()));
        let at = rng.random_range(0..=roots.len() - k);
        let node = b.sum(&roots[at..at + k]);
        roots.splice(at..at + k, [node]);
    }
    b.finish(roots[0]).expect("every leaf merged into one root")
}

/// A tree of consecutive blocks of one size, most of one binary shape, some
/// of that shape with its first addition moved (alike but for one cherry
/// deep inside), some of a shape of its own with nodes of up to
/// `max_width` children; the block sums and any summands left over are
/// then added as in [`random_tree`]'s ordered trees. Guessing a group's
/// shape from one alike is right for most blocks and wrong for the rest.
pub fn repeating_tree(n: usize, max_width: usize, seed: u64) -> fprev::SummationTree {
    use fprev::tree::TreeBuilder;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let block = rng.random_range(16..=48usize);
    // A shape: the additions that sum `block` roots into one, each `(at, k)`
    // merging roots `at..at + k`.
    let mut shape = |width: usize| {
        let mut ops = Vec::new();
        let mut len = block;
        while len > 1 {
            let k = rng.random_range(2..=width.min(len));
            ops.push((rng.random_range(0..=len - k), k));
            len -= k - 1;
        }
        ops
    };
    let common = shape(2);
    let mut near = common.clone();
    let (at, k) = near[0];
    near[0] = ((at + 1) % (block - k + 1), k);
    let own = shape(max_width);
    let mut b = TreeBuilder::new(n);
    let mut roots = Vec::new();
    for start in (0..n).step_by(block) {
        let leaves: Vec<_> = (start..n.min(start + block)).map(|i| b.leaf(i)).collect();
        if leaves.len() < block {
            roots.extend(leaves);
            continue;
        }
        let ops = match rng.random_range(0..10) {
            0..6 => &common,
            6..8 => &near,
            _ => &own,
        };
        let mut sums = leaves;
        for &(at, k) in ops {
            let node = b.sum(&sums[at..at + k]);
            sums.splice(at..at + k, [node]);
        }
        roots.push(sums[0]);
    }
    add_neighbours(b, roots, max_width, &mut rng)
}

/// Lanes that start with summands of their own: a rest taken into the
/// first lane (OpenBLAS's Haswell SGEMM K loop), a head peeled into the
/// first lanes (its SGEMV, whole).
pub const SEEDED: [&str; 6] = [
    "body(8, interleave(2, sequential, sequential), first)",
    "body(4, interleave(4, pairwise, reverse), first)",
    "kblocks(320, 8, body(8, interleave(2, sequential, sequential), first))",
    "peel(3, body(4, interleave(4, sequential, pairwise), reverse))",
    "peel(4, body(8, interleave(8, sequential, interleave(4, pairwise, pairwise)), sequential))",
    "blocks(4096, below(5, binary-tree, below(9, body(8, interleave(8, sequential, pairwise), \
     then), peel(4, body(8, interleave(8, sequential, interleave(4, pairwise, pairwise)), \
     sequential)))), sequential)",
];

/// Vectorised kernels as libraries build them: registers filled in stages,
/// merged, folded, the rest joined each way; below a stage's chunk its
/// registers stay empty and drop out of every sum after it.
pub const KERNELS: [&str; 8] = [
    // BLIS's sdotv.
    "simd(8, 10[0+5, 1+6, 2+7, 3+8, 4+9], 5[(0+2)+4, 1+3], 2[0+1], 1, sequential, sequential)",
    // MKL.
    "simd(4, 4, 2, 1, interleave(2, interleave(2, sequential, sequential), sequential), first)",
    // PyTorch.
    "simd(8, 4, 1[((0+1)+2)+3], sequential, first(sequential))",
    // OpenBLAS.
    "simd(8, 4, interleave(4, pairwise, pairwise), sequential)",
    // A merge that leaves its first register empty below 16 summands, the
    // rest taken into that empty first lane alone.
    "simd(4, 4, 2[3, 0+1+2], pairwise, first)",
    // Lone registers moved by a merge, the rest added after the fold.
    "simd(2, 3[2, 1+0], 1[1, 0], fold, then)",
    // More slots than a stack's: in an allocated array.
    "simd(32, 12, 3, pairwise, then)",
    // One lane slot left: no fold to add.
    "simd(1, 3[(2+0)+1], 1, sequential, first(pairwise))",
];
