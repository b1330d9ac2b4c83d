//! Emitted Rust, compiled with `rustc` into one shared library per test
//! and run through its C wrappers as `dylib:` black boxes: each function
//! gives the bits of the plan it was written from and, where the plan is
//! one arithmetic throughout, of its formula's own replay.

mod common;

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use fprev::Format;
use fprev::arith::{Arithmetic, NodeArithmetic, Product, Products};
use fprev::emit::{self, Language, Op, Plan, check};
use fprev::formula::{Formula, known};
use fprev::inputs::Inputs;
use fprev::probe::ProbeOptions;
use fprev::reduce::Replay;
use fprev::tree::SummationTree;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Every part of the language, and the formulas found for libraries.
fn formulas() -> Vec<String> {
    let mut all: Vec<String> = [
        "sequential",
        "reverse",
        "pairwise",
        "binary-tree",
        "strided:4",
        "strided:7",
        "blocked:5",
        "blocked:64",
        "interleave(4, sequential, pairwise)",
        "interleave(8, sequential, sequential)",
        "interleave(3, pairwise, reverse)",
        "interleave(300, sequential, pairwise)",
        "blocks(7, pairwise, sequential)",
        "body(8, interleave(8, sequential, pairwise), then)",
        "body(4, pairwise, reverse)",
        "body(16, interleave(16, sequential, sequential), sequential)",
        "halves(16, 4, sequential)",
        "bisect(1, sequential)",
        "lead(128, halves(128, 128, interleave(16, sequential, fold)), sequential)",
        "lead(5, pairwise, reverse)",
        "bisect(3, interleave(4, sequential, pairwise))",
        "halves(128, 8, body(8, interleave(8, sequential, pairwise), then))",
        "below(10, reverse, pairwise)",
        "windows(4, sequential)",
        "windows(32, pairwise)",
        "split(5, sequential, doubling)",
        "split(6, pairwise, fanout(2))",
        "split(3, sequential, sequential)",
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
    ]
    .into_iter()
    .chain(common::SEEDED)
    .map(String::from)
    .collect();
    all.extend(known::KNOWN.iter().map(|k| k.formula.to_string()));
    all
}

fn formula(s: &str) -> Formula {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// A function to emit: its plan, and the model a replay of its formula's
/// tree follows at every size (where it has one).
struct Case {
    name: String,
    what: String,
    plan: Plan,
    model: Option<Arithmetic>,
}

impl Case {
    /// The plan of `f` whose every node adds as `node`, products rounded
    /// as `product`.
    fn uniform(f: &str, element: Format, op: Op, node: NodeArithmetic, product: Product) -> Case {
        let plan = Plan::uniform(&formula(f), element, op, node, product)
            .unwrap_or_else(|e| panic!("{f}: {e}"));
        let mut model = Arithmetic::uniform(node);
        if op == Op::Dot {
            model.products = Some(Products {
                default: product,
                leaves: BTreeMap::new(),
            });
        }
        Case {
            name: String::new(),
            what: format!("{f}, {element} {op:?}, {node} additions, products {product}"),
            plan,
            model: Some(model),
        }
    }
}

/// `rustc`'s presence; a test without it says so and passes.
fn rustc_found() -> bool {
    let found = std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("SKIPPED: no rustc on the PATH to compile emitted Rust");
    }
    found
}

/// Emits each case as a module of one file, named `f0`, `f1`, ..., and
/// compiles it (warnings are errors) into a library in `dir`.
fn build(cases: &mut [Case], dir: &Path) -> PathBuf {
    let mut file = String::new();
    for (i, case) in cases.iter_mut().enumerate() {
        case.name = format!("f{i}");
        let source = emit::source(&case.plan, Language::Rust, &case.name, &case.what)
            .unwrap_or_else(|e| panic!("{}: {e}", case.what));
        let _ = writeln!(file, "pub mod m{i} {{\n{source}}}\n");
    }
    let source = dir.join("emitted.rs");
    std::fs::write(&source, &file).unwrap();
    let library = dir.join("libemitted.so");
    let started = Instant::now();
    check::rustc(&source, &library, &["-D", "warnings"])
        .unwrap_or_else(|e| panic!("{e}\n{}", detail(&source, &library)));
    eprintln!(
        "{} functions compiled in {:.1} s",
        cases.len(),
        started.elapsed().as_secs_f64()
    );
    library
}

