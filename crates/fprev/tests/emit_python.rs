//! Emitted Python, run: every function a test emits goes into one module,
//! which one `python3` process runs on inputs read from a file; each
//! result must be the plan's bits (`Plan::evaluate`) and, for a plan whose
//! nodes all add alike, the bits of the formula's own replay, at every
//! size tried. Skipped, saying so, where NumPy is missing.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use fprev::Format;
use fprev::arith::{Arithmetic, NodeArithmetic, Product, Products};
use fprev::emit::{self, Language, Op, Part, Plan};
use fprev::formula::Formula;
use fprev::inputs::Inputs;
use fprev::reduce::Replay;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Every part of the language.
const PARTS: &[&str] = &[
    "sequential",
    "reverse",
    "pairwise",
    "binary-tree",
    "strided:4",
    "blocked:5",
    "interleave(4, sequential, pairwise)",
    "interleave(3, pairwise, reverse)",
    "interleave(5, sequential, sequential)",
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
    "split(3, interleave(2, sequential, sequential), split(2, sequential, doubling))",
    "doubling",
    "fold",
    "fanout(2)",
    "fanout(3)",
    "rotate(3, sequential)",
    "split(4, sequential, rotate(2, sequential))",
    "pieces(16, 4, pairwise)",
    "interleave(2, body(4, sequential, pieces(2, sequential)), sequential)",
    "kblocks(8, 4, sequential)",
    "kblocks(8, pairwise)",
];

/// Known library formulas.
const KNOWN: &[&str] = &[
    "halves(128, 8, body(8, interleave(8, sequential, pairwise), then))",
    "body(32, interleave(32, sequential, interleave(4, pairwise, pairwise)), sequential)",
    "body(8, interleave(8, sequential, interleave(4, pairwise, sequential)), then)",
    "below(4096, windows(32, sequential), blocks(32768, interleave(16, body(64, blocks(64, \
     windows(4, sequential), sequential), pieces(16, 4, windows(4, sequential))), fold), fold))",
];

fn formula(s: &str) -> Formula {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn numpy_found() -> bool {
    let found = Command::new("python3")
        .args(["-c", "import numpy"])
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        eprintln!("SKIPPED: python3 with NumPy is not installed; emitted Python is not run");
    }
    found
}

/// A function to emit and run: its plan, and the model of a replay that
/// must agree with it (for plans whose nodes all add alike).
struct Case {
    plan: Plan,
    replay: Option<Arithmetic>,
}

/// The plan of `f` whose nodes all add as `node`, products rounded as
/// `product`, with the model its replay takes. The plan is found at sizes
/// where every part adds (a body's rest, a large formula's other branch),
/// not at one size as [`Plan::uniform`] finds it.
fn uniform(f: &str, element: Format, op: Op, node: NodeArithmetic, product: Product) -> Case {
    let formula = formula(f);
    let mut model = Arithmetic::uniform(node);
    if op == Op::Dot {
        model.products = Some(Products {
            default: product,
            leaves: Default::default(),
        });
    }
    let models: Vec<_> = [1, 2, 3, 5, 7, 13, 77, 300, 1000, 1003, 4097]
        .into_iter()
        .map(|n| (formula.tree(n), model.clone()))
        .collect();
    let plan = Plan::new(&formula, element, op, &models).unwrap_or_else(|e| panic!("{f}: {e}"));
    Case {
        plan,
        replay: Some(model),
    }
}

fn ieee(f: &str, element: Format, op: Op, product: Product) -> Case {
    uniform(f, element, op, NodeArithmetic::ieee(element), product)
}

/// A plan of `f` whose every part is `part`, but that parts reading no
/// summands of their own (all but loops, halvings and bodies) read each
/// product alike, as `part` reads those it adds; checked only against its
/// own evaluation.
fn every_part(f: &str, element: Format, op: Op, part: Part) -> Case {
    let formula = formula(f);
    let parts = emit::preorder(&formula)
        .into_iter()
        .map(|f| match f {
            Formula::Order(_) | Formula::Fold | Formula::Fanout(_) | Formula::Body(..) => part,
            _ => Part {
                first: part.second,
                ..part
            },
        })
        .collect();
    Case {
        plan: Plan {
            formula,
            element,
            result: element,
            op,
            parts,
        },
        replay: None,
    }
}

