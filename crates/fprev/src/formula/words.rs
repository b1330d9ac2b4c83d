//! A formula in words: the English sentence that describes it.

use super::{Formula, Tail};
use crate::order::Order;

impl Formula {
    /// The formula in words, as one sentence without its full stop.
    pub fn sentence(&self) -> String {
        match self {
            Formula::Order(_) => format!("summands {}", self.phrase()),
            Formula::Below(m, small, large) => format!(
                "fewer than {m} summands {}; otherwise {}",
                small.phrase(),
                large.clause()
            ),
            _ => self.clause(),
        }
    }

    /// A clause that stands alone: "blocks of 128, each …".
    fn clause(&self) -> String {
        match self {
            Formula::Order(_) => format!("the summands {}", self.phrase()),
            Formula::Interleave(k, inner, outer) => format!(
                "{k} interleaved lanes, each {}, the lanes {}",
                inner.phrase(),
                outer.phrase()
            ),
            Formula::Blocks(b, inner, outer) => format!(
                "blocks of {b} summands, each {}, the blocks {}",
                inner.phrase(),
                outer.phrase()
            ),
            Formula::Body(m, body, Tail::Then) => format!(
                "a body of the largest multiple of {m} summands ({}), then the rest added one \
                 by one",
                body.clause()
            ),
            Formula::Body(m, body, Tail::First) => format!(
                "a body of the largest multiple of {m} summands ({}), the rest joining the \
                 first lane after its own summands",
                body.clause()
            ),
            Formula::Body(m, body, Tail::Apart(tail)) => format!(
                "a body of the largest multiple of {m} summands ({}) and the rest {}, the two \
                 sums added",
                body.clause(),
                tail.phrase()
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
                    "halved at half the count{at} down to {leaf} summands or fewer, which are \
                     summed as {}",
                    inner.clause()
                )
            }
            Formula::Below(..) => self.sentence(),
            Formula::Split(p, inner, outer) => format!(
                "{p} blocks as even as can be (the first ones one longer), each {}, the blocks \
                 {}",
                inner.phrase(),
                outer.phrase()
            ),
            Formula::Doubling | Formula::Fold | Formula::Fanout(_) => {
                format!("the summands {}", self.phrase())
            }
            Formula::KBlocks(q, u, inner) => format!(
                "blocks of {q} summands while at least {} remain, a rest between {q} and {} \
                 cut in two ({}), each block {}, the blocks added left to right",
                2 * q,
                2 * q,
                match u {
                    Some(u) =>
                        format!("the first part half of it, rounded up to a multiple of {u}"),
                    None => "the larger half first".to_string(),
                },
                inner.phrase()
            ),
            Formula::Pieces(steps, inner) => format!(
                "pieces of {} summands while that many remain{}, then the rest as one \
                 piece, each piece {}, the pieces added left to right",
                steps[0],
                steps[1..]
                    .iter()
                    .map(|s| format!(", then of {s}"))
                    .collect::<String>(),
                inner.phrase()
            ),
            Formula::Windows(w, inner) => format!(
                "windows of {w} summands over the summands padded on both sides to a multiple \
                 of {w} (half the padding before, rounded down), each window {}, and the window \
                 sums likewise, down to {w} or fewer",
                inner.phrase()
            ),
            Formula::Rotate(k, inner) => format!(
                "the summands from the {k}-th (counted from 0; none when there are fewer) on, \
                 then those before it, {}",
                inner.phrase()
            ),
            Formula::Peel(p, lanes) => format!(
                "where at least {p} summands are left over past a multiple of {}, the first \
                 {p} start lanes 0 to {} (alignment peeling) and the rest are {}",
                lanes.lane_count().expect("peel's formula has lanes"),
                p - 1,
                lanes.phrase()
            ),
        }
    }

    /// What the formula does to the values it is given, after "each" or
    /// "the lanes".
    fn phrase(&self) -> String {
        match self {
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
            Formula::Doubling => "combined by recursive doubling (the first folded in pairs down \
                                  to a power of two, then halved pairwise)"
                .into(),
            Formula::Fold => "folded in halves, as a vector register's lanes are (those at even \
                              places and those at odd places each folded so, then added)"
                .into(),
            Formula::Fanout(f) => format!(
                "combined over Open MPI's tree of fan-out {f} rooted at the first (levels of 1, \
                 {f}, {f}^2, … values; value r of level L is the parent of r + i·{f}^L for i = 1 \
                 to {f}, and adds their sums to its own one at a time, in that order)"
            ),
            _ => format!("summed as {}", self.clause()),
        }
    }
}