/// rustc's whole complaint, for a failure's message.
fn detail(source: &Path, library: &Path) -> String {
    let out = std::process::Command::new("rustc")
        .args([
            "--edition",
            "2021",
            "--crate-type",
            "cdylib",
            "-D",
            "warnings",
            "-o",
        ])
        .arg(library)
        .arg(source)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stderr)
        .chars()
        .take(6000)
        .collect()
}

/// Every size in 1..=300, then a few larger, with fewer trials.
fn sizes() -> Vec<(usize, usize)> {
    (1..=300)
        .map(|n| (n, 3))
        .chain([(1000, 2), (4097, 2), (40000, 1)])
        .collect()
}

/// Runs each case's compiled function against its plan and its replay.
fn compare(cases: &[Case], library: &Path) {
    let mut rng = ChaCha8Rng::seed_from_u64(0x72757374);
    for case in cases {
        let plan = &case.plan;
        let format = plan.element;
        let spec = match plan.op {
            Op::Sum => format!("dylib:{}:{}_c", library.display(), case.name),
            Op::Dot => format!("dylib-dot:{}:{}_c", library.display(), case.name),
        };
        for (n, trials) in sizes() {
            let opts = ProbeOptions {
                n: Some(n),
                format,
                ..Default::default()
            };
            let mut probe = fprev::open(&spec, &opts).unwrap();
            let replay = case
                .model
                .as_ref()
                .map(|m| Replay::with_arithmetic(&plan.formula.tree(n), m));
            let kinds = (0..trials).map(|t| Inputs::ALL[(n + t) % Inputs::ALL.len()]);
            let rows: Vec<Vec<f64>> = kinds.clone().map(|k| k.draw(format, n, &mut rng)).collect();
            let y = match plan.op {
                Op::Sum => Vec::new(),
                Op::Dot => Inputs::ALL[n % Inputs::ALL.len()].draw(format, n, &mut rng),
            };
            let mut got = vec![0.0; trials];
            match plan.op {
                Op::Sum => probe.sum(&rows.concat(), &mut got).unwrap(),
                Op::Dot => probe
                    .as_dot()
                    .unwrap()
                    .dot(&rows.concat(), &y, &mut got)
                    .unwrap(),
            }
            for ((x, got), kind) in rows.iter().zip(got).zip(kinds) {
                let at = || format!("{} ({}) at n = {n} on {kind:?}", case.name, case.what);
                same(got, plan.evaluate(x, &y), "the plan", &at);
                if let Some(replay) = &replay {
                    let want = match plan.op {
                        Op::Sum => replay.sum(x),
                        Op::Dot => replay.dot(x, &y),
                    };
                    same(got, format.round(want), "the replay", &at);
                }
            }
        }
    }
}

fn same(got: f64, want: f64, of: &str, at: &dyn Fn() -> String) {
    assert!(
        got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
        "{}: emitted Rust gives {got:e}, {of} {want:e}",
        at()
    );
}

