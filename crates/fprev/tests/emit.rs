//! Emitted C, compiled and run: it gives the bits of the formula's own
//! replay and of the plan it was written from, at every size tried.

mod common;

use fprev::Format;
use fprev::arith::{NodeArithmetic, Product};
use fprev::emit::{self, Language, Op, Plan, check};
use fprev::formula::Formula;
use fprev::probe::ProbeOptions;

fn formula(s: &str) -> Formula {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// Emits `f` as a sum in `format`, builds it, and compares it with
/// `native:f` (the formula's replay in that format) at `sizes`.
fn sum_matches_replay(f: &str, format: Format, language: Language, sizes: &[usize]) {
    let plan = Plan::uniform(
        &formula(f),
        format,
        Op::Sum,
        NodeArithmetic::ieee(format),
        Product::Exact,
    )
    .unwrap_or_else(|e| panic!("{f}: {e}"));
    let source = emit::source(&plan, language, "summed", f).unwrap();
    let dir = check::Scratch::new().unwrap();
    let spec = check::build(&source, language, "summed", Op::Sum, &dir.0)
        .unwrap_or_else(|e| panic!("{f}: {e}\n{source}"));
    let opts = ProbeOptions {
        format,
        ..Default::default()
    };
    let native = format!("native:{f}");
    let got = check::compare(
        &mut |o| fprev::open(&native, o),
        &spec,
        &opts,
        Op::Sum,
        sizes,
        3,
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(got.mismatch, None, "{f} in {format} ({language})");
    assert_eq!(got.sizes, sizes);
}

#[test]
fn numpy_s_sum_emitted_in_c_is_its_formula_at_every_size() {
    let sizes: Vec<usize> = (1..=300).chain([1000, 4097, 1 << 17]).collect();
    let numpy = "halves(128, 8, body(8, interleave(8, sequential, pairwise), then))";
    sum_matches_replay(numpy, Format::F32, Language::C, &sizes);
    sum_matches_replay(numpy, Format::F64, Language::Cuda, &sizes);
}

/// Every part of the language, emitted, against its own replay.
#[test]
fn every_part_emitted_in_c_is_its_formula() {
    let sizes: Vec<usize> = (1..=130).chain([257, 1000, 5000]).collect();
    for f in [
        "sequential",
        "reverse",
        "pairwise",
        "binary-tree",
        "strided:4",
        "blocked:5",
        "interleave(4, sequential, pairwise)",
        "interleave(3, pairwise, reverse)",
        "blocks(7, pairwise, sequential)",
        "body(8, interleave(8, sequential, pairwise), then)",
        "body(4, pairwise, reverse)",
        "halves(16, 4, sequential)",
        "bisect(1, sequential)",
        "lead(128, halves(128, 128, interleave(16, sequential, fold)), sequential)",
        "lead(5, pairwise, reverse)",
        "bisect(3, interleave(4, sequential, pairwise))",
        "below(10, reverse, pairwise)",
        "windows(4, sequential)",
        "split(5, sequential, doubling)",
        "split(6, pairwise, fanout(2))",
        "doubling",
        "fold",
        "fanout(3)",
        "rotate(3, sequential)",
        "split(4, sequential, rotate(2, sequential))",
        "pieces(16, 4, pairwise)",
        "interleave(2, body(4, sequential, pieces(2, sequential)), sequential)",
        "kblocks(8, 4, sequential)",
        "kblocks(8, pairwise)",
        "below(4096, windows(32, sequential), blocks(32768, interleave(16, body(64, blocks(64, \
         windows(4, sequential), sequential), pieces(16, 4, windows(4, sequential))), fold), fold))",
        "body(32, interleave(32, sequential, interleave(4, pairwise, pairwise)), sequential)",
    ]
    .into_iter()
    .chain(common::SEEDED)
    {
        sum_matches_replay(f, Format::F32, Language::C, &sizes);
    }
}

/// A different order's replay tells the emitted code apart: the check can
/// fail.
#[test]
fn emitted_code_differs_from_another_order() {
    let plan = Plan::uniform(
        &formula("pairwise"),
        Format::F32,
        Op::Sum,
        NodeArithmetic::ieee(Format::F32),
        Product::Exact,
    )
    .unwrap();
    let source = emit::source(&plan, Language::C, "pw", "pairwise").unwrap();
    let dir = check::Scratch::new().unwrap();
    let spec = check::build(&source, Language::C, "pw", Op::Sum, &dir.0).unwrap();
    let opts = ProbeOptions {
        format: Format::F32,
        ..Default::default()
    };
    let got = check::compare(
        &mut |o| fprev::open("native:sequential", o),
        &spec,
        &opts,
        Op::Sum,
        &[1, 2, 3, 50],
        3,
        &mut |_, _| {},
    )
    .unwrap();
    let (n, ..) = got.mismatch.expect("pairwise is not left to right");
    assert_eq!(n, 3);
    assert_eq!(got.sizes, [1, 2]);
}

/// Every kernel of [`common::KERNELS`] at every size to 300 and a few
/// larger, past each stage's chunk and a fold of many slots.
#[test]
fn vectorised_kernels_emitted_in_c_and_cuda_are_their_formulas() {
    let sizes: Vec<usize> = (1..=300).chain([1000, 4099, 65539]).collect();
    for f in common::KERNELS {
        sum_matches_replay(f, Format::F32, Language::C, &sizes);
        sum_matches_replay(f, Format::F64, Language::Cuda, &sizes);
    }
}

/// A kernel's fold is written out addition by addition: past 4,096 lane
/// slots it is refused, saying why.
#[test]
fn a_kernel_folding_too_many_slots_is_refused() {
    let f = "simd(64, 128, pairwise, then)";
    let plan = Plan::uniform(
        &formula(f),
        Format::F32,
        Op::Sum,
        NodeArithmetic::ieee(Format::F32),
        Product::Exact,
    )
    .unwrap();
    for language in [Language::C, Language::Rust, Language::Python] {
        let e = emit::source(&plan, language, "wide", f)
            .unwrap_err()
            .to_string();
        assert!(e.contains("folds 8192 lane slots"), "{e}");
        assert!(e.contains("at most 4096"), "{e}");
    }
}
