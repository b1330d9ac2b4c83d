//! Finding the formula behind revealed trees: the simplest formula of the
//! order language that regenerates every one of them exactly.
//!
//! The search walks the formulas from the simplest up (reference orders,
//! interleaved lanes, a lane body with its tail, blocks, recursive
//! halving over any of those), each part's count drawn from the powers of
//! two up to the largest tree and the counts the trees themselves show
//! (the partner of summand 0, the length of the chain it starts). A
//! candidate is built at the smallest size first and dropped at its first
//! mismatch, so most cost a few small trees. A formula below which small
//! sizes differ (NumPy sums fewer than 8 summands left to right) is found
//! as `below(M, SMALL, LARGE)`: when no formula explains every size, the
//! one that explains the most sizes from the smallest is taken for them,
//! and the search goes on from the first size it does not explain (up to
//! four regimes). Where sizes between two regimes were not revealed, the
//! switch is only known to lie in that gap ([`Inference::gaps`]).

mod candidates;
mod explain;
mod halving;
mod lead;
mod panels;
mod partition;
mod simd;

use crate::tree::SummationTree;

use super::Formula;

use candidates::{blocked, kblocks_of, longest, vectorised};
pub use explain::{EXPLAIN_SIZES, explain};
pub use panels::panels;
pub use partition::partitioned;

/// What [`infer`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Inference {
    /// The formula that regenerates every tree, if one does.
    pub formula: Option<Formula>,
    /// When none does: the formula that explains the most sizes in a row
    /// from the smallest, and the first size it does not explain.
    pub closest: Option<(Formula, usize)>,
    /// Sizes not shown where the formula switches from one part to the
    /// next (`below(M, …)`): the switch lies in each range `a..=b`, taken
    /// at its end; revealing a size inside narrows it.
    pub gaps: Vec<(usize, usize)>,
}

/// The largest tree [`infer_one`] tries every candidate on: each costs a
/// tree as large, and a search that fails for a tree of a thousand
/// summands takes seconds.
pub const INFER_ONE_UP_TO: usize = 1024;

/// The largest first block of K [`infer_one`] reads a formula of: one
/// that fits is found among the first candidates, one that does not
/// costs what a whole tree does.
pub const FIRST_BLOCK_UP_TO: usize = 1024;

/// A formula whose tree at `tree`'s size is `tree`, read from this one
/// tree: a blocking of K (`kblocks(Q, U, f)`, as OpenBLAS's GEMM) whose
/// first block (up to [`FIRST_BLOCK_UP_TO`] summands) a candidate of
/// [`infer`] gives, or up to [`INFER_ONE_UP_TO`] summands the first
/// candidate that gives the whole tree. It says nothing of other sizes.
///
/// ```
/// use fprev::formula::{Formula, infer::infer_one};
///
/// let truth: Formula = "kblocks(448, sequential)".parse().unwrap();
/// let found = infer_one(&truth.tree(1000)).unwrap();
/// assert_eq!(found.tree(1000), truth.tree(1000));
/// ```
pub fn infer_one(tree: &SummationTree) -> Option<Formula> {
    // The blocking first: where it applies, every candidate of the whole
    // tree fails, each at the cost of a tree as large.
    kblocks_of(tree).or_else(|| {
        match tree.n() <= INFER_ONE_UP_TO {
            true => Some(longest(&[tree], tree.n())).filter(|(_, explained)| *explained == 1),
            false => None,
        }
        .map(|(formula, _)| formula)
    })
}

/// Regimes one formula may chain with `below` before it gives up.
const MOST_REGIMES: usize = 4;

/// The largest first tree of a later regime the whole candidate search is
/// tried on: each of its thousands of candidates costs a tree as large
/// (minutes at 16,384 summands). A regime seen only at larger sizes
/// (checked past those revealed) is found by the kernels' own structure.
const LATER_SEARCH_UP_TO: usize = 4096;

/// The simplest formula whose tree at each tree's size is that tree.
///
/// ```
/// use fprev::formula::{Formula, infer::infer};
///
/// let truth: Formula = "body(4, interleave(4, sequential, pairwise), then)".parse().unwrap();
/// let trees: Vec<_> = [3, 8, 13, 30, 64].iter().map(|&n| truth.tree(n)).collect();
/// let found = infer(&trees).formula.unwrap();
/// for n in [5, 100, 1001] {
///     assert_eq!(found.tree(n), truth.tree(n));
/// }
/// ```
pub fn infer(trees: &[SummationTree]) -> Inference {
    infer_in(trees, true)
}