fn run(mut cases: Vec<Case>) {
    if !rustc_found() {
        return;
    }
    let dir = check::Scratch::new().unwrap();
    let library = build(&mut cases, &dir.0);
    let started = Instant::now();
    compare(&cases, &library);
    eprintln!(
        "{} functions checked in {:.1} s",
        cases.len(),
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn every_part_summed_in_its_own_format_is_its_replay() {
    let mut cases = Vec::new();
    for f in formulas() {
        for format in [Format::F32, Format::F64] {
            let node = NodeArithmetic::ieee(format);
            cases.push(Case::uniform(&f, format, Op::Sum, node, Product::Exact));
        }
    }
    run(cases);
}

/// Vectorised kernels ([`common::KERNELS`]) summed and multiplied in
/// their own format, and f32 products exact.
#[test]
fn vectorised_kernels_are_their_replay() {
    let mut cases = Vec::new();
    for f in common::KERNELS {
        for format in [Format::F32, Format::F64] {
            let node = NodeArithmetic::ieee(format);
            cases.push(Case::uniform(f, format, Op::Sum, node, Product::Exact));
            let rounded = Product::Rounded(format);
            cases.push(Case::uniform(f, format, Op::Dot, node, rounded));
        }
        let node = NodeArithmetic::ieee(Format::F32);
        cases.push(Case::uniform(f, Format::F32, Op::Dot, node, Product::Exact));
    }
    run(cases);
}

/// f32 inputs summed in f64 (lanes of f64 registers, the result rounded
/// at the end), f64 inputs in f32 (each addition of f64 values rounded
/// once to f32), and Kahan's steps, with and without the last error.
#[test]
fn every_part_in_another_format_and_compensated_chains_are_their_replay() {
    let mut cases = Vec::new();
    for f in formulas() {
        for (element, acc) in [(Format::F32, Format::F64), (Format::F64, Format::F32)] {
            let node = NodeArithmetic::ieee(acc);
            cases.push(Case::uniform(&f, element, Op::Sum, node, Product::Exact));
        }
    }
    for f in [
        "sequential",
        "body(4, sequential, then)",
        "body(8, sequential, sequential)",
    ] {
        for format in [Format::F32, Format::F64] {
            for drops_error in [false, true] {
                let node = NodeArithmetic {
                    compensated: true,
                    drops_error,
                    ..NodeArithmetic::ieee(format)
                };
                let mut case = Case::uniform(f, format, Op::Sum, node, Product::Exact);
                // A rest summed apart in a compensated chain of its own is
                // checked against the plan alone: the plan takes that
                // chain's error off before the body's last step adds it,
                // where a replay's chain, being a second operand, drops it.
                if f.ends_with("sequential)") {
                    case.model = None;
                }
                cases.push(case);
            }
        }
    }
    run(cases);
}

/// The leaves of `tree` that join their parent first (the child with the
/// smallest leaf), which a loop of fused multiply-adds starts with a
/// rounded product.
fn first_leaves(tree: &SummationTree) -> BTreeMap<usize, Product> {
    (0..tree.n())
        .filter(|&i| {
            let leaf = tree.leaf(i);
            tree.parent(leaf).is_some_and(|p| {
                let least = |c| tree.leaves_under(c).into_iter().min().unwrap();
                let kids = tree.children(p);
                kids.iter().min_by_key(|&&c| least(c)) == Some(&leaf)
            })
        })
        .map(|i| (i, Product::Rounded(Format::F32)))
        .collect()
}

/// The f32 dot plan of `f` whose loops are fused multiply-adds that start
/// with a rounded product, found from a model of that at n = 1000.
fn fused(f: &str) -> Plan {
    let tree = formula(f).tree(1000);
    let mut model = Arithmetic::uniform(NodeArithmetic::ieee(Format::F32));
    model.products = Some(Products {
        default: Product::Exact,
        leaves: first_leaves(&tree),
    });
    let plan = Plan::new(&formula(f), Format::F32, Op::Dot, &[(tree, model)])
        .unwrap_or_else(|e| panic!("{f}: {e}"));
    assert!(
        plan.parts.iter().any(|p| p.first != p.second),
        "{f}: some part reads products two ways"
    );
    plan
}

#[test]
fn every_part_of_a_dot_is_its_replay_and_fused_loops_their_plan() {
    let mut cases = Vec::new();
    for f in formulas() {
        for product in [Product::Rounded(Format::F32), Product::Exact] {
            let node = NodeArithmetic::ieee(Format::F32);
            cases.push(Case::uniform(&f, Format::F32, Op::Dot, node, product));
        }
        let node = NodeArithmetic::ieee(Format::F64);
        let rounded = Product::Rounded(Format::F64);
        cases.push(Case::uniform(&f, Format::F64, Op::Dot, node, rounded));
    }
    // Loops of fused multiply-adds that start with a rounded product: the
    // plan, checked against its model's replay where it was found.
    for f in [
        "sequential",
        "reverse",
        "pairwise",
        "binary-tree",
        "fold",
        "fanout(2)",
        "interleave(8, sequential, pairwise)",
        "body(8, interleave(8, sequential, pairwise), then)",
        "body(32, interleave(32, sequential, interleave(4, pairwise, pairwise)), sequential)",
    ] {
        cases.push(Case {
            name: String::new(),
            what: format!("{f}, f32 dot, the first product of each loop rounded"),
            plan: fused(f),
            model: None,
        });
    }
    run(cases);
}

/// The emitted code is a module that builds in every edition, without a
/// warning, and refuses what it cannot write.
#[test]
fn emitted_rust_builds_in_every_edition_and_refuses_keywords() {
    let plan = fused("body(8, interleave(8, sequential, split(3, sequential, doubling)), then)");
    let source = emit::source(&plan, Language::Rust, "sdotLike", "a dot").unwrap();
    assert!(source.contains("pub fn sdotLike(x: &[f32], y: &[f32]) -> f32"));
    assert!(source.contains("pub unsafe extern \"C\" fn sdotLike_c("));
    assert!(source.contains("mul_add"), "{source}");
    let refused = emit::source(&plan, Language::Rust, "loop", "a dot").unwrap_err();
    assert!(refused.to_string().contains("keyword"), "{refused}");
    if !rustc_found() {
        return;
    }
    let dir = check::Scratch::new().unwrap();
    let file = dir.0.join("emitted.rs");
    std::fs::write(&file, &source).unwrap();
    for edition in ["2015", "2018", "2021", "2024"] {
        let out = std::process::Command::new("rustc")
            .args([
                "--edition",
                edition,
                "--crate-type",
                "lib",
                "-D",
                "warnings",
            ])
            .arg("--out-dir")
            .arg(&dir.0)
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "edition {edition}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // As `fprev emit --check` builds it, and opened as it opens it.
    let spec = check::build(&source, Language::Rust, "sdotLike", Op::Dot, &dir.0).unwrap();
    assert!(spec.starts_with("dylib-dot:") && spec.ends_with(":sdotLike_c"));
    let opts = ProbeOptions {
        n: Some(100),
        format: Format::F32,
        ..Default::default()
    };
    let x: Vec<f64> = (0..100)
        .map(|i| 1.0 / (i as f64 + 3.0))
        .map(|v| v as f32 as f64)
        .collect();
    let mut got = [0.0];
    let mut probe = fprev::open(&spec, &opts).unwrap();
    probe.as_dot().unwrap().dot(&x, &x, &mut got).unwrap();
    assert_eq!(got[0], plan.evaluate(&x, &x));
}

/// f64 values added in f32 are rounded once: `1 + (2^-24 + 2^-76)` is
/// just above a tie of f32, which their f64 sum (`1 + 2^-24`) rounds to
/// even; random inputs seldom land there.
#[test]
fn f64_values_added_in_f32_round_once() {
    let plan = Plan::uniform(
        &formula("sequential"),
        Format::F64,
        Op::Sum,
        NodeArithmetic::ieee(Format::F32),
        Product::Exact,
    )
    .unwrap();
    let x = [1.0, 2f64.powi(-24) + 2f64.powi(-76)];
    let want = 1.0 + 2f64.powi(-23);
    assert_eq!(plan.evaluate(&x, &[]), want);
    if !rustc_found() {
        return;
    }
    let source = emit::source(&plan, Language::Rust, "once", "sequential").unwrap();
    let dir = check::Scratch::new().unwrap();
    let spec = check::build(&source, Language::Rust, "once", Op::Sum, &dir.0).unwrap();
    let opts = ProbeOptions {
        n: Some(2),
        format: Format::F64,
        ..Default::default()
    };
    let mut got = [0.0];
    fprev::open(&spec, &opts)
        .unwrap()
        .sum(&x, &mut got)
        .unwrap();
    assert_eq!(got[0], want);
}