/// What one run found: each case's time in Python, in seconds.
struct Ran {
    seconds: Vec<f64>,
}

/// Emits every case into one module, runs it at each of `sizes` on
/// `trials` random inputs per size, and on each of `fixed` (`x`, and `y`
/// of a dot), and compares each result with the plan's evaluation and the
/// replay's, bit for bit.
fn run(cases: &[Case], sizes: &[usize], trials: usize, fixed: &[(Vec<f64>, Vec<f64>)]) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let mut module = String::new();
    let mut manifest = String::new();
    for (c, case) in cases.iter().enumerate() {
        let name = format!("f{c}");
        let source = emit::source(
            &case.plan,
            Language::Python,
            &name,
            &case.plan.formula.to_string(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", case.plan.formula));
        for banned in [
            "np.sum",
            "np.dot",
            ".sum(",
            "reduce",
            "accumulate",
            "fsum",
            "@",
            "einsum",
        ] {
            assert!(!source.contains(banned), "{name} calls {banned}:\n{source}");
        }
        module += &source;
        module += "\n\n";
        let dtype = match case.plan.element {
            Format::F32 => "f32",
            _ => "f64",
        };
        let op = match case.plan.op {
            Op::Sum => "sum",
            Op::Dot => "dot",
        };
        manifest += &format!("{name} {dtype} {op}\n");
    }
    let mut rng = ChaCha8Rng::seed_from_u64(0x707974686f6e);
    let mut data = Vec::new();
    let mut want = Vec::new();
    for (c, case) in cases.iter().enumerate() {
        let plan = &case.plan;
        let mut inputs = Vec::new();
        for &n in sizes {
            for trial in 0..trials {
                let kind = Inputs::ALL[(trial + n) % Inputs::ALL.len()];
                let x = kind.draw(plan.element, n, &mut rng);
                let y = match plan.op {
                    Op::Sum => Vec::new(),
                    Op::Dot => kind.draw(plan.element, n, &mut rng),
                };
                inputs.push((x, y));
            }
        }
        inputs.extend(fixed.iter().cloned());
        let mut replay = None;
        for (x, y) in &inputs {
            let n = x.len();
            if let Some(model) = &case.replay
                && replay.as_ref().is_none_or(|(m, _)| *m != n)
            {
                let r =
                    Replay::with_arithmetic(&plan.formula.tree(n), model).returning(plan.element);
                replay = Some((n, r));
            }
            let planned = plan.evaluate(x, y);
            if let Some((_, replay)) = &replay {
                let replayed = match plan.op {
                    Op::Sum => replay.sum(x),
                    Op::Dot => replay.dot(x, y),
                };
                assert_eq!(
                    planned.to_bits(),
                    replayed.to_bits(),
                    "the plan of {} is not its replay at n = {n}",
                    plan.formula
                );
            }
            want.push((c, n, planned));
            data.extend((c as u32).to_le_bytes());
            data.extend((n as u32).to_le_bytes());
            for v in x.iter().chain(y) {
                match plan.element {
                    Format::F32 => data.extend((*v as f32).to_le_bytes()),
                    _ => data.extend(v.to_le_bytes()),
                }
            }
        }
    }
    let path = |f: &str| dir.path().join(f);
    std::fs::write(path("emitted.py"), &module).unwrap();
    std::fs::write(path("cases.txt"), &manifest).unwrap();
    std::fs::write(path("inputs.bin"), &data).unwrap();
    std::fs::write(path("run.py"), RUNNER).unwrap();
    let out = Command::new("python3")
        .arg(path("run.py"))
        .arg(dir.path())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = read_f64s(&path("results.bin"));
    assert_eq!(got.len(), want.len());
    for (&(c, n, want), got) in want.iter().zip(&got) {
        assert!(
            want.to_bits() == got.to_bits(),
            "{} ({}, {:?}) at n = {n}: emitted Python gives {got:e}, the plan {want:e}",
            cases[c].plan.formula,
            cases[c].plan.element,
            cases[c].plan.op
        );
    }
    Ran {
        seconds: read_f64s(&path("seconds.bin")),
    }
}

fn read_f64s(path: &Path) -> Vec<f64> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// Runs every case of the module on its inputs; writes the results (as
/// f64) and each function's seconds; fails where a result is not a NumPy
/// scalar of the element type.
const RUNNER: &str = r#"import importlib.util, os, struct, sys, time
import numpy as np

d = sys.argv[1]
spec = importlib.util.spec_from_file_location('emitted', os.path.join(d, 'emitted.py'))
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
cases = [line.split() for line in open(os.path.join(d, 'cases.txt'))]
seconds = [0.0] * len(cases)
data = open(os.path.join(d, 'inputs.bin'), 'rb').read()
out, at = [], 0
while at < len(data):
    c, n = struct.unpack_from('<II', data, at)
    at += 8
    name, dtype, op = cases[c]
    dtype = np.float32 if dtype == 'f32' else np.float64
    x = np.frombuffer(data, dtype, n, at)
    at += x.nbytes
    args = [x]
    if op == 'dot':
        args.append(np.frombuffer(data, dtype, n, at))
        at += x.nbytes
    start = time.perf_counter()
    r = getattr(module, name)(*args)
    seconds[c] += time.perf_counter() - start
    if type(r) is not dtype:
        sys.exit(f'{name} returned a {type(r)}, not a {dtype}')
    out.append(float(r))
open(os.path.join(d, 'results.bin'), 'wb').write(struct.pack(f'<{len(out)}d', *out))
open(os.path.join(d, 'seconds.bin'), 'wb').write(struct.pack(f'<{len(seconds)}d', *seconds))
"#;

fn sizes() -> Vec<usize> {
    (1..=300).chain([1000, 4097]).collect()
}

/// Every part of the language and the known formulas, summed in f32 and
/// in f64.
#[test]
fn emitted_python_sums_are_their_formulas() {
    if !numpy_found() {
        return;
    }
    let mut cases = Vec::new();
    for f in PARTS.iter().chain(KNOWN).chain(&common::SEEDED) {
        for element in [Format::F32, Format::F64] {
            cases.push(ieee(f, element, Op::Sum, Product::Exact));
        }
    }
    run(&cases, &sizes(), 1, &[]);
}

/// Dot products: of f32 values with exact products (each addition rounds
/// an exact sum once) or products rounded to f32 (f32's own additions),
/// and of f64 values.
#[test]
fn emitted_python_dots_are_their_formulas() {
    if !numpy_found() {
        return;
    }
    let mut cases = Vec::new();
    for f in PARTS.iter().chain(KNOWN).chain(&common::SEEDED) {
        cases.push(ieee(f, Format::F32, Op::Dot, Product::Exact));
        cases.push(ieee(f, Format::F32, Op::Dot, Product::Rounded(Format::F32)));
        cases.push(ieee(f, Format::F64, Op::Dot, Product::Rounded(Format::F64)));
    }
    run(&cases, &sizes(), 1, &[]);
}

/// Vectorised kernels ([`common::KERNELS`]) summed and multiplied, and
/// on negative zeros, which a kernel keeps only where a first summand
/// taken into an empty lane is itself, not added to a zero.
#[test]
fn emitted_python_vectorised_kernels_are_their_formulas() {
    if !numpy_found() {
        return;
    }
    // A dot's products of -0.0 and 1.0; a sum reads no `y`.
    let zeros = |dot: bool| -> Vec<(Vec<f64>, Vec<f64>)> {
        [1, 5, 16, 37, 100, 300]
            .into_iter()
            .map(|n| (vec![-0.0; n], vec![1.0; if dot { n } else { 0 }]))
            .collect()
    };
    let (mut sums, mut dots) = (Vec::new(), Vec::new());
    for f in common::KERNELS {
        for element in [Format::F32, Format::F64] {
            sums.push(ieee(f, element, Op::Sum, Product::Exact));
            dots.push(ieee(f, element, Op::Dot, Product::Rounded(element)));
        }
        dots.push(ieee(f, Format::F32, Op::Dot, Product::Exact));
    }
    run(&sums, &sizes(), 1, &zeros(false));
    run(&dots, &sizes(), 1, &zeros(true));
}

/// A product rounded to f32 first and exact after: a loop's fused
/// multiply-adds, run as lanes of f32 accumulators where the order has
/// them; in f32 and in f64 additions.
#[test]
fn emitted_python_fused_multiply_adds_are_their_plans() {
    if !numpy_found() {
        return;
    }
    let mut cases = Vec::new();
    for f in [
        "sequential",
        "reverse",
        "pairwise",
        "binary-tree",
        "blocked:5",
        "fold",
        "fanout(3)",
        "interleave(4, sequential, pairwise)",
        "interleave(3, pairwise, reverse)",
        "body(8, interleave(8, sequential, pairwise), then)",
        "halves(16, 4, body(4, interleave(4, sequential, sequential), then))",
        "body(32, interleave(32, sequential, interleave(4, pairwise, pairwise)), sequential)",
    ] {
        for format in [Format::F32, Format::F64] {
            let part = Part {
                format,
                compensated: false,
                drops_error: false,
                first: Product::Rounded(Format::F32),
                second: Product::Exact,
                narrow: false,
                seen: true,
                fused: None,
            };
            cases.push(every_part(f, Format::F32, Op::Dot, part));
        }
    }
    // An f32 value plus an exact product whose double sum is an f32
    // midpoint, the exact sum just below it: rounded twice it would go up
    // (to even), rounded once it stays.
    let (a, t) = (1.0 + 2f64.powi(-23), 2f64.powi(-15));
    let (b, c) = (1.0 + t, 2f64.powi(-24) * (1.0 - t));
    let twice = ((a + b * c) as f32) as f64;
    assert_eq!(twice, 1.0 + 2f64.powi(-22));
    let pair = (vec![a, b], vec![1.0, c]);
    assert_eq!(cases[0].plan.evaluate(&pair.0, &pair.1), a);
    // Lane 0 of two lanes sums x[0] and x[2], lane 1 x[1] and x[3].
    let lanes = every_part(
        "interleave(2, sequential, sequential)",
        Format::F32,
        Op::Dot,
        cases[0].plan.parts[0],
    );
    let four = (vec![a, a, b, b], vec![1.0, 1.0, c, c]);
    assert_eq!(lanes.plan.evaluate(&four.0, &four.1), 2.0 * a);
    cases.push(lanes);
    let exact = ieee("sequential", Format::F32, Op::Dot, Product::Exact);
    assert_eq!(exact.plan.evaluate(&pair.0, &pair.1), a);
    cases.push(exact);
    run(&cases, &sizes(), 2, &[pair, four]);
}

/// Parts of f32 and f64 additions in turn (by preorder index), over f32
/// and f64 inputs: lanes of f32 additions of f64 values, of f64 additions
/// of f32 sums, over the inputs and over partial sums; checked against the
/// plans.
#[test]
fn emitted_python_mixed_formats_are_their_plans() {
    if !numpy_found() {
        return;
    }
    let mut cases = Vec::new();
    for f in [
        "interleave(4, sequential, pairwise)",
        "interleave(3, sequential, interleave(2, sequential, sequential))",
        "blocks(9, interleave(4, sequential, sequential), interleave(2, sequential, reverse))",
        "body(8, interleave(8, sequential, pairwise), then)",
        "halves(16, 4, body(4, interleave(4, sequential, sequential), then))",
        "split(3, strided:2, interleave(2, sequential, sequential))",
        KNOWN[1],
    ] {
        for element in [Format::F32, Format::F64] {
            for op in [Op::Sum, Op::Dot] {
                for parity in [0, 1] {
                    let formula = formula(f);
                    let parts = (0..emit::preorder(&formula).len())
                        .map(|k| Part {
                            format: match k % 2 == parity {
                                true => Format::F32,
                                false => Format::F64,
                            },
                            compensated: false,
                            drops_error: false,
                            first: Product::Rounded(element),
                            second: Product::Rounded(element),
                            narrow: false,
                            seen: true,
                            fused: None,
                        })
                        .collect();
                    cases.push(Case {
                        plan: Plan {
                            formula,
                            element,
                            result: element,
                            op,
                            parts,
                        },
                        replay: None,
                    });
                }
            }
        }
    }
    run(&cases, &sizes(), 1, &[]);
}

/// Products read two ways where the part is not a loop, blocks, a halving
/// or a body: refused, as in C.
#[test]
fn parts_reading_products_two_ways_outside_loops_are_refused() {
    let part = Part {
        format: Format::F32,
        compensated: false,
        drops_error: false,
        first: Product::Rounded(Format::F32),
        second: Product::Exact,
        narrow: false,
        seen: true,
        fused: None,
    };
    for f in ["strided:4", "doubling"] {
        let plan = Plan {
            formula: formula(f),
            element: Format::F32,
            result: Format::F32,
            op: Op::Dot,
            parts: vec![part],
        };
        let err = emit::source(&plan, Language::Python, "f", f).unwrap_err();
        assert!(err.to_string().contains("rounded two ways"), "{f}: {err}");
    }
}

/// Kahan steps: in a loop, in a body's last addition (its rest one by
/// one, or apart), ending with or without taking the error off; and the
/// chunks of JAX's sum compensated. A body whose rest is summed apart
/// in a compensated chain of its own is checked against its plan alone:
/// the plan takes that chain's error off before the body's last step
/// adds it, where a replay's chain, being a second operand, drops it.
#[test]
fn emitted_python_compensated_sums_are_their_plans() {
    if !numpy_found() {
        return;
    }
    let mut cases = Vec::new();
    for element in [Format::F32, Format::F64] {
        for drops_error in [false, true] {
            let node = NodeArithmetic {
                compensated: true,
                drops_error,
                ..NodeArithmetic::ieee(element)
            };
            for f in ["sequential", "body(8, sequential, then)"] {
                cases.push(uniform(f, element, Op::Sum, node, Product::Exact));
            }
            let part = Part {
                format: element,
                compensated: true,
                drops_error,
                first: Product::Exact,
                second: Product::Exact,
                narrow: element == Format::F32,
                seen: true,
                fused: None,
            };
            cases.push(every_part(
                "body(4, sequential, sequential)",
                element,
                Op::Sum,
                part,
            ));
        }
        // XLA's: the sums of chunks of 64 joined in a compensated loop,
        // the rest added in a last step of that chain, which drops its
        // error.
        let jax = formula(KNOWN[3]);
        let order = emit::preorder(&jax);
        let joining: Vec<*const Formula> = order
            .iter()
            .filter_map(|f| match f {
                Formula::Blocks(64, _, outer) => Some(&**outer as *const Formula),
                _ => None,
            })
            .collect();
        let parts = order
            .iter()
            .map(|f| {
                let last = matches!(f, Formula::Body(64, ..));
                Part {
                    format: element,
                    compensated: last || joining.contains(&(*f as *const Formula)),
                    drops_error: last,
                    first: Product::Exact,
                    second: Product::Exact,
                    narrow: element == Format::F32,
                    seen: true,
                    fused: None,
                }
            })
            .collect();
        cases.push(Case {
            plan: Plan {
                formula: jax,
                element,
                result: element,
                op: Op::Sum,
                parts,
            },
            replay: None,
        });
    }
    let sizes: Vec<usize> = sizes().into_iter().chain([5000, 70001]).collect();
    run(&cases, &sizes, 2, &[]);
}

/// NumPy's own sum formula at 2^20 summands, and OpenBLAS's sdot: the
/// emitted Python is fast enough to use (the time is printed; the bound is
/// loose, for a loaded machine).
#[test]
fn emitted_python_is_usable_at_a_million_summands() {
    if !numpy_found() {
        return;
    }
    let n = 1 << 20;
    // OpenBLAS's sdot as it adds: a multiply, then fused multiply-adds.
    let fused = Part {
        format: Format::F32,
        compensated: false,
        drops_error: false,
        first: Product::Rounded(Format::F32),
        second: Product::Exact,
        narrow: false,
        seen: true,
        fused: None,
    };
    let cases = [
        ieee(KNOWN[0], Format::F32, Op::Sum, Product::Exact),
        ieee(KNOWN[0], Format::F64, Op::Sum, Product::Exact),
        every_part(KNOWN[1], Format::F32, Op::Dot, fused),
        ieee(KNOWN[1], Format::F32, Op::Dot, Product::Exact),
    ];
    let start = Instant::now();
    let ran = run(&cases, &[n, n + 13], 1, &[]);
    for (case, seconds) in cases.iter().zip(&ran.seconds) {
        eprintln!(
            "{} ({}, {:?}) at 2^20 and 2^20 + 13: {seconds:.3} s in Python",
            case.plan.formula, case.plan.element, case.plan.op
        );
        assert!(*seconds < 20.0, "{seconds} s");
    }
    eprintln!("all, with the plans and replays: {:?}", start.elapsed());
}

/// Emitted Python opened as a `python:` black box (what `fprev emit
/// --check` runs) against the formula's own replay (`native:`).
#[test]
fn emitted_python_opens_as_a_black_box_and_checks() {
    if !numpy_found() {
        return;
    }
    let numpy = KNOWN[0];
    let sizes: Vec<usize> = (1..=130).chain([1000, 4097, 1 << 16]).collect();
    for format in [Format::F32, Format::F64] {
        let plan = ieee(numpy, format, Op::Sum, Product::Exact).plan;
        let source = emit::source(&plan, Language::Python, "numpy_sum", "numpy:sum").unwrap();
        let dir = emit::check::Scratch::new().unwrap();
        let spec =
            emit::check::build(&source, Language::Python, "numpy_sum", Op::Sum, &dir.0).unwrap();
        assert!(spec.starts_with("python:"), "{spec}");
        let opts = fprev::probe::ProbeOptions {
            format,
            ..Default::default()
        };
        let native = format!("native:{numpy}");
        let checked = emit::check::compare(
            &mut |o| fprev::open(&native, o),
            &spec,
            &opts,
            Op::Sum,
            &sizes,
            3,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(checked.mismatch, None, "{format}");
        assert_eq!(checked.sizes, sizes);
        // Another order's replay tells it apart: the check can fail.
        let other = emit::check::compare(
            &mut |o| fprev::open("native:pairwise", o),
            &spec,
            &opts,
            Op::Sum,
            &sizes,
            3,
            &mut |_, _| {},
        )
        .unwrap();
        assert!(other.mismatch.is_some());
    }
    // A dot, a function of x and y, against the same plan emitted in C
    // (OpenBLAS's sdot as it adds: a multiply, then fused multiply-adds),
    // and against another order's.
    let fused = Part {
        format: Format::F32,
        compensated: false,
        drops_error: false,
        first: Product::Rounded(Format::F32),
        second: Product::Exact,
        narrow: false,
        seen: true,
        fused: None,
    };
    let dir = emit::check::Scratch::new().unwrap();
    let build = |f: &str, language, name: &str| {
        let plan = every_part(f, Format::F32, Op::Dot, fused).plan;
        let source = emit::source(&plan, language, name, f).unwrap();
        emit::check::build(&source, language, name, Op::Dot, &dir.0).unwrap()
    };
    let python = build(KNOWN[1], Language::Python, "sdot");
    let c = build(KNOWN[1], Language::C, "sdot_c");
    let other = build("pairwise", Language::C, "pairwise_c");
    let opts = fprev::probe::ProbeOptions {
        format: Format::F32,
        ..Default::default()
    };
    let sizes: Vec<usize> = (1..=130).chain([1000, 4097]).collect();
    for (reference, same) in [(&c, true), (&other, false)] {
        let checked = emit::check::compare(
            &mut |o| fprev::open(reference, o),
            &python,
            &opts,
            Op::Dot,
            &sizes,
            3,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(checked.mismatch.is_none(), same, "{reference}: {checked:?}");
    }
}
