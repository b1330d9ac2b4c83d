//! What several test files share.

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
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut b = TreeBuilder::new(n);
    let mut roots: Vec<_> = (0..n).map(|i| b.leaf(i)).collect();
    while roots.len() > 1 {
        let k = rng.random_range(2..=max_width.min(roots.len()));
        let at = rng.random_range(0..=roots.len() - k);
        let node = b.sum(&roots[at..at + k]);
        roots.splice(at..at + k, [node]);
    }
    b.finish(roots[0]).expect("every leaf merged into one root")
}
