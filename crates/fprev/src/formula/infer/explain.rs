//! Explaining a black box: revealing it at sizes, inferring the formula,
//! and revealing more sizes where the order switches until the switch is
//! exact.

use crate::tree::SummationTree;

use super::{Inference, infer};

/// Sizes revealed to explain a black box when none are given: every size
/// to 40, and around the powers of two where kernels change strategy.
pub const EXPLAIN_SIZES: &str =
    "1..40,63,64,65,100,127,128,129,200,255,256,257,300,511,512,513,1000,1023,1024,1025,2048";

/// Sizes revealed to narrow where the order switches, at most.
const MOST_EXTRA_REVEALS: usize = 32;

/// Reveals with `reveal` at `sizes`, infers the formula, and reveals sizes
/// inside each gap between two regimes, by bisection, until the switch is
/// exact (at most 32 more). `reveal(sizes)` returns the trees it could
/// reveal, in any order. Returns the inference and every tree seen,
/// smallest first.
///
/// ```
/// use fprev::formula::{Formula, infer::explain};
///
/// let truth: Formula = "below(20, reverse, pairwise)".parse().unwrap();
/// let (found, trees) =
///     explain(&[4, 8, 16, 32, 64], |sizes| Ok(sizes.iter().map(|&n| truth.tree(n)).collect()))
///         .unwrap();
/// // The switch between 16 and 32 was narrowed down by revealing sizes there.
/// assert!(trees.len() > 5);
/// assert_eq!(found.formula.unwrap().tree(25), truth.tree(25));
/// ```
pub fn explain(
    sizes: &[usize],
    mut reveal: impl FnMut(&[usize]) -> crate::Result<Vec<SummationTree>>,
) -> crate::Result<(Inference, Vec<SummationTree>)> {
    let mut trees = reveal(sizes)?;
    let mut found = infer(&trees);
    let mut extra = 0;
    while let Some(&(lo, hi)) = found.gaps.first()
        && extra < MOST_EXTRA_REVEALS
        && !trees.is_empty()
    {
        let mid = lo + (hi - lo) / 2;
        let more = reveal(&[mid])?;
        extra += 1;
        if more.is_empty() {
            break;
        }
        trees.extend(more);
        found = infer(&trees);
    }
    trees.sort_by_key(|t| t.n());
    Ok((found, trees))
}
