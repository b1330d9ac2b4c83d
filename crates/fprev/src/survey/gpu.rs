//! Surveying a simulated GPU (`fprev survey --gpu ARCH`): one matrix
//! instruction of the architecture for each input type it has (MMA-Sim's
//! `mma:ARCH:INSTRUCTION` black boxes), and what each one's K-chain
//! computes; two architectures' surveys are matched by the instructions'
//! types ([`Instruction::kind`]), not their names, so that `compare` can
//! say what changes from one GPU to the next ([`Arithmetic`]).

use serde::Serialize;

use super::{Entry, Plan};
use crate::arith::{NodeArithmetic, Rounding};
use crate::error::{Error, Result};
use crate::format::Format;
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
/// `fp8` and `bf8` are its names of e4m3 and e5m2, `xf32` its TF32).
const INPUT_TYPES: [&str; 10] = [
    "f16", "bf16", "tf32", "xf32", "f32", "f64", "e4m3", "e5m2", "fp8", "bf8",
];

/// A matrix instruction's types, read from its name as MMA-Sim spells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// The architecture (`ampere`).
    pub arch: String,
    /// The instruction (`m16n8k16.f32.f16.f16.f32`).
    pub name: String,
    /// A's type (`f16`, `tf32`, `fp8`).
    pub a: String,
    /// B's type.
    pub b: String,
    /// D's type: the result's.
    pub d: String,
    /// The products one instruction takes (its K).
    pub k: usize,
    /// Where several exist for one type: `mma` before `wgmma` before
    /// `tcgen05`, a name without `kind::` before one with it (the name
    /// other architectures share), one block before several (AMD's
    /// `_4b`), then the largest K, the smallest M and N.
    rank: (u8, bool, bool, std::cmp::Reverse<usize>, usize, usize),
}

impl Instruction {
    /// Reads `mma:ARCH:INSTRUCTION`; `None` for another spec or a name of
    /// no shape this knows.
    pub fn parse(spec: &str) -> Option<Instruction> {
        let rest = spec.strip_prefix("mma:")?;
        let (arch, name) = rest.split_once(':')?;
        let amd = arch.starts_with("cdna");
        let (a, b, d, shape, blocks, kind) = if amd {
            // f32_32x32x8bf16_1k, f32_16x16x32_fp8_bf8, f32_4x4x4_16b_f16.
            let (d, rest) = name.split_once('_')?;
            let dims_end = rest
                .char_indices()
                .find(|&(i, c)| !(c.is_ascii_digit() || (c == 'x' && i > 0)))
                .map_or(rest.len(), |(i, _)| i);
            // The last dimension runs into a type that starts with a digit
            // nowhere: `8bf16`, `16f16` end at the first letter.
            let shape = dims(&rest[..dims_end], 'x')?;
            let mut types: Vec<&str> = rest[dims_end..]
                .split('_')
                .filter(|t| !t.is_empty() && *t != "1k")
                .collect();
            let blocks = types.first().is_some_and(|t| {
                t.strip_suffix('b')
                    .is_some_and(|c| c.parse::<usize>().is_ok())
            });
            if blocks {
                types.remove(0);
            }
            let a = *types.first()?;
            let b = types.get(1).copied().unwrap_or(a);
            (a, b, d, shape, blocks, 0)
        } else {
            let (kind, bare) = match name.split_once('.') {
                Some(("wgmma", r)) => (1, r),
                Some(("tcgen05", r)) => (2, r),
                _ => (0, name),
            };
            let mut parts = bare.split('.').filter(|p| !p.starts_with("kind::"));
            let shape = parts.next()?;
            let shape = dims(&shape.strip_prefix('m')?.replace(['n', 'k'], "x"), 'x')?;
            let (d, a, b) = (parts.next()?, parts.next()?, parts.next()?);
            (a, b, d, shape, false, kind)
        };
        Some(Instruction {
            arch: arch.to_string(),
            name: name.to_string(),
            a: a.to_string(),
            b: b.to_string(),
            d: d.to_string(),
            k: shape[2],
            rank: (
                kind,
                name.contains("kind::"),
                blocks,
                std::cmp::Reverse(shape[2]),
                shape[0],
                shape[1],
            ),
        })
    }

    /// What matches it on another architecture: its input and result
    /// types (`f16 -> f32`).
    pub fn kind(&self) -> (String, String) {
        (self.a.clone(), self.d.clone())
    }

    /// The format fprev gives its inputs in (TF32 values are f32 values
    /// whose low bits the instruction drops); `None` where fprev has none.
    pub fn format(&self) -> Option<Format> {
        match self.a.as_str() {
            "tf32" | "xf32" => Some(Format::F32),
            "fp8" => Some(Format::E4m3),
            "bf8" => Some(Format::E5m2),
            other => other.parse().ok(),
        }
    }

    /// `mma:ARCH:NAME`.
    pub fn spec(&self) -> String {
        format!("mma:{}:{}", self.arch, self.name)
    }
}

/// `AxBxC` as three numbers.
fn dims(text: &str, sep: char) -> Option<[usize; 3]> {
    let v: Vec<usize> = text
        .split(sep)
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    v.try_into().ok()
}

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
pub fn plan(arch: &str, dtypes: Option<&[Format]>) -> Result<Plan> {
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
    Ok(Plan {
        black_boxes: chosen.iter().map(Instruction::spec).collect(),
        dtypes: formats,
        sizes: GPU_SIZES.parse().expect("GPU_SIZES parses"),
        large: crate::sizes::Sizes(Vec::new()),
        threads: Vec::new(),
        gpu: Some(arch.to_string()),
        check: GPU_CHECK_TRIALS,
        ..Plan::default()
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
    fn instruction_names_are_read_for_their_types() {
        let t = |s: &str| {
            let i = Instruction::parse(s).unwrap();
            (i.a, i.b, i.d, i.k)
        };
        let f = |a: &str, b: &str, d: &str, k| (a.into(), b.into(), d.into(), k);
        assert_eq!(
            t("mma:ampere:m16n8k16.f32.f16.f16.f32"),
            f("f16", "f16", "f32", 16)
        );
        assert_eq!(
            t("mma:hopper:wgmma.m64n8k32.f32.e4m3.e5m2"),
            f("e4m3", "e5m2", "f32", 32)
        );
        assert_eq!(
            t("mma:blackwell:tcgen05.m64n8k16.kind::f16.f32.bf16.bf16"),
            f("bf16", "bf16", "f32", 16)
        );
        assert_eq!(
            t("mma:rtx_blackwell:m16n8k32.kind::f8f6f4.f16.e2m1.e3m2.f16"),
            f("e2m1", "e3m2", "f16", 32)
        );
        assert_eq!(
            t("mma:cdna2:f32_32x32x8bf16_1k"),
            f("bf16", "bf16", "f32", 8)
        );
        assert_eq!(t("mma:cdna1:f32_16x16x16f16"), f("f16", "f16", "f32", 16));
        assert_eq!(
            t("mma:cdna3:f32_16x16x32_fp8_bf8"),
            f("fp8", "bf8", "f32", 32)
        );
        assert_eq!(t("mma:cdna3:f32_4x4x4_16b_f16"), f("f16", "f16", "f32", 4));
        assert_eq!(t("mma:cdna3:f64_16x16x4_f64"), f("f64", "f64", "f64", 4));
        assert!(Instruction::parse("numpy:sum").is_none());
    }

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
