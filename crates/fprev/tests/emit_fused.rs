//! Emitted fused chains (a tensor core's K-loop), compiled and run: on
//! random inputs and on the edges of the window (cancellations, products
//! straddling its last bit, zeros, subnormal factors, overflow) they give
//! the bits of the model's own replay, in every language.

use fprev::Format;
use fprev::arith::{Arithmetic, NodeArithmetic, Product, Products, Rounding};
use fprev::emit::{self, Language, Op, Plan, check};
use fprev::formula::Formula;
use fprev::probe::ProbeOptions;
use fprev::reduce::Replay;

/// A tensor core's arithmetic, as fprev reveals it.
struct Core {
    group: usize,
    element: Format,
    output: Format,
    rounding: Rounding,
    bits: u32,
}

const CORES: [Core; 3] = [
    // Hopper's f16 mma: 16 products a step, f32 toward zero.
    Core {
        group: 17,
        element: Format::F16,
        output: Format::F32,
        rounding: Rounding::TowardZero,
        bits: 25,
    },
    // Ampere's bf16 mma.
    Core {
        group: 9,
        element: Format::Bf16,
        output: Format::F32,
        rounding: Rounding::TowardZero,
        bits: 24,
    },
    // Ampere's f16-output mma: to nearest f16.
    Core {
        group: 9,
        element: Format::F16,
        output: Format::F16,
        rounding: Rounding::NearestEven,
        bits: 24,
    },
];

impl Core {
    fn formula(&self) -> Formula {
        format!("fused:{}", self.group).parse().unwrap()
    }

    fn model(&self) -> Arithmetic {
        let mut model = Arithmetic::uniform(NodeArithmetic {
            rounding: self.rounding,
            fused_bits: Some(self.bits),
            aligns_factors: Some(self.element),
            ..NodeArithmetic::ieee(self.output)
        });
        model.products = Some(Products::from_leaves(&[]));
        model
    }

    fn plan(&self) -> Plan {
        let f = self.formula();
        let tree = f.tree(3 * (self.group - 1) + 1);
        Plan::with_result(
            &f,
            self.element,
            self.output,
            Op::Dot,
            &[(tree, self.model())],
        )
        .unwrap_or_else(|e| panic!("fused:{}: {e}", self.group))
    }
}

/// Pseudo-random words (a 64-bit LCG).
struct Words(u64);

impl Words {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }

    /// A value of `f` of either sign with its exponent within `range` of 0.
    fn value(&mut self, f: Format, range: i32) -> f64 {
        let m = 1.0 + (self.next() % 1024) as f64 / 1024.0;
        let e = (self.next() % (2 * range as u64 + 1)) as i32 - range;
        let sign = if self.next().is_multiple_of(2) {
            1.0
        } else {
            -1.0
        };
        f.round(sign * m * 2f64.powi(e))
    }
}

/// Inputs at `n` that a window's edges decide: pattern `kind` of several.
fn edge(core: &Core, n: usize, kind: usize, w: &mut Words) -> (Vec<f64>, Vec<f64>) {
    let f = core.element;
    let mut x: Vec<f64> = (0..n).map(|_| w.value(f, 6)).collect();
    let mut y: Vec<f64> = (0..n).map(|_| w.value(f, 6)).collect();
    match kind {
        // Products that cancel in pairs, leaving small ones below them.
        0 => {
            for i in (1..n).step_by(2) {
                x[i] = -x[i - 1];
                y[i] = y[i - 1];
            }
        }
        // Products straddling the window's last bit under a large one.
        1 => {
            let big = f.round(2f64.powi(10));
            x[0] = big;
            y[0] = big;
            for (i, v) in x.iter_mut().enumerate().skip(1) {
                let below = core.bits as i32 - 20 + (i % 5) as i32 - 2;
                *v = f.round(1.5 * 2f64.powi(-below));
            }
        }
        // Zeros of both signs, and an all-zero group.
        2 => {
            for i in (0..n).filter(|i| i % 3 != 1) {
                x[i] = if i % 2 == 0 { 0.0 } else { -0.0 };
            }
        }
        // Subnormal factors (f16's least exponent is -14).
        3 => {
            for (i, v) in x.iter_mut().enumerate() {
                *v = f.round(f.min_normal() * (1 + i % 7) as f64 / 8.0);
            }
        }
        // Products past the output's range: bf16's reach f32's.
        4 => {
            x.fill(f.max_finite());
            y.fill(f.round(f.max_finite() / (1 + n % 3) as f64));
        }
        _ => {}
    }
    (x, y)
}

