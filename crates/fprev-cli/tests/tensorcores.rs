//! GPU matrix instructions through MMA-Sim, the bit-accurate simulator
//! (`pip install mmasim`, installed by scripts/test.sh): each instruction's
//! K-chain is revealed, its tree compared with the chain MMA-Sim's
//! published parameters describe (groups of L products fused with the
//! running sum), its model with MMA-Sim's F (bits kept) and rounding, and
//! the model checked against the simulator on a thousand inputs, where
//! each nearest alternative model must fail.
#![cfg(feature = "python")]

use fprev::arith::{Arithmetic, Rounding};
use fprev::check::check_models;
use fprev::probe::ProbeOptions;
use fprev::reveal::arithmetic::{ArithOptions, reveal_arithmetic};
use fprev::{Format, Options, SummationTree, reveal};

/// An instruction and what MMA-Sim documents of it: its input format,
/// the products each fused step takes (`L_max`), the bits it keeps below
/// the largest term (`F`), and its result's format and rounding (`rho`:
/// RZ-FP32 toward zero, RNE-FP16 to nearest).
struct Instruction {
    spec: &'static str,
    format: Format,
    group: usize,
    bits: u32,
    output: Format,
    rounding: Rounding,
}

const INSTRUCTIONS: [Instruction; 13] = [
    Instruction {
        spec: "mma:volta:m8n8k4.f32.f16.f16.f32",
        format: Format::F16,
        group: 4,
        bits: 23,
        output: Format::F32,
        rounding: Rounding::TowardZero,
    },
    Instruction {
        spec: "mma:turing:m16n8k8.f32.f16.f16.f32",
        format: Format::F16,
        group: 8,
        bits: 24,
        output: Format::F32,
        rounding: Rounding::TowardZero,
    },
    Instruction {
        spec: "mma:ampere:m16n8k16.f32.bf16.bf16.f32",
        format: Format::Bf16,
        group: 8,
        bits: 24,
        output: Format::F32,
        rounding: Rounding::TowardZero,
    },
    Instruction {
        spec: "mma:ada:m16n8k16.f32.f16.f16.f32",
        format: Format::F16,
        group: 8,
        bits: 24,
        output: Format::F32,
        rounding: Rounding::TowardZero,
    },
    Instruction {
        spec: "mma:hopper:m16n8k16.f32.f16.f16.f32",
        format: Format::F16,
        group: 16,
        bits: 25,
        output: Format::F32,
        rounding: Rounding::TowardZero,
    },
    Instruction {
        spec: "mma:hopper:wgmma.m64n8k16.f32.f16.f16",
        format: Format::F16,
        group: 16,
        bits: 25,
        output: Format::F32,
        rounding: Rounding::TowardZero,
    },
    Instruction {
        spec: "mma:blackwell:m16n8k16.f32.bf16.bf16.f32",
        format: Format::Bf16,
        group: 16,
        bits: 25,
        output: Format::F32,
        rounding: Rounding::TowardZero,
    },
    // TF32 inputs (f32 values the instruction truncates to 11 bits) are
    // given as TF32 values, which the truncation keeps.
    Instruction {
        spec: "mma:ampere:m16n8k8.f32.tf32.tf32.f32",
        format: Format::Tf32,
        group: 4,
        bits: 24,
        output: Format::F32,
        rounding: Rounding::TowardZero,
    },
    Instruction {
        spec: "mma:ampere:m16n8k16.f16.f16.f16.f16",
        format: Format::F16,
        group: 8,
        bits: 24,
        output: Format::F16,
        rounding: Rounding::NearestEven,
    },
    // fp8 inputs, masked as products of two operands: Hopper keeps 13 bits
    // and truncates its f32 result to E8M13; Blackwell's tcgen05 keeps
    // 25, as for f16; an f16 result rounds to nearest. A and B may differ
    // (the model aligns at A's format's exponents).
    Instruction {
        spec: "mma:hopper:wgmma.m64n8k32.f32.e4m3.e4m3",
        format: Format::E4m3,
        group: 32,
        bits: 13,
        output: Format::E8m13,
        rounding: Rounding::TowardZero,
    },
    Instruction {
        spec: "mma:hopper:wgmma.m64n8k32.f32.e5m2.e4m3",
        format: Format::E5m2,
        group: 32,
        bits: 13,
        output: Format::E8m13,
        rounding: Rounding::TowardZero,
    },
    Instruction {
        spec: "mma:blackwell:tcgen05.m64n8k32.kind::f8f6f4.f32.e4m3.e4m3",
        format: Format::E4m3,
        group: 32,
        bits: 25,
        output: Format::F32,
        rounding: Rounding::TowardZero,
    },
    Instruction {
        spec: "mma:rtx_blackwell:m16n8k32.f16.e4m3.e4m3.f16",
        format: Format::E4m3,
        group: 32,
        bits: 25,
        output: Format::F16,
        rounding: Rounding::NearestEven,
    },
];

