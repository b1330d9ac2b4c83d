//! BasicFPRev (paper Algorithm 2): measure `l_{i,j}` for every pair, then
//! join subtrees in ascending order of `l` with a union-find.

use petgraph::unionfind::UnionFind;

use super::oracle::Oracle;
use crate::error::{Error, Fault, Param, Remedy, Result};
use crate::tree::{SummationTree, TreeBuilder};

pub(super) fn build(oracle: &mut Oracle) -> Result<SummationTree> {
    let n = oracle.n();
    let all: Vec<usize> = (0..n).collect();
    let mut triples = Vec::with_capacity(n * (n - 1) / 2);
    for i in 0..n.saturating_sub(1) {
        let others: Vec<usize> = (i + 1..n).collect();
        for (&j, l) in others.iter().zip(oracle.lca_sizes(&all, i, &others)?) {
            let l = l.ok_or_else(|| {
                Error::Input(format!(
                    "basic counts up to n - 2 = {} units per answer, more than the accumulator \
                     counts exactly ({}), and does not split such reveals as fprev does",
                    n - 2,
                    oracle.masks().exact_below
                ))
                .advise(Remedy::Give(Param::Algorithm, &["fprev"]))
            })?;
            triples.push((l, i, j));
        }
    }
    triples.sort_unstable();
    let mut builder = TreeBuilder::new(n);
    let mut sets = UnionFind::<usize>::new(n);
    let mut root_of: Vec<_> = (0..n).map(|i| builder.leaf(i)).collect();
    for (l, i, j) in triples {
        let (si, sj) = (sets.find(i), sets.find(j));
        if si == sj {
            continue;
        }
        let node = builder.sum(&[root_of[si], root_of[sj]]);
        if builder.size(node) != l {
            return Err(Error::BlackBox(Fault::Basic {
                i,
                j,
                l,
                met: builder.size(node),
            }));
        }
        sets.union(i, j);
        root_of[sets.find(i)] = node;
    }
    let root = root_of[sets.find(0)];
    Ok(builder.finish(root)?)
}
