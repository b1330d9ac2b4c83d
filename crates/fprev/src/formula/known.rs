//! The formulas `fprev explain` found for real libraries (docs/ALGORITHMS.md,
//! Formulas), so that a reveal's summary can name the rule a tree follows
//! when no reference order gives it: a tree is matched only when the
//! formula's tree at its size is that tree, node for node.
//!
//! ```
//! use fprev::formula::known;
//!
//! let numpy: fprev::formula::Formula = known::KNOWN[0].formula.parse().unwrap();
//! let tree = numpy.tree(1000);
//! assert_eq!(known::matching(&tree).unwrap().found_for, "numpy:sum");
//! assert!(known::matching(&fprev::Order::Sequential.tree(1000)).is_none());
//! ```

use super::Formula;
use crate::tree::SummationTree;

/// A formula and the black box it was found for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    /// The formula, as a `native:` spec without its prefix.
    pub formula: &'static str,
    /// The black box (`fprev explain` spec and options) it was found for.
    pub found_for: &'static str,
}

/// OpenBLAS's SGEMM kernel over one block of K: two lanes, the rest of 8
/// joining the first.
macro_rules! sgemm_block {
    () => {
        "body(8, interleave(2, sequential, sequential), first)"
    };
}

/// Every formula found, most specific first.
pub const KNOWN: &[Known] = &[
    Known {
        formula: "halves(128, 8, body(8, interleave(8, sequential, pairwise), then))",
        found_for: "numpy:sum",
    },
    Known {
        formula: "body(32, interleave(32, sequential, interleave(4, pairwise, pairwise)), sequential)",
        found_for: "blas:dot, numpy:dot (OpenBLAS's sdot)",
    },
    Known {
        formula: "body(8, interleave(8, sequential, interleave(4, pairwise, sequential)), then)",
        found_for: "ndarray:sum, ndarray:dot, ndarray:gemv",
    },
    Known {
        formula: "body(4, blocks(4096, below(16, body(4, interleave(4, sequential, pairwise), \
                  sequential), peel(4, body(8, interleave(8, sequential, interleave(4, pairwise, \
                  pairwise)), sequential))), sequential), sequential)",
        found_for: "blas:gemv, numpy:gemv (OpenBLAS's SGEMV)",
    },
    Known {
        formula: concat!(
            "below(1025, kblocks(320, 8, ",
            sgemm_block!(),
            "), kblocks(320, ",
            sgemm_block!(),
            "))"
        ),
        found_for: "blas:gemm of shape 16,16,K (OpenBLAS's SGEMM)",
    },
    Known {
        formula: concat!(
            "kblocks(320, below(12, ",
            sgemm_block!(),
            ", below(17, body(16, interleave(16, sequential, interleave(2, sequential, \
             pairwise)), then), ",
            sgemm_block!(),
            ")))"
        ),
        found_for: "blas:gemm, numpy:gemm with square operands, M = N = K = n (OpenBLAS's \
                    SGEMM, to 2,048)",
    },
    Known {
        formula: "below(4096, windows(32, sequential), blocks(32768, interleave(16, body(64, \
                  blocks(64, windows(4, sequential), sequential), pieces(16, 4, windows(4, \
                  sequential))), fold), fold))",
        found_for: "jax:sum (written out from reveals to 131,072 summands)",
    },
];

/// The first known formula whose tree at `tree`'s size is `tree`.
pub fn matching(tree: &SummationTree) -> Option<&'static Known> {
    giving_every(std::slice::from_ref(tree))
        .next()
        .map(|(k, _)| k)
}

/// The known formulas, parsed, whose tree at each of `trees`' sizes is
/// that tree, most specific first.
pub fn giving_every(
    trees: &[SummationTree],
) -> impl Iterator<Item = (&'static Known, Formula)> + '_ {
    KNOWN.iter().filter_map(move |k| {
        let formula: Formula = k.formula.parse().expect("a known formula parses");
        trees
            .iter()
            .all(|t| formula.tree(t.n()) == *t)
            .then_some((k, formula))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_formula_parses_and_prints_as_written() {
        for k in KNOWN {
            let f: Formula = k
                .formula
                .parse()
                .unwrap_or_else(|e| panic!("{}: {e}", k.formula));
            assert_eq!(f.to_string(), k.formula);
        }
    }

    #[test]
    fn a_tree_is_matched_only_by_a_formula_that_gives_it() {
        for (i, k) in KNOWN.iter().enumerate() {
            let f: Formula = k.formula.parse().unwrap();
            for n in [3, 100, 777, 3000] {
                let tree = f.tree(n);
                let found = matching(&tree).expect("its own formula matches");
                // An earlier formula may give the same tree at a small size:
                // whichever is named gives the tree exactly.
                let named: Formula = found.formula.parse().unwrap();
                assert!(named.tree(n) == tree, "{} at {n}", k.formula);
                assert!(KNOWN.iter().position(|x| x == found).unwrap() <= i);
            }
        }
        // One swap away from NumPy's sum: no formula claims it.
        let numpy: Formula = KNOWN[0].formula.parse().unwrap();
        let text: String = numpy
            .tree(200)
            .to_text()
            .split_inclusive(|c: char| !c.is_ascii_digit())
            .map(|t| match t {
                "8+" => "9+".to_string(),
                "9+" => "8+".to_string(),
                "8)" => "9)".to_string(),
                "9)" => "8)".to_string(),
                t => t.to_string(),
            })
            .collect();
        let swapped: SummationTree = text.parse().unwrap();
        assert!(swapped != numpy.tree(200));
        assert!(matching(&swapped).map(|k| k.found_for) != Some("numpy:sum"));
    }
}