fn mmasim_importable() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import mmasim"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The K-chain of `n` products in groups of `group`, written out: the
/// first group fused alone (the instruction's C is 0), each later one
/// fused with the running sum.
fn chain(n: usize, group: usize) -> SummationTree {
    let mut text = String::new();
    for start in (0..n).step_by(group) {
        let members: Vec<String> = (start..(start + group).min(n))
            .map(|i| i.to_string())
            .collect();
        text = match start {
            0 if members.len() == 1 => members[0].clone(),
            0 => format!("({})", members.join("+")),
            _ => format!("({text}+{})", members.join("+")),
        };
    }
    text.parse().expect("a chain")
}

/// `model` with every fused node changed by `change`.
fn changed(model: &Arithmetic, change: impl Fn(&mut fprev::arith::NodeArithmetic)) -> Arithmetic {
    let mut m = model.clone();
    for a in std::iter::once(&mut m.default).chain(m.nodes.values_mut()) {
        if a.fused_bits.is_some() {
            change(a);
        }
    }
    m
}

#[test]
fn each_architectures_chain_is_revealed_modelled_and_checked_against_the_simulator() {
    assert!(
        mmasim_importable(),
        "MMA-Sim is not importable: scripts/test.sh installs it (python3 -m pip install mmasim)"
    );
    for ins in &INSTRUCTIONS {
        // A chain of several instructions, the last part-filled; and one
        // whose last step takes a single product.
        for n in [4 * ins.group + 3, 2 * ins.group + 1] {
            let what = format!("{} n = {n}", ins.spec);
            let opts = ProbeOptions {
                n: Some(n),
                format: ins.format,
                ..Default::default()
            };
            let mut bb = fprev::open(ins.spec, &opts).unwrap_or_else(|e| panic!("{what}: {e}"));
            let tree = reveal(&mut bb, &Options::default())
                .unwrap_or_else(|e| panic!("{what}: {e}"))
                .revealed()
                .expect("an order")
                .tree;
            assert_eq!(
                tree.to_string(),
                chain(n, ins.group).to_string(),
                "{what}: not the chain of {}-product groups",
                ins.group
            );
            let found = reveal_arithmetic(&mut bb, &tree, &ArithOptions::default())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let model = found.model;
            let fused = std::iter::once(&model.default)
                .chain(model.nodes.values())
                .filter(|a| a.fused_bits.is_some());
            for a in fused {
                assert_eq!(a.format, ins.output, "{what}: {model}");
                assert_eq!(a.rounding, ins.rounding, "{what}: {model}");
                assert_eq!(a.fused_bits, Some(ins.bits), "{what}: {model}");
                assert_eq!(a.aligns_factors, Some(ins.format), "{what}: {model}");
            }
            // The nearest alternatives, then the model, against the
            // simulator: the first standing after every trial must be the
            // model, so none of them stood. A window one bit wider or
            // narrower, or aligned at the products' own leading bits, shows
            // in an f32 result; an f16 result's 11 bits hide both from most
            // random products (the masks found the window; about one input
            // in 400 tells the alignment).
            let mut models = vec![changed(&model, |a| {
                a.rounding = match ins.rounding {
                    Rounding::NearestEven => Rounding::TowardZero,
                    _ => Rounding::NearestEven,
                }
            })];
            if ins.output == Format::E8m13 {
                models.push(changed(&model, |a| a.format = Format::F32));
            }
            if ins.output != Format::F16 {
                models.push(changed(&model, |a| a.aligns_factors = None));
                models.push(changed(&model, |a| a.fused_bits = Some(ins.bits - 1)));
                models.push(changed(&model, |a| a.fused_bits = Some(ins.bits + 1)));
            }
            // Random fp8 values are too short to round at all: the reveal's
            // confirmation must tell the model from each alternative with
            // products spread over the window (its own inputs, built for
            // each alternative).
            if ins.format.precision() < 8 {
                told_apart_by_reveal(ins.spec, n, &models);
                continue;
            }
            models.push(model.clone());
            let (report, first) = check_models(&tree, &models, &mut bb, 1000, 5, 0).unwrap();
            assert_eq!(
                first,
                Some(models.len() - 1),
                "{what}: after {} trials the first model standing is {first:?} of {}: {:?}",
                report.trials,
                models
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(" | "),
                report.mismatch
            );
        }
    }
}

