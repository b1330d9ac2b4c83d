//! MMA-Sim's instruction names, read for the one fact a spec needs before
//! the simulator is loaded: the format of the inputs an instruction takes.

use crate::format::Format;

/// The format of A of `mma:ARCH:INSTRUCTION`, where fprev has one:
/// NVIDIA's names list D, A, B (and C) after the shape and any `kind::`
/// (`m16n8k16.f32.f16.f16.f32`, `wgmma.m64n8k16.f32.bf16.bf16`,
/// `tcgen05.m64n8k16.kind::f16.f32.f16.f16`); AMD's end in A's type
/// (`f32_16x16x16_f16`, `f32_32x32x8bf16_1k`, `f32_16x16x32_fp8_fp8`).
///
/// ```
/// # use fprev::Spec;
/// # use fprev::Format;
/// let dtype = |s: &str| s.parse::<Spec>().unwrap().default_dtype();
/// assert_eq!(dtype("mma:hopper:m16n8k16.f32.f16.f16.f32"), Some(Format::F16));
/// assert_eq!(dtype("mma:hopper:wgmma.m64n8k16.f32.bf16.bf16"), Some(Format::Bf16));
/// assert_eq!(dtype("mma:cdna2:f32_32x32x8bf16_1k"), Some(Format::Bf16));
/// assert_eq!(dtype("mma:cdna3:f32_32x32x4_2b_f16"), Some(Format::F16));
/// assert_eq!(dtype("mma:ampere:m16n8k8.f32.tf32.tf32.f32"), Some(Format::Tf32));
/// assert_eq!(dtype("mma:cdna3:f32_16x16x32_fp8_fp8"), None);
/// ```
pub(super) fn input_format(instruction: &str) -> Option<Format> {
    let name = instruction
        .strip_prefix("wgmma.")
        .or_else(|| instruction.strip_prefix("tcgen05."))
        .unwrap_or(instruction);
    if name.starts_with('m') {
        let mut types = name.split('.').skip(1).filter(|t| !t.starts_with("kind::"));
        types.next()?;
        return nvidia(types.next()?);
    }
    // f32_16x16x16_f16, f32_16x16x16f16, f32_32x32x8bf16_1k,
    // f32_32x32x4_2b_f16: A's type follows the shape and any block count.
    // AMD's fp8 and bf8 are FNUZ formats, which fprev has not.
    let (_, rest) = name.split_once('_')?;
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == 'x');
    let blocks = |t: &str| {
        t.strip_suffix('b')
            .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
    };
    let a = rest.split('_').find(|t| !t.is_empty() && !blocks(t))?;
    match a {
        "f64" => Some(Format::F64),
        "f32" => Some(Format::F32),
        "xf32" => Some(Format::Tf32),
        "f16" => Some(Format::F16),
        "bf16" => Some(Format::Bf16),
        _ => None,
    }
}

fn nvidia(ty: &str) -> Option<Format> {
    match ty {
        "f64" => Some(Format::F64),
        "tf32" => Some(Format::Tf32),
        "f16" => Some(Format::F16),
        "bf16" => Some(Format::Bf16),
        "e4m3" => Some(Format::E4m3),
        "e5m2" => Some(Format::E5m2),
        _ => None,
    }
}
