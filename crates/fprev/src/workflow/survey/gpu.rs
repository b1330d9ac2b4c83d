//! Surveying a simulated GPU (`fprev survey --gpu ARCH`): one matrix
//! instruction of the architecture for each input type it has (MMA-Sim's
//! `mma:ARCH:INSTRUCTION` black boxes), and what each one's K-chain
//! computes; two architectures' surveys are matched by the instructions'
//! types ([`Instruction::kind`]), not their names, so that `compare` can
//! say what changes from one GPU to the next ([`Arithmetic`]).

use serde::Serialize;

use super::{Entry, Scope};
use crate::arith::{NodeArithmetic, Rounding};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::spec::Instruction;
use crate::tree::SummationTree;

/// The sizes (K) a GPU survey reveals: past two groups of the widest
/// instruction's products (16 on Hopper and later), and from 3, the first
/// size whose tree holds a fused node (a tree of two leaves is one plain
/// addition, which no model of a truncating fused sum describes).
pub const GPU_SIZES: &str = "3..40";

/// Trials a GPU survey checks each entry's model on, at its largest size,
/// against the simulator, besides inputs built to tell it from its
/// nearest alternatives.
pub const GPU_CHECK_TRIALS: usize = 1000;

/// The architectures MMA-Sim simulates, as `mma:` names them.
pub const ARCHITECTURES: [&str; 10] = [
    "volta",
    "turing",
    "ampere",
    "ada",
    "hopper",
    "blackwell",
    "rtx_blackwell",
    "cdna1",
    "cdna2",
    "cdna3",
];

/// The input types a GPU survey takes one instruction of, in order (AMD's
/// `fp8` and `bf8` are its FNUZ e4m3 and e5m2, `xf32` its TF32).
const INPUT_TYPES: [&str; 10] = [
    "f16", "bf16", "tf32", "xf32", "f32", "f64", "e4m3", "e5m2", "fp8", "bf8",
];

/// The instructions a survey of `arch` takes from `members` (every
/// `mma:` spec, as the family lists them): for each input type of
/// [`INPUT_TYPES`] it has with A and B alike, one whose result is the
/// wide accumulator (f64 for f64 inputs, else f32), chosen by
/// [`Instruction`]'s preference, so that two architectures' surveys hold
/// the same kinds where both have them. Fails on an architecture MMA-Sim
/// does not simulate, naming those it does.
pub fn instructions(arch: &str, members: &[String]) -> Result<Vec<Instruction>> {
    if !ARCHITECTURES.contains(&arch) {
        return Err(Error::Input(format!(
            "no GPU architecture '{}' is simulated: name one of {}",
            crate::error::abbreviated(arch),
            ARCHITECTURES.join(", ")
        )));
    }
    let mut chosen: Vec<Instruction> = Vec::new();
    for ins in members.iter().filter_map(|m| Instruction::parse(m)) {
        let wide = if ins.a == "f64" { "f64" } else { "f32" };
        if ins.arch != arch || ins.a != ins.b || ins.d != wide || !INPUT_TYPES.contains(&&*ins.a) {
            continue;
        }
        match chosen.iter_mut().find(|c| c.a == ins.a) {
            Some(c) if ins.rank < c.rank => *c = ins,
            Some(_) => {}
            None => chosen.push(ins),
        }
    }
    chosen.sort_by_key(|c| INPUT_TYPES.iter().position(|t| *t == c.a));
    Ok(chosen)
}

/// The plan of a survey of the simulated GPU `arch`: its
/// [`instructions`] (those whose inputs fprev gives in one of `dtypes`,
/// where given), each in its input format, at [`GPU_SIZES`], each model
/// checked on [`GPU_CHECK_TRIALS`] trials; no large sizes or thread
/// counts, which a simulated instruction has not.
pub fn scope(arch: &str, dtypes: Option<&[Format]>) -> Result<Scope> {
    let family = crate::spec::FAMILIES
        .iter()
        .find(|f| f.prefix == "mma")
        .ok_or_else(|| {
            Error::Input(
                "GPUs are simulated through Python (MMA-Sim): this fprev was built without it"
                    .into(),
            )
        })?;
    let members = family.members()?.unwrap_or_default();
    let mut chosen = instructions(arch, &members)?;
    let has: Vec<String> = chosen
        .iter()
        .filter_map(|i| Some(format!("{} ({})", i.format()?, i.a)))
        .collect();
    chosen.retain(|i| dtypes.is_none_or(|d| i.format().is_some_and(|f| d.contains(&f))));
    if chosen.is_empty() {
        return Err(Error::Input(format!(
            "{arch} has no instruction whose inputs come in the dtypes asked for: its inputs \
             come in {}",
            has.join(", ")
        )));
    }
    let mut formats: Vec<Format> = Vec::new();
    for f in chosen.iter().filter_map(Instruction::format) {
        if !formats.contains(&f) {
            formats.push(f);
        }
    }
    Ok(Scope {
        black_boxes: chosen.iter().map(Instruction::spec).collect(),
        dtypes: formats,
        sizes: GPU_SIZES.parse().expect("GPU_SIZES parses"),
        large: crate::sizes::Sizes(Vec::new()),
        threads: Vec::new(),
        gpu: Some(arch.to_string()),
        check: GPU_CHECK_TRIALS,
        ..Scope::default()
    })
}