/// At n = 256, sixteen fused steps of 13 bits carry often enough that the
/// confirmation's wide-range trials tell an E8M13 result from an f32 one
/// before the products are asked: the E8M13 model must stand among the
/// root's alternatives there, as it does among the products' ones.
#[test]
fn adas_fp8_chain_of_sixteen_steps_is_confirmed_as_e8m13() {
    let spec = "mma:ada:m16n8k32.f32.e4m3.e4m3.f32";
    let opts = ProbeOptions {
        n: Some(256),
        format: Format::E4m3,
        ..Default::default()
    };
    let mut bb = fprev::open(spec, &opts).expect("MMA-Sim's Ada");
    let tree = chain(256, 16);
    let model = reveal_arithmetic(&mut bb, &tree, &ArithOptions::default())
        .unwrap_or_else(|e| panic!("{spec} n = 256: {e}"))
        .model;
    let fused: Vec<_> = std::iter::once(&model.default)
        .chain(model.nodes.values())
        .filter(|a| a.fused_bits.is_some())
        .collect();
    assert!(!fused.is_empty(), "{model}");
    for a in fused {
        assert_eq!(
            (a.format, a.rounding, a.fused_bits),
            (Format::E8m13, Rounding::TowardZero, Some(13)),
            "{model}"
        );
    }
    told_apart_by_reveal(spec, 256, &[changed(&model, |a| a.format = Format::F32)]);
}

