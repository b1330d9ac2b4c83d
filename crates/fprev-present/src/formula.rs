//! A formula of the order language ([`Formula`]) in words: the English
//! sentence `fprev explain` prints under it, a survey file keeps beside
//! it and the survey page shows.
//!
//! ```
//! use fprev::formula::Formula;
//!
//! let numpy: Formula =
//!     "below(8, sequential, halves(128, 8, body(8, interleave(8, sequential, pairwise), then)))"
//!         .parse()
//!         .unwrap();
//! assert!(
//!     fprev_present::formula::sentence(&numpy)
//!         .starts_with("fewer than 8 summands added left to right")
//! );
//! ```

use fprev::formula::simd::{Rest, Simd};
use fprev::formula::{Formula, Tail};
use fprev::order::Order;

/// `formula` in words, as one sentence without its full stop.
pub fn sentence(formula: &Formula) -> String {
    match formula {
        Formula::Order(_) => format!("summands {}", phrase(formula)),
        Formula::Below(m, small, large) => format!(
            "fewer than {m} summands {}; otherwise {}",
            phrase(small),
            clause(large)
        ),
        _ => clause(formula),
    }
}

/// A clause that stands alone: "blocks of 128, each …".
fn clause(formula: &Formula) -> String {
    match formula {
        Formula::Order(_) => format!("the summands {}", phrase(formula)),
        Formula::Interleave(k, inner, outer) => format!(
            "{k} interleaved lanes, each {}, the lanes {}",
            phrase(inner),
            phrase(outer)
        ),
        Formula::Blocks(b, inner, outer) => format!(
            "blocks of {b} summands, each {}, the blocks {}",
            phrase(inner),
            phrase(outer)
        ),
        Formula::Body(m, body, Tail::Then) => format!(
            "a body of the largest multiple of {m} summands ({}), then the rest added one by one",
            clause(body)
        ),
        Formula::Body(m, body, Tail::First) => format!(
            "a body of the largest multiple of {m} summands ({}), the rest joining the first \
             lane after its own summands",
            clause(body)
        ),
        Formula::Body(m, body, Tail::Apart(tail)) => format!(
            "a body of the largest multiple of {m} summands ({}) and the rest {}, the two sums \
             added",
            clause(body),
            phrase(tail)
        ),
        Formula::Halves {
            leaf,
            multiple,
            inner,
        } => {
            let at = match multiple {
                1 => String::new(),
                m => format!(" (rounded down to a multiple of {m})"),
            };
            format!(
                "halved at half the count{at} down to {leaf} summands or fewer, which are summed \
                 as {}",
                clause(inner)
            )
        }
        Formula::Lead(m, body, rest) => format!(
            "the first n mod {m} summands ({}) added to the others, a multiple of {m} ({})",
            clause(rest),
            clause(body)
        ),
        Formula::Bisect(depth, inner) => {
            let levels = match depth {
                1 => "once".to_string(),
                d => format!("{d} levels deep"),
            };
            format!(
                "halved at half the count (rounded down) {levels}, each piece summed as {}, the \
                 halves added as they were cut",
                clause(inner)
            )
        }
        Formula::Below(..) => sentence(formula),
        Formula::Split(p, inner, outer) => format!(
            "{p} blocks as even as can be (the first ones one longer), each {}, the blocks {}",
            phrase(inner),
            phrase(outer)
        ),
        Formula::Doubling | Formula::Fold | Formula::Fanout(_) => {
            format!("the summands {}", phrase(formula))
        }
        Formula::KBlocks(q, u, inner) => format!(
            "blocks of {q} summands while at least {} remain, a rest between {q} and {} cut in \
             two ({}), each block {}, the blocks added left to right",
            2 * q,
            2 * q,
            match u {
                Some(u) => format!("the first part half of it, rounded up to a multiple of {u}"),
                None => "the larger half first".to_string(),
            },
            phrase(inner)
        ),
        Formula::Pieces(steps, inner) => format!(
            "pieces of {} summands while that many remain{}, then the rest as one piece, each \
             piece {}, the pieces added left to right",
            steps[0],
            steps[1..]
                .iter()
                .map(|s| format!(", then of {s}"))
                .collect::<String>(),
            phrase(inner)
        ),
        Formula::Windows(w, inner) => format!(
            "windows of {w} summands over the summands padded on both sides to a multiple of {w} \
             (half the padding before, rounded down), each window {}, and the window sums \
             likewise, down to {w} or fewer",
            phrase(inner)
        ),
        Formula::Rotate(k, inner) => format!(
            "the summands from the {k}-th (counted from 0; none when there are fewer) on, then \
             those before it, {}",
            phrase(inner)
        ),
        Formula::Simd(simd) => kernel(simd),
        Formula::Peel(p, lanes) => format!(
            "where at least {p} summands are left over past a multiple of {}, the first {p} \
             start lanes 0 to {} (alignment peeling) and the rest are {}",
            lanes.lane_count().expect("peel's formula has lanes"),
            p - 1,
            phrase(lanes)
        ),
    }
}