/// What an instruction's K-chain computes, as a survey found it at one
/// size: the typed facts two GPUs are compared on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Arithmetic {
    /// The size (K) it was read at: the largest with a confirmed model.
    pub n: usize,
    /// The order's formula (`fused:9`), where one explains the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formula: Option<String>,
    /// Products a step adds to the running sum: the leaves of the last
    /// of the widest nodes (8 on Ampere, 16 on Hopper; 1 in an FMA
    /// chain).
    pub products: usize,
    /// Of a fused step: the bits it keeps below the largest term.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fused_bits: Option<u32>,
    /// The format its steps round to.
    #[serde(with = "crate::arith::format_name")]
    pub output: Format,
    /// How they round.
    pub rounding: Rounding,
    /// The factors' format whose exponents align the products, where a
    /// fused step aligns them so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aligns_factors: Option<String>,
}

/// An aspect of [`Arithmetic`] in which two instructions differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Aspect {
    /// The products a step takes.
    Products,
    /// The bits a fused step keeps.
    FusedBits,
    /// The result's format.
    Output,
    /// The rounding.
    Rounding,
    /// The alignment of the products.
    Alignment,
}

impl Arithmetic {
    /// What `entry` computes at its largest size with a tree and a model
    /// confirmed by replay; `None` where it has none (its replay never
    /// reproduced the bits, its check refuted it, or it failed).
    pub fn of(entry: &Entry) -> Option<Arithmetic> {
        if entry.check.as_ref().is_some_and(|c| !c.passed) {
            return None;
        }
        let (size, model) = entry
            .sizes
            .iter()
            .rev()
            .find_map(|s| Some((s.n, s.arithmetic.as_ref()?)))?;
        let tree = entry.tree_at(size)?;
        let node: NodeArithmetic = std::iter::once(&model.default)
            .chain(model.nodes.values())
            .find(|a| a.fused_bits.is_some())
            .copied()
            .unwrap_or(model.default);
        Some(Arithmetic {
            n: size,
            formula: entry.formula.clone(),
            products: products_a_step(&tree),
            fused_bits: node.fused_bits,
            output: node.format,
            rounding: node.rounding,
            aligns_factors: node.aligns_factors.map(|f| f.name().to_string()),
        })
    }

    /// The aspects in which `self` and `other` differ, in [`Aspect`]'s
    /// order.
    pub fn differences(&self, other: &Arithmetic) -> Vec<Aspect> {
        [
            (Aspect::Products, self.products != other.products),
            (Aspect::FusedBits, self.fused_bits != other.fused_bits),
            (Aspect::Output, self.output != other.output),
            (Aspect::Rounding, self.rounding != other.rounding),
            (
                Aspect::Alignment,
                self.aligns_factors != other.aligns_factors,
            ),
        ]
        .into_iter()
        .filter_map(|(a, differs)| differs.then_some(a))
        .collect()
    }
}

/// The leaves of the last (in post order) of `tree`'s widest nodes: the
/// products a step of a K-chain adds to the running sum.
fn products_a_step(tree: &SummationTree) -> usize {
    let widest = tree
        .post_order()
        .into_iter()
        .map(|v| tree.children(v).len())
        .max()
        .unwrap_or(0);
    tree.post_order()
        .into_iter()
        .rfind(|&v| tree.children(v).len() == widest)
        .map_or(1, |v| {
            tree.children(v)
                .iter()
                .filter(|&&c| tree.children(c).is_empty())
                .count()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_instruction_of_each_input_type_is_chosen_mma_first() {
        let members: Vec<String> = [
            "mma:hopper:m16n8k8.f32.f16.f16.f32",
            "mma:hopper:m16n8k16.f32.f16.f16.f32",
            "mma:hopper:m16n8k16.f16.f16.f16.f16",
            "mma:hopper:wgmma.m64n16k16.f32.bf16.bf16",
            "mma:hopper:wgmma.m64n8k16.f32.bf16.bf16",
            "mma:hopper:m16n8k8.f32.bf16.bf16.f32",
            "mma:hopper:wgmma.m64n8k32.f32.e4m3.e4m3",
            "mma:hopper:wgmma.m64n8k32.f32.e4m3.e5m2",
            "mma:hopper:m8n8k4.f64.f64.f64.f64",
            "mma:ampere:m16n8k16.f32.f16.f16.f32",
            "mma:rtx_blackwell:m16n8k32.kind::f8f6f4.f32.e4m3.e4m3.f32",
            "mma:rtx_blackwell:m16n8k32.f32.e4m3.e4m3.f32",
            "mma:cdna3:f32_4x4x4_16b_f16",
            "mma:cdna3:f32_16x16x16_f16",
        ]
        .map(String::from)
        .to_vec();
        let names = |arch| -> Vec<String> {
            instructions(arch, &members)
                .unwrap()
                .iter()
                .map(Instruction::spec)
                .collect()
        };
        assert_eq!(
            names("hopper"),
            [
                "mma:hopper:m16n8k16.f32.f16.f16.f32",
                "mma:hopper:m16n8k8.f32.bf16.bf16.f32",
                "mma:hopper:m8n8k4.f64.f64.f64.f64",
                "mma:hopper:wgmma.m64n8k32.f32.e4m3.e4m3",
            ]
        );
        assert_eq!(names("cdna3"), ["mma:cdna3:f32_16x16x16_f16"]);
        assert_eq!(
            names("rtx_blackwell"),
            ["mma:rtx_blackwell:m16n8k32.f32.e4m3.e4m3.f32"]
        );
        let e = instructions("pascal", &members).unwrap_err().to_string();
        assert!(e.contains("hopper") && e.contains("cdna3"), "{e}");
    }
}