/// `fprev reveal SPEC -n N` confirms its model and names each of
/// `alternatives` among those its inputs told it from.
fn told_apart_by_reveal(spec: &str, n: usize, alternatives: &[Arithmetic]) {
    let dir = tempfile::TempDir::new().unwrap();
    let file = dir.path().join("t.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fprev"))
        .args(["reveal", spec, "-n", &n.to_string(), "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{spec} n = {n}: {out:?}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let told = &doc["confirmation"]["distinguished_from"];
    for alternative in alternatives {
        let name = alternative.to_string();
        assert!(
            told.as_array().unwrap().iter().any(|t| *t == name),
            "{spec} n = {n}: not told from {name}: {told}"
        );
    }
}

#[test]
fn a_wrong_instruction_or_format_is_refused_with_what_to_use() {
    if !mmasim_importable() {
        panic!("MMA-Sim is not importable: scripts/test.sh installs it");
    }
    let opts = |format| ProbeOptions {
        n: Some(16),
        format,
        ..Default::default()
    };
    let err = |spec: &str, format| match fprev::open(spec, &opts(format)) {
        Ok(_) => panic!("{spec} opened"),
        Err(e) => e.to_string(),
    };
    let e = err("mma:hopper:m16n8k17.f32.f16.f16.f32", Format::F16);
    assert!(e.contains("m16n8k16.f32.f16.f16.f32"), "{e}");
    let e = err("mma:hopper:m16n8k16.f32.f16.f16.f32", Format::F32);
    assert!(e.contains("input format f16"), "{e}");
    let e = err("mma:pascal:m16n8k16.f32.f16.f16.f32", Format::F16);
    assert!(e.contains("hopper") && e.contains("cdna3"), "{e}");
}

#[test]
fn fprev_probes_mma_lists_every_instruction_the_simulator_offers() {
    use assert_cmd::cargo::CommandCargoExt;
    assert!(mmasim_importable(), "MMA-Sim is not importable");
    let out = std::process::Command::cargo_bin("fprev")
        .unwrap()
        .args(["probes", "mma"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    // MMA-Sim's own tables, read here independently of fprev's adapter.
    let expected = std::process::Command::new("python3")
        .args([
            "-c",
            "from mmasim.nv_ptx import isa_mma, isa_wgmma\n\
             from mmasim.amd import isa_mfma\n\
             print(sum(map(len, isa_mma.mma_shape_and_type.values())) + \
             sum(map(len, isa_wgmma.wgmma_shape_and_type.values())))\n\
             print(len(isa_mfma.cdna3_mfma_suffix))",
        ])
        .output()
        .unwrap();
    let counts: Vec<usize> = String::from_utf8(expected.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let nvidia_mma_wgmma = listed
        .iter()
        .filter(|s| !s.contains(":cdna") && !s.contains("tcgen05."))
        .count();
    assert_eq!(nvidia_mma_wgmma, counts[0]);
    assert_eq!(
        listed
            .iter()
            .filter(|s| s.starts_with("mma:cdna3:"))
            .count(),
        counts[1]
    );
    for spec in &listed {
        assert!(spec.starts_with("mma:"), "{spec}");
    }
    // Each listed spec opens, or says why not (a sample: every 97th).
    for spec in listed.iter().step_by(97) {
        let opts = ProbeOptions {
            n: Some(8),
            format: Format::F16,
            ..Default::default()
        };
        if let Err(e) = fprev::open(spec, &opts) {
            let e = e.to_string();
            assert!(
                e.contains("input format") || e.contains("no format") || e.contains("types agree"),
                "{spec}: {e}"
            );
        }
    }
}

/// CDNA1 sums each group of four products exactly and rounds once, then
/// chains the groups: within a group every order gives the same bits, and
/// random f16 sums seldom round in its f32 at all, so it was called
/// order-independent (exit 4, "no summation tree describes it"). A `big`
/// formed as a product, its negation and a 1 in three far-apart groups
/// show the order matters; the reveal says it cannot model it instead.
#[test]
fn a_chain_of_exact_groups_is_not_called_order_independent() {
    use assert_cmd::cargo::CommandCargoExt;
    assert!(mmasim_importable(), "MMA-Sim is not importable");
    let out = std::process::Command::cargo_bin("fprev")
        .unwrap()
        .args([
            "reveal",
            "mma:cdna1:f32_16x16x16f16",
            "--dtype",
            "f16",
            "-n",
            "64",
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("order-independent"), "{said}");
    assert_ne!(out.status.code(), Some(0), "{said}");
    assert_ne!(out.status.code(), Some(4), "{said}");
}

/// Without --dtype, an instruction is given its own input format (a
/// user of `fprev reveal mma:…` is not asked to spell it twice), and the
/// simulator's own array is not said to sit at an offset.
#[test]
fn an_instruction_takes_its_own_input_format_by_default() {
    use assert_cmd::cargo::CommandCargoExt;
    assert!(mmasim_importable(), "MMA-Sim is not importable");
    for (spec, dtype) in [
        ("mma:turing:m16n8k8.f32.f16.f16.f32", "f16"),
        ("mma:ampere:m16n8k8.f32.tf32.tf32.f32", "tf32"),
    ] {
        let out = std::process::Command::cargo_bin("fprev")
            .unwrap()
            .args(["reveal", spec, "-n", "11"])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{spec}: {said}{err}");
        assert!(
            said.contains(&format!("n = 11, {dtype}:")),
            "{spec}: {said}"
        );
        assert!(said.contains("# confirmed"), "{spec}: {said}");
        assert!(!err.contains("offset"), "{spec}: {err}");
    }
}

/// `fprev emit` writes a tensor core's K-loop as code that runs on a CPU,
/// checked bit for bit against the simulator: Hopper's f16 chain (f32
/// toward zero) in C, Ampere's f16-output chain (f16 to nearest) in
/// Python. It refused both (exit 2): emitted code made IEEE additions.
#[test]
fn emitted_code_of_a_tensor_cores_chain_passes_its_check_against_the_simulator() {
    assert!(mmasim_importable(), "MMA-Sim is not importable");
    let dir = tempfile::TempDir::new().unwrap();
    for (spec, formula, lang, ext) in [
        // The formula as fprev prints it, or bare.
        (
            "mma:hopper:m16n8k16.f32.f16.f16.f32",
            "native:fused:17",
            "c",
            "c",
        ),
        (
            "mma:ampere:m16n8k16.f16.f16.f16.f16",
            "fused:9",
            "python",
            "py",
        ),
    ] {
        let file = dir.path().join(format!("chain.{ext}"));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_fprev"))
            .args([
                "emit",
                spec,
                "--dtype",
                "f16",
                "--formula",
                formula,
                "--lang",
                lang,
            ])
            .args(["--check", "--check-sizes", "1..40,256", "-o"])
            .arg(&file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{spec} in {lang}: {err}");
        assert!(err.contains("bit for bit"), "{spec} in {lang}: {err}");
        let source = std::fs::read_to_string(&file).unwrap();
        assert!(
            source.contains("Checked: compiled and run against"),
            "{source}"
        );
    }
}

/// The check can fail: code written from a window one bit narrower, or
/// rounding to nearest where Hopper truncates, differs from the simulator
/// (`fprev emit --check` then writes nothing and exits 1), and the
/// revealed model's code does not.
#[test]
fn emitted_code_with_a_wrong_window_or_rounding_fails_its_check_against_the_simulator() {
    use fprev::arith::{NodeArithmetic, Products};
    use fprev::emit::Language;
    assert!(mmasim_importable(), "MMA-Sim is not importable");
    let spec = "mma:hopper:m16n8k16.f32.f16.f16.f32";
    let formula: fprev::formula::Formula = "fused:17".parse().unwrap();
    let right = NodeArithmetic {
        rounding: Rounding::TowardZero,
        fused_bits: Some(25),
        aligns_factors: Some(Format::F16),
        ..NodeArithmetic::ieee(Format::F32)
    };
    let wrong_bits = NodeArithmetic {
        fused_bits: Some(24),
        ..right
    };
    let wrong_rounding = NodeArithmetic {
        rounding: Rounding::NearestEven,
        ..right
    };
    let sizes: Vec<usize> = (1..=40).collect();
    for (node, fails) in [(wrong_bits, true), (wrong_rounding, true), (right, false)] {
        let mut model = Arithmetic::uniform(node);
        model.products = Some(Products::from_leaves(&[]));
        let plan = (&formula, Format::F16, Format::F32, formula.tree(49), model);
        let languages = [Language::C, Language::Python];
        emitted_and_checked(spec, plan, &languages, &sizes, fails, &node.to_string());
    }
}

/// Emits the chain `formula` gives (its tree at one size and its model,
/// inputs and result in the formats given) as a dot product in each of
/// `languages`, checks the code against `spec`'s simulator at `sizes`, and
/// asserts that the check `fails` or not.
fn emitted_and_checked(
    spec: &str,
    (formula, inputs, result, tree, model): (
        &fprev::formula::Formula,
        Format,
        Format,
        SummationTree,
        Arithmetic,
    ),
    languages: &[fprev::emit::Language],
    sizes: &[usize],
    fails: bool,
    what: &str,
) {
    use fprev::emit::{self, Op, Plan};
    let plan = Plan::with_result(formula, inputs, result, Op::Dot, &[(tree, model)]).unwrap();
    for &language in languages {
        let source = emit::source(&plan, language, "chain", spec).unwrap();
        let checked = fprev::workflow::emit::check(
            &source,
            language,
            "chain",
            &plan,
            &mut |o| fprev::open(spec, o),
            sizes,
            3,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(
            checked.mismatch.is_some(),
            fails,
            "{what} in {language}: {:?}",
            checked.difference(language, spec)
        );
    }
}

/// Hopper's f64 mma, an FMA chain from C = 0, written as `fma` in C and
/// `mul_add` in Rust, gives the simulator's bits; the same chain with
/// each product rounded first (plain f64 additions) does not.
#[test]
fn hoppers_f64_chain_emitted_as_fused_multiply_adds_passes_its_check() {
    use fprev::arith::{NodeArithmetic, Product, Products};
    use fprev::emit::Language;
    assert!(mmasim_importable(), "MMA-Sim is not importable");
    let spec = "mma:hopper:m8n8k4.f64.f64.f64.f64";
    let formula: fprev::formula::Formula = "sequential".parse().unwrap();
    let sizes: Vec<usize> = (1..=20).chain([64]).collect();
    for (default, fails) in [
        (Product::Exact, false),
        (Product::Rounded(Format::F64), true),
    ] {
        let mut leaves = vec![default; 64];
        leaves[0] = Product::Rounded(Format::F64);
        let mut model = Arithmetic::uniform(NodeArithmetic::ieee(Format::F64));
        model.products = Some(Products::from_leaves(&leaves));
        let plan = (&formula, Format::F64, Format::F64, formula.tree(64), model);
        let languages = [Language::C, Language::Rust];
        let what = format!("products {default}");
        emitted_and_checked(spec, plan, &languages, &sizes, fails, &what);
    }
}

/// A user's dot product that forms products of fp8 operands exactly and
/// adds them left to right in f32: e4m3 values alone cannot mask an f32
/// sum (refused, exit 2), their products can (`FUNC.operands`), and the
/// order revealed is the loop's.
#[test]
fn fp8_products_mask_a_users_dot_product_that_declares_its_operands() {
    let dir = tempfile::TempDir::new().unwrap();
    let source = |operands: &str| {
        format!(
            "import numpy as np\n\ndef dot(x, y):\n    s = np.float32(0)\n    \
             for a, b in zip(x, y):\n        s = np.float32(s + np.float32(a * b))\n    \
             return float(s)\n\n{operands}\n"
        )
    };
    let run = |file: &str, text: String| {
        let path = dir.path().join(file);
        std::fs::write(&path, text).unwrap();
        std::process::Command::new(env!("CARGO_BIN_EXE_fprev"))
            .args(["reveal", &format!("python:{}:dot", path.display())])
            .args(["-n", "40", "--dtype", "e4m3", "--acc", "f32", "--no-arith"])
            .output()
            .unwrap()
    };
    let refused = run("plain.py", source(""));
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let out = run("operands.py", source("dot.operands = (\"e4m3\", \"e4m3\")"));
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let sequential = fprev::Order::Sequential.tree(40).to_string();
    assert_eq!(text.lines().next(), Some(sequential.as_str()), "{text}");
}

/// AMD CDNA2's bf16 multiply-adds flush subnormal inputs, products and
/// sums to zero (MMA-Sim's FTZ multiply-add in fours). Its order reveals
/// and random inputs replay it as plain f32 additions of exact products,
/// which was printed as confirmed; the confirmation's last input, three
/// subnormal bf16 values, refutes it: NOT CONFIRMED, exit 5, saying why.
#[test]
fn a_flush_to_zero_instruction_is_not_confirmed_as_plain_additions() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fprev"))
        .args(["reveal", "mma:cdna2:f32_32x32x8bf16_1k", "-n", "24"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    let said = String::from_utf8(out.stderr).unwrap();
    assert!(said.contains("(subnormal values)"), "{said}");
    assert!(said.contains("flushes subnormal values"), "{said}");
}