/// A vectorised kernel: its registers, each stage's loop and merge, the
/// fold of the lanes left and where the rest joins.
fn kernel(simd: &Simd) -> String {
    let w = simd.width;
    let mut stages = Vec::new();
    for (k, stage) in simd.stages.iter().enumerate() {
        let u = stage.registers;
        let mut words = format!(
            "{}chunks of {} summands while that many remain, each added lane by lane into the \
             first {u} accumulator{} of {w} lanes",
            if k == 0 { "" } else { "then " },
            u * w,
            if u == 1 { "" } else { "s" }
        );
        if let Some(merge) = &stage.merge {
            let sums: Vec<String> = merge.iter().map(|s| s.to_string()).collect();
            words += &format!(
                ", those then merged lane by lane into {} ({})",
                merge.len(),
                sums.join(", ")
            );
        }
        stages.push(words);
    }
    let tail = match &simd.rest {
        Rest::Then => "the rest added one by one after".to_string(),
        Rest::First => "the rest added one by one into the first lane before".to_string(),
        Rest::IntoFirst(t) => format!(
            "the rest {} and added into the first lane before",
            phrase(t)
        ),
        Rest::Apart(t) => format!("the rest {} and added after", phrase(t)),
    };
    format!(
        "a vectorised kernel: {}; the lane sums of the accumulators left (accumulator by \
         accumulator) {}, {tail} (accumulators start at zero, so one never filled adds nothing)",
        stages.join("; "),
        phrase(&simd.fold)
    )
}

/// What `formula` does to the values it is given, after "each" or "the
/// lanes".
fn phrase(formula: &Formula) -> String {
    match formula {
        Formula::Order(Order::Sequential) => "added left to right".into(),
        Formula::Order(Order::Reverse) => "added right to left".into(),
        Formula::Order(Order::Pairwise) => "combined by pairwise halving".into(),
        Formula::Order(Order::BinaryTree) => "combined by the binary tree reduction".into(),
        Formula::Order(Order::Strided(k)) => {
            format!("summed in {k} interleaved lanes combined pairwise")
        }
        Formula::Order(Order::Blocked(b)) => {
            format!("summed in blocks of {b}, each and then the blocks left to right")
        }
        Formula::Order(Order::Fused(k)) => format!("summed in {k}-term fused accumulations"),
        Formula::Doubling => "combined by recursive doubling (the first folded in pairs down to \
                              a power of two, then halved pairwise)"
            .into(),
        Formula::Fold => "folded in halves, as a vector register's lanes are (those at even \
                          places and those at odd places each folded so, then added)"
            .into(),
        Formula::Fanout(f) => format!(
            "combined over Open MPI's tree of fan-out {f} rooted at the first (levels of 1, {f}, \
             {f}^2, … values; value r of level L is the parent of r + i·{f}^L for i = 1 to {f}, \
             and adds their sums to its own one at a time, in that order)"
        ),
        _ => format!("summed as {}", clause(formula)),
    }
}

#[cfg(test)]
mod tests {
    use fprev::formula::Formula;
    use fprev::formula::known::KNOWN;