/// Emits `core`'s chain in `language`, runs it at sizes up to five
/// groups on random and edge inputs, and compares it bit for bit with the
/// model's replay and with the plan's own evaluation.
fn matches_its_model(core: &Core, language: Language) {
    let plan = core.plan();
    let name = "chain";
    let source = emit::source(&plan, language, name, "a tensor core's chain").unwrap();
    let dir = check::Scratch::new().unwrap();
    let emitted = check::build_plan(&source, language, name, &plan, &dir.0)
        .unwrap_or_else(|e| panic!("{e}\n{source}"));
    let formula = core.formula();
    let g = core.group - 1;
    let mut w = Words(core.group as u64);
    let sizes: Vec<usize> = (1..=2 * g + 2).chain([4 * g + 1, 100]).collect();
    for n in sizes {
        let replay =
            Replay::with_arithmetic(&formula.tree(n), &core.model()).returning(core.output);
        let opts = ProbeOptions {
            n: Some(n),
            format: emitted.format,
            ..Default::default()
        };
        let mut ours = fprev::open(&emitted.spec, &opts).unwrap();
        for trial in 0..12 {
            let (x, y) = match trial {
                0..=4 => edge(core, n, trial, &mut w),
                _ => {
                    let x = (0..n).map(|_| w.value(core.element, 12)).collect();
                    let y = (0..n).map(|_| w.value(core.element, 12)).collect();
                    (x, y)
                }
            };
            let want = replay.dot(&x, &y);
            assert_eq!(
                plan.evaluate(&x, &y).to_bits(),
                want.to_bits(),
                "the plan at n = {n}, trial {trial}"
            );
            let mut out = [0.0];
            ours.as_dot().unwrap().dot(&x, &y, &mut out).unwrap();
            assert!(
                out[0].to_bits() == want.to_bits() || (out[0].is_nan() && want.is_nan()),
                "{language} fused:{} at n = {n}, trial {trial}: the model gives {want:e}, the \
                 code {:e}\nx = {x:?}\ny = {y:?}",
                core.group,
                out[0]
            );
        }
    }
}

#[test]
fn emitted_fused_chains_in_c_give_the_models_bits() {
    for core in &CORES {
        matches_its_model(core, Language::C);
    }
}

#[test]
fn emitted_fused_chains_in_cuda_c_rust_and_python_give_the_models_bits() {
    for core in &CORES {
        for language in [Language::Cuda, Language::Rust, Language::Python] {
            matches_its_model(core, language);
        }
    }
}

