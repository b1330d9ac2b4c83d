//! MMA-Sim's instruction names, read for what a spec needs before the
//! simulator is loaded: the types an instruction takes and returns, and its
//! K. Surveys of simulated GPUs match instructions across architectures by
//! them.

use crate::format::Format;

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
    pub(crate) rank: (u8, bool, bool, std::cmp::Reverse<usize>, usize, usize),
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

    /// The format fprev gives its inputs in (`xf32` is AMD's TF32);
    /// `None` where fprev has none. AMD's `fp8` and `bf8`, the FNUZ
    /// variants of e4m3 and e5m2 (another bias, no negative zero), stand
    /// under those, so that a survey holds them once, where the probe
    /// says it cannot give them.
    pub fn format(&self) -> Option<Format> {
        match self.a.as_str() {
            "tf32" | "xf32" => Some(Format::Tf32),
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
    fn an_instruction_takes_its_own_input_format_by_default() {
        let dtype = |s: &str| s.parse::<crate::Spec>().unwrap().default_dtype();
        assert_eq!(
            dtype("mma:hopper:m16n8k16.f32.f16.f16.f32"),
            Some(Format::F16)
        );
        assert_eq!(
            dtype("mma:hopper:wgmma.m64n8k16.f32.bf16.bf16"),
            Some(Format::Bf16)
        );
        assert_eq!(dtype("mma:cdna2:f32_32x32x8bf16_1k"), Some(Format::Bf16));
        assert_eq!(dtype("mma:cdna3:f32_32x32x4_2b_f16"), Some(Format::F16));
        assert_eq!(
            dtype("mma:ampere:m16n8k8.f32.tf32.tf32.f32"),
            Some(Format::Tf32)
        );
        assert_eq!(dtype("mma:cdna3:f32_16x16x8_xf32"), Some(Format::Tf32));
        assert_eq!(dtype("numpy:sum"), None);
    }
}