    use super::sentence;

    fn f(text: &str) -> Formula {
        text.parse().unwrap()
    }

    /// One formula of each part and tail, each reference order, and the
    /// known formulas of real libraries.
    fn every_part() -> Vec<Formula> {
        let mut texts: Vec<String> = [
            "sequential",
            "reverse",
            "pairwise",
            "binary-tree",
            "strided:4",
            "blocked:16",
            "fused:8",
            "interleave(4, sequential, pairwise)",
            "blocks(64, pairwise, reverse)",
            "body(8, interleave(8, sequential, pairwise), then)",
            "body(8, interleave(2, sequential, sequential), first)",
            "body(4, blocks(4, sequential, sequential), pairwise)",
            "halves(128, 8, sequential)",
            "halves(8, 1, body(8, interleave(8, sequential, pairwise), then))",
            "below(8, sequential, halves(128, 8, body(8, interleave(8, sequential, pairwise), then)))",
            "below(16, pairwise, below(4, reverse, sequential))",
            "windows(32, sequential)",
            "split(4, sequential, doubling)",
            "split(3, pairwise, fanout(2))",
            "doubling",
            "fold",
            "fanout(3)",
            "pieces(16, 4, sequential)",
            "pieces(8, pairwise)",
            "kblocks(4, 2, sequential)",
            "kblocks(4, sequential)",
            "peel(4, body(8, interleave(8, sequential, interleave(4, pairwise, pairwise)), sequential))",
            "peel(3, interleave(4, sequential, fold))",
            "rotate(1, sequential)",
            "simd(8, 5[(0+2)+4, 1+3], 2[0+1], 1, sequential, sequential)",
            "simd(4, 4, 2, 1, fold, first)",
            "simd(8, 4, 1[((0+1)+2)+3], sequential, first(sequential))",
            "simd(1, 8, pairwise, then)",
            "interleave(2, below(4, sequential, pairwise), split(2, fold, windows(8, pairwise)))",
        ]
        .map(String::from)
        .to_vec();
        texts.extend(KNOWN.iter().map(|k| k.formula.to_string()));
        texts.iter().map(|t| f(t)).collect()
    }

    #[test]
    fn numpy_s_pairwise_sum_reads_as_it_always_has() {
        assert_eq!(
            sentence(&f(
                "halves(128, 8, body(8, interleave(8, sequential, pairwise), then))"
            )),
            "halved at half the count (rounded down to a multiple of 8) down to 128 summands or \
             fewer, which are summed as a body of the largest multiple of 8 summands (8 \
             interleaved lanes, each added left to right, the lanes combined by pairwise \
             halving), then the rest added one by one"
        );
        assert_eq!(
            sentence(&f("pairwise")),
            "summands combined by pairwise halving"
        );
    }

    #[test]
    fn each_part_is_named_with_its_numbers() {
        let peel = f(
            "peel(4, body(8, interleave(8, sequential, interleave(4, pairwise, pairwise)), sequential))",
        );
        assert!(sentence(&peel).contains("the first 4 start lanes 0 to 3"));
        assert!(sentence(&f("kblocks(4, sequential)")).contains("the larger half first"));
        assert!(sentence(&f("rotate(1, sequential)")).contains("from the 1-th"));
        assert!(sentence(&f("fanout(3)")).contains("fan-out 3"));
        let blis = sentence(&f(
            "simd(8, 5[(0+2)+4, 1+3], 2[0+1], 1, sequential, sequential)",
        ));
        assert!(
            blis.contains("chunks of 40 summands while that many remain, each added lane by lane into the first 5 accumulators of 8 lanes, those then merged lane by lane into 2 ((0+2)+4, 1+3)"),
            "{blis}"
        );
        assert!(blis.contains("then chunks of 8 summands"), "{blis}");
        assert!(blis.ends_with("the rest added left to right and added after (accumulators start at zero, so one never filled adds nothing)"), "{blis}");
    }

    #[test]
    fn every_part_has_words() {
        for formula in every_part() {
            assert!(!sentence(&formula).is_empty(), "{formula}");
        }
    }
}