#[test]
fn fused_nodes_outside_one_chain_are_refused_saying_why() {
    let core = &CORES[0];
    let model = core.model();
    for f in ["blocks(64, fused:17, sequential)", "fused:17"] {
        let f: Formula = f.parse().unwrap();
        let tree = f.tree(100);
        let got = Plan::with_result(
            &f,
            Format::F16,
            Format::F32,
            Op::Dot,
            &[(tree, model.clone())],
        );
        if f.to_string() == "fused:17" {
            assert!(got.is_ok(), "{f}: {got:?}");
            continue;
        }
        let err = got.unwrap_err().to_string();
        assert!(err.contains("only as one chain fused:K"), "{f}: {err}");
    }
    // f16 values outside a fused chain.
    let f: Formula = "sequential".parse().unwrap();
    let err = Plan::new(
        &f,
        Format::F16,
        Op::Sum,
        &[(
            f.tree(10),
            Arithmetic::uniform(NodeArithmetic::ieee(Format::F32)),
        )],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("f32 or f64"), "{err}");
    // A window wider than a 64-bit integer sum holds.
    let mut wide = model.clone();
    wide.default.fused_bits = Some(60);
    let f = core.formula();
    let err = Plan::with_result(&f, Format::F16, Format::F32, Op::Dot, &[(f.tree(49), wide)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("64-bit integer"), "{err}");
    // Products rounded before the window.
    let mut rounded = model;
    rounded.products = Some(Products::from_leaves(&[Product::Rounded(Format::F16); 49]));
    let err = Plan::with_result(
        &f,
        Format::F16,
        Format::F32,
        Op::Dot,
        &[(f.tree(49), rounded)],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("rounded to f16"), "{err}");
}

/// 1.5 * 1.5 aligns at 2^0 (its factors'), not at its leading bit 2^1: a
/// window of 4 bits keeps 1.5 * 2^-4 in part (2^-4), where aligned at the
/// product it keeps none. The replay of a tree of pairs only took its
/// loop of pairs, which aligned at the products, so a chain's code and
/// its replay differed at n = 2.
#[test]
fn a_pair_of_products_aligns_at_its_factors_in_the_replay_as_in_the_code() {
    let f: Formula = "fused:17".parse().unwrap();
    let mut model = Arithmetic::uniform(NodeArithmetic {
        rounding: Rounding::TowardZero,
        fused_bits: Some(4),
        aligns_factors: Some(Format::F16),
        ..NodeArithmetic::ieee(Format::F32)
    });
    model.products = Some(Products::from_leaves(&[]));
    let (x, y) = ([1.5, 1.5], [1.5, 0.0625]);
    let replay = Replay::with_arithmetic(&f.tree(2), &model);
    assert_eq!(replay.dot(&x, &y), 2.25 + 0.0625);
    let plan = Plan::with_result(
        &f,
        Format::F16,
        Format::F32,
        Op::Dot,
        &[(f.tree(49), model)],
    )
    .unwrap();
    assert_eq!(plan.evaluate(&x, &y), 2.25 + 0.0625);
}

/// Hopper's f64 mma as fprev reveals it: a left-to-right f64 chain of
/// fused multiply-adds from C = 0 (the first product rounded, the rest
/// exact). It was refused (exact products of f64 values); now C, CUDA C
/// and Rust write `fma`/`mul_add` and give the replay's bits, and Python,
/// which has no fused multiply-add before 3.13, refuses it saying so.
#[test]
fn an_fma_chain_of_f64_products_is_written_as_fused_multiply_adds() {
    let f: Formula = "sequential".parse().unwrap();
    let mut model = Arithmetic::uniform(NodeArithmetic::ieee(Format::F64));
    let mut leaves = vec![Product::Exact; 64];
    leaves[0] = Product::Rounded(Format::F64);
    model.products = Some(Products::from_leaves(&leaves));
    let plan = Plan::new(&f, Format::F64, Op::Dot, &[(f.tree(64), model.clone())]).unwrap();
    let err = emit::source(&plan, Language::Python, "chain", "fma").unwrap_err();
    assert!(err.to_string().contains("math.fma"), "{err}");
    let sizes: Vec<usize> = (1..=40).collect();
    let model_at = |n: usize| {
        let mut m = model.clone();
        m.products = Some(Products::from_leaves(&leaves[..n]));
        m
    };
    let languages = [Language::C, Language::Cuda, Language::Rust];
    multiply_adds_match(&plan, &languages, &sizes, 8, model_at, &mut Words(7));
}

/// Emits `plan` in each of `languages` and checks, at each of `sizes`,
/// that the code and the plan give the bits of the replay of its formula's
/// tree under `model(n)`, on `trials` inputs whose products' low halves a
/// plain f64 product would lose.
fn multiply_adds_match(
    plan: &Plan,
    languages: &[Language],
    sizes: &[usize],
    trials: usize,
    model: impl Fn(usize) -> Arithmetic,
    w: &mut Words,
) {
    let f = &plan.formula;
    for &language in languages {
        let source = emit::source(plan, language, "fmas", "fma").unwrap();
        let dir = check::Scratch::new().unwrap();
        let emitted = check::build_plan(&source, language, "fmas", plan, &dir.0)
            .unwrap_or_else(|e| panic!("{f} in {language}: {e}\n{source}"));
        for &n in sizes {
            let replay = Replay::with_arithmetic(&f.tree(n), &model(n));
            let opts = ProbeOptions {
                n: Some(n),
                format: emitted.format,
                ..Default::default()
            };
            let mut ours = fprev::open(&emitted.spec, &opts).unwrap();
            for _ in 0..trials {
                let x: Vec<f64> = (0..n)
                    .map(|_| w.value(Format::F64, 8) * (1.0 + 2f64.powi(-40)))
                    .collect();
                let y: Vec<f64> = (0..n)
                    .map(|_| w.value(Format::F64, 8) * (1.0 - 2f64.powi(-45)))
                    .collect();
                let want = replay.dot(&x, &y);
                assert_eq!(
                    plan.evaluate(&x, &y).to_bits(),
                    want.to_bits(),
                    "the plan of {f} at n = {n}"
                );
                let mut out = [0.0];
                ours.as_dot().unwrap().dot(&x, &y, &mut out).unwrap();
                assert_eq!(
                    out[0].to_bits(),
                    want.to_bits(),
                    "{f} in {language} at n = {n}\n{source}"
                );
            }
        }
    }
}

/// Which summands of `f` at `n` an FMA kernel rounds: those read first (a
/// lane's start, a register's first, a summand returned alone); the rest
/// enter their addition exact, as the second operand of a fused
/// multiply-add.
fn fma_kernel(f: &Formula, n: usize) -> Arithmetic {
    struct Reads(Vec<bool>);
    impl fprev::order::Adder for Reads {
        type Value = Option<usize>;
        fn add(&mut self, a: Option<usize>, _: Option<usize>) -> Option<usize> {
            self.returned(a)
        }
        fn fused(&mut self, terms: &[Option<usize>]) -> Option<usize> {
            self.returned(terms[0])
        }
        fn returned(&mut self, sum: Option<usize>) -> Option<usize> {
            if let Some(i) = sum {
                self.0[i] = true;
            }
            None
        }
        fn loaded(&mut self, v: Option<usize>) -> Option<usize> {
            self.returned(v)
        }
    }
    let mut reads = Reads(vec![false; n]);
    let leaves: Vec<Option<usize>> = (0..n).map(Some).collect();
    let root = f.run(&leaves, &mut reads);
    fprev::order::Adder::returned(&mut reads, root);
    let products: Vec<Product> = reads
        .0
        .iter()
        .map(|&first| match first {
            true => Product::Rounded(Format::F64),
            false => Product::Exact,
        })
        .collect();
    let mut model = Arithmetic::uniform(NodeArithmetic::ieee(Format::F64));
    model.products = Some(Products::from_leaves(&products));
    model
}

/// A kernel of fused multiply-adds in every shape the language has (its
/// lanes, bodies, blocks, halvings, vectorised kernels, OpenBLAS's ddot and
/// dgemv as explain finds them): emitted C, CUDA C and Rust write each
/// exact product as `fma`/`mul_add` onto the value it joins, and give the
/// replay's bits at every size tried, where a plain f64 product would lose
/// the product's low half.
#[test]
fn fma_kernels_of_every_shape_are_written_as_fused_multiply_adds() {
    let sizes: Vec<usize> = (1..=70).chain([129, 257, 1000, 4099]).collect();
    let mut w = Words(11);
    for f in [
        "sequential",
        "reverse",
        "pairwise",
        "blocked:5",
        "interleave(4, sequential, pairwise)",
        "body(16, interleave(16, sequential, interleave(2, pairwise, pairwise)), then)",
        "blocks(2048, body(4, interleave(4, sequential, interleave(2, pairwise, pairwise)), \
         sequential), sequential)",
        "body(4, interleave(4, sequential, pairwise), then)",
        "kblocks(256, 4, halves(256, 1, sequential))",
        "halves(16, 4, sequential)",
        "windows(4, sequential)",
        "split(3, sequential, pairwise)",
        "lead(5, pairwise, reverse)",
        "bisect(2, sequential)",
        "simd(2, 4, 1, strided:2, first)",
        "peel(4, body(8, interleave(8, sequential, interleave(4, pairwise, pairwise)), sequential))",
        "kblocks(256, 4, body(8, interleave(2, sequential, sequential), first))",
        "simd(4, 4, 2[3, 0+1+2], pairwise, first)",
    ] {
        let f: Formula = f.parse().unwrap();
        // Small sizes too, where a part reads summands it does not at 300.
        let models: Vec<_> = [1, 2, 3, 7, 300]
            .into_iter()
            .map(|n| (f.tree(n), fma_kernel(&f, n)))
            .collect();
        let plan =
            Plan::new(&f, Format::F64, Op::Dot, &models).unwrap_or_else(|e| panic!("{f}: {e}"));
        let languages = [Language::C, Language::Rust];
        multiply_adds_match(&plan, &languages, &sizes, 4, |n| fma_kernel(&f, n), &mut w);
    }
}