/// [`infer`], trying a leading rest (whose sides are inferred in turn)
/// where `lead`.
fn infer_in(trees: &[SummationTree], lead: bool) -> Inference {
    let mut trees: Vec<&SummationTree> = trees.iter().collect();
    trees.sort_by_key(|t| t.n());
    trees.dedup();
    // Two orders at one size: no formula of the size alone gives both.
    // Forced trees alone (one or two summands) fit every formula: no
    // evidence of any.
    if trees.windows(2).any(|w| w[0].n() == w[1].n()) || trees.iter().all(|t| t.is_forced()) {
        return Inference {
            formula: None,
            closest: None,
            gaps: Vec::new(),
        };
    }
    let largest = trees.last().map_or(1, |t| t.n());
    let mut gaps = Vec::new();
    // Each regime: the formula that explains the most sizes in a row from
    // the smallest not yet explained.
    let mut regimes: Vec<(usize, Formula)> = Vec::new();
    let mut from = 0;
    let mut closest = None;
    while from < trees.len() && regimes.len() < MOST_REGIMES {
        // Past a first regime, a vectorised kernel (XLA's sum from 4,096
        // summands) is tried first: it is checked against every size left,
        // and each of the many candidates `longest` would build instead
        // costs a tree as large as the largest.
        let lanes = (from > 0 && trees.len() - from >= 2)
            .then(|| vectorised(&trees[from..]))
            .flatten();
        let (mut formula, mut explained) = match lanes {
            Some(lanes) => (lanes, trees.len() - from),
            None if from > 0 && trees[from].n() > LATER_SEARCH_UP_TO => {
                (Formula::Order(crate::order::Order::Sequential), 0)
            }
            None => longest(&trees[from..], largest),
        };
        // A later regime seen at one size only is no evidence of a rule;
        // a vectorised kernel may explain every size left (a regime of one
        // size being no evidence either).
        if explained == 0 || (from > 0 && explained < 2) {
            match vectorised(&trees[from..]) {
                Some(lanes) if from == 0 || trees.len() - from >= 2 => {
                    formula = lanes;
                    explained = trees.len() - from;
                }
                _ => break,
            }
        }
        if from > 0 {
            gaps.push((trees[from - 1].n() + 1, trees[from].n()));
        }
        regimes.push((trees[from].n(), formula));
        if closest.is_none() && from + explained < trees.len() {
            closest = Some((regimes[0].1.clone(), trees[from + explained].n()));
        }
        from += explained;
        // Kernels that work in blocks (OpenBLAS's GEMV of 4,096 columns,
        // its GEMM's blocks of K) repeat the order of the sizes below the
        // block, block by block: tried before another regime.
        if from < trees.len()
            && let Some((blocked, switches)) = blocked(&join(regimes.clone()), &trees, from)
        {
            // Where the formula in blocks first differs from the one it
            // repeats is no switch of the formula: only its own are gaps.
            gaps.extend(switches);
            gaps.retain(|(a, b)| a < b);
            return Inference {
                formula: Some(blocked),
                closest: None,
                gaps,
            };
        }
    }
    if from < trees.len() || regimes.is_empty() {
        // A vectorised kernel built of loops and merges, threads' pieces
        // cut by halves (Rayon's), or a rest summed at the front (Polars'):
        // every size, or every size past the first regime (PyTorch's sum
        // of fewer than 8 summands is another kernel's).
        let kernel = simd::kernel(&trees)
            .or_else(|| halving::bisection(&trees))
            .or_else(|| halving::halves(&trees))
            .or_else(|| lead.then(|| lead::leading(&trees)).flatten());
        if let Some(kernel) = kernel {
            return Inference {
                formula: Some(kernel),
                closest: None,
                gaps: Vec::new(),
            };
        }
        if let Some(start) = regimes.get(1).map(|(start, _)| *start)
            && let Some(at) = trees
                .iter()
                .position(|t| t.n() == start)
                .filter(|&at| at > 0)
            && let Some(kernel) = simd::kernel(&trees[at..])
        {
            let first = regimes.remove(0);
            return Inference {
                formula: Some(join(vec![first, (start, kernel)])),
                closest: None,
                gaps: vec![(trees[at - 1].n() + 1, start)],
            };
        }
        return Inference {
            formula: None,
            closest,
            gaps: Vec::new(),
        };
    }
    let formula = join(regimes);
    gaps.retain(|(a, b)| a < b);
    Inference {
        formula: Some(formula),
        closest: None,
        gaps,
    }
}

