//! What a fused chain `fused:K` is in every language: the words of its
//! comment, and the numbers of the formats its helpers round to.

use super::plan::{Op, Plan};
use crate::format::Format;

/// A binary format's numbers, as emitted code spells them: its precision
/// `p`, the exponent of its least normal value, its largest finite value
/// (a literal that reads back exactly), and, of a 16-bit one, its
/// fraction bits and exponent bias.
pub(super) struct Numbers {
    pub p: u32,
    pub emin: i32,
    pub max: String,
    pub fraction: u32,
    pub bias: i32,
}

impl Numbers {
    pub(super) fn of(f: Format) -> Numbers {
        let emin = crate::format::leading_exponent(f.min_normal());
        Numbers {
            p: f.precision(),
            emin,
            max: format!("{:e}", f.max_finite()),
            fraction: f.precision() - 1,
            bias: 1 - emin,
        }
    }
}

/// What a fused chain's comment says of its nodes and its functions'
/// types: the window, the alignment, the rounding.
pub(super) fn words(plan: &Plan, k: usize) -> String {
    let part = plan.parts[0];
    let fused = part.fused.expect("a fused chain");
    format!(
        "groups of {} summands, the first alone and each later one with the running \
         sum, each group one fused node: its terms aligned at the largest exponent \
         among them ({}), each truncated toward zero to {} bits below it, added exactly \
         in a 64-bit integer, the sum rounded once to {} {}; the result returned as {}",
        k - 1,
        match (plan.op, fused.aligns_factors) {
            (Op::Dot, Some(f)) => format!(
                "a product's at the sum of its {f} factors' exponents, a subnormal factor's \
                 taken as {}; the running sum's at its leading bit",
                Numbers::of(f).emin
            ),
            _ => "each term's at its leading bit".into(),
        },
        fused.bits,
        part.format,
        fused.rounding,
        plan.result,
    )
}