/// `below(m1, F0, below(m2, F1, F2))` from the regimes, each switch at the
/// first size its later regime explains.
fn join(regimes: Vec<(usize, Formula)>) -> Formula {
    let mut later = regimes.into_iter().rev();
    let (mut start, mut formula) = later.next().expect("one regime at least");
    for (earlier_start, earlier) in later {
        formula = Formula::Below(start, Box::new(earlier), Box::new(formula));
        start = earlier_start;
    }
    formula
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::Order;

    fn trees(f: &Formula, sizes: &[usize]) -> Vec<SummationTree> {
        sizes.iter().map(|&n| f.tree(n)).collect()
    }

    #[test]
    fn the_formula_of_each_shape_comes_back() {
        let sizes: Vec<usize> = (1..=40).chain([63, 64, 65, 100, 129, 300, 1000]).collect();
        for s in [
            "pairwise",
            "strided:8",
            "interleave(8, sequential, interleave(4, pairwise, pairwise))",
            "body(32, interleave(32, sequential, interleave(4, pairwise, pairwise)), sequential)",
            "below(8, sequential, halves(128, 8, body(8, interleave(8, sequential, pairwise), then)))",
            "blocks(64, pairwise, sequential)",
        ] {
            let truth: Formula = s.parse().unwrap();
            let found = infer(&trees(&truth, &sizes))
                .formula
                .unwrap_or_else(|| panic!("{s}: none found"));
            // Another formula may give the same trees: it must agree at
            // sizes never shown to it.
            for n in [41, 99, 257, 777, 2048, 5000] {
                assert_eq!(
                    found.tree(n),
                    truth.tree(n),
                    "{s}: found {found} at n = {n}"
                );
            }
        }
    }

    #[test]
    fn a_formula_repeated_in_blocks_is_found_from_sizes_past_the_block() {
        let truth: Formula =
            "blocks(64, peel(4, body(8, interleave(8, sequential, pairwise), sequential)), sequential)"
                .parse()
                .unwrap();
        let sizes = [1, 2, 3, 9, 13, 20, 31, 40, 63, 64, 65, 100, 130, 200];
        let found = infer(&trees(&truth, &sizes)).formula.unwrap();
        for n in [67, 300, 1000] {
            assert_eq!(found.tree(n), truth.tree(n), "{found} at n = {n}");
        }
        assert!(infer(&[]).formula.is_none());
    }

    #[test]
    fn blocks_of_k_with_a_halved_rest_are_found() {
        let truth: Formula =
            "kblocks(40, 8, body(8, interleave(2, sequential, sequential), first))"
                .parse()
                .unwrap();
        let sizes = [
            1, 2, 3, 7, 8, 9, 15, 17, 20, 33, 39, 40, 41, 63, 64, 65, 100, 130, 200,
        ];
        let found = infer(&trees(&truth, &sizes)).formula.unwrap();
        for n in [57, 77, 151, 333] {
            assert_eq!(found.tree(n), truth.tree(n), "{found} at n = {n}");
        }
    }

    /// OpenBLAS's GEMM in small: its blocking of K changes past a size
    /// (where it threads), the formula below it in blocks either way.
    #[test]
    fn blocks_that_change_their_rest_past_a_size_are_found() {
        let inner = "body(8, interleave(2, sequential, sequential), first)";
        let truth: Formula = format!("below(120, kblocks(40, 8, {inner}), kblocks(40, {inner}))")
            .parse()
            .unwrap();
        let sizes = [
            1, 2, 3, 7, 8, 9, 15, 17, 20, 33, 39, 40, 41, 63, 64, 65, 100, 119, 121, 150, 203, 271,
        ];
        let found = infer(&trees(&truth, &sizes));
        let formula = found.formula.unwrap();
        for n in [57, 77, 105, 125, 151, 333] {
            assert_eq!(formula.tree(n), truth.tree(n), "{formula} at n = {n}");
        }
        // The switch lies between the sizes shown, where explain looks.
        assert!(found.gaps.contains(&(120, 121)), "{:?}", found.gaps);
    }

    /// XLA's vectorised reduction in small: 4 lanes, each in windows of
    /// 4, the lanes folded, past a scalar regime below 64. No candidate
    /// gives the lanes' interleave directly: the lanes' formula is
    /// inferred from the lanes themselves.
    #[test]
    fn lanes_of_a_vectorised_kernel_are_found_from_their_own_trees() {
        let truth: Formula =
            "below(64, windows(8, sequential), interleave(4, windows(4, sequential), fold))"
                .parse()
                .unwrap();
        let sizes = [
            1, 2, 3, 5, 8, 9, 17, 31, 40, 63, 64, 65, 67, 100, 130, 131, 200, 263,
        ];
        let found = infer(&trees(&truth, &sizes));
        let formula = found.formula.unwrap();
        for n in [70, 99, 257, 1000] {
            assert_eq!(formula.tree(n), truth.tree(n), "{formula} at n = {n}");
        }
        // A tree whose lanes are not subtrees is no vectorised kernel.
        let mixed: SummationTree = "(((0+4)+1)+((2+6)+((3+7)+5)))".parse().unwrap();
        assert!(vectorised(&[&mixed]).is_none());
    }

    /// A lane of XLA's vectorised sum in small: whole blocks of 16, the
    /// rest apart in pieces of 4, then 1, then what is left.
    #[test]
    fn blocks_with_a_rest_in_pieces_are_found() {
        let truth: Formula = "body(16, blocks(16, windows(4, sequential), sequential), \
                              pieces(4, 1, windows(4, sequential)))"
            .parse()
            .unwrap();
        let sizes = [16, 17, 23, 32, 35, 50, 64, 65, 79];
        let found = infer(&trees(&truth, &sizes)).formula.unwrap();
        for n in [27, 44, 99, 130] {
            assert_eq!(found.tree(n), truth.tree(n), "{found} at n = {n}");
        }
    }

    /// Open MPI's allreduce algorithms over P ranks, each rank's block
    /// summed left to right: its binary tree, its linear reduce, its ring
    /// (an element of chunk K).
    #[test]
    fn the_orders_of_mpi_ranks_come_back() {
        let sizes: Vec<usize> = (1..=40).chain([64, 100]).collect();
        let mut formulas: Vec<String> = Vec::new();
        for p in [4, 6, 8, 13] {
            formulas.push(format!("split({p}, sequential, fanout(2))"));
            formulas.push(format!("split({p}, sequential, reverse)"));
            for k in [1, p / 2, p - 1] {
                formulas.push(format!("split({p}, sequential, rotate({k}, sequential))"));
            }
        }
        formulas.push("split(5, pairwise, fanout(2))".into());
        // Open MPI's and MPICH's binomial reduce: the Binary Tree Reduction's
        // tree (of a power of two of ranks, doubling's).
        formulas.push("split(13, sequential, binary-tree)".into());
        for s in formulas {
            let truth: Formula = s.parse().unwrap();
            let found = infer(&trees(&truth, &sizes))
                .formula
                .unwrap_or_else(|| panic!("{s}: none found"));
            assert_eq!(found, truth, "{s}");
        }
    }

    #[test]
    fn forced_trees_alone_explain_nothing() {
        let forced: Vec<SummationTree> =
            [1, 2].iter().map(|&n| Order::Sequential.tree(n)).collect();
        let found = infer(&forced);
        assert_eq!(found.formula, None);
        assert_eq!(found.closest, None);
    }

    #[test]
    fn a_tree_no_formula_gives_is_not_explained() {
        let mut shown = trees(&Order::Sequential.into(), &[2, 3, 4]);
        shown.push("((0+3)+((1+2)+4))".parse().unwrap());
        let found = infer(&shown);
        assert_eq!(found.formula, None);
        let (closest, at) = found.closest.unwrap();
        assert_eq!(at, 5, "{closest}");
    }
}
