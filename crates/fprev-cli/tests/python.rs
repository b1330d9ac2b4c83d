//! The embedded Python bridge against real NumPy and JAX (installed by
//! scripts/test.sh), and PyTorch when it is importable. Every revealed tree
//! is confirmed by replay against the library itself, bit for bit.
#![cfg(feature = "python")]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use assert_cmd::cargo::CommandCargoExt;
use fprev::check::check;
use fprev::probe::ProbeOptions;
use fprev::{Format, Options, reveal};

fn importable(module: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Reveals `spec` and confirms the tree against the library on random inputs.
fn reveal_and_check(
    spec: &str,
    n: usize,
    format: Format,
    shape: Option<[usize; 3]>,
) -> fprev::Found {
    let opts = ProbeOptions {
        n: Some(n),
        format,
        accumulator: None,
        shape,
        ..Default::default()
    };
    let mut bb = fprev::open(spec, &opts).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let r = reveal(&mut bb, &Options::default())
        .unwrap_or_else(|e| panic!("{spec} n = {n} {format}: {e}"))
        .revealed()
        .expect("an order");
    let report = check(&r.tree, &mut bb, 100, 3).unwrap();
    assert!(
        report.mismatch.is_none(),
        "{spec} n = {n} {format}: the revealed tree {} does not reproduce the library: {:?}",
        r.tree,
        report.mismatch
    );
    r
}

/// Reveals `spec`, then its arithmetic model (products included, of a
/// black box that multiplies), and checks that model on 200 random inputs
/// (random x and y where it multiplies); returns the model.
fn reveal_model_and_check(
    spec: &str,
    n: usize,
    format: Format,
    shape: Option<[usize; 3]>,
) -> fprev::arith::Arithmetic {
    use fprev::reveal::arithmetic::{ArithOptions, reveal_arithmetic};
    let what = format!("{spec} n = {n} {format}");
    let opts = ProbeOptions {
        n: Some(n),
        format,
        shape,
        ..Default::default()
    };
    let mut bb = fprev::open(spec, &opts).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let tree = reveal(&mut bb, &Options::default())
        .unwrap_or_else(|e| panic!("{what}: {e}"))
        .revealed()
        .expect("an order")
        .tree;
    let found = reveal_arithmetic(&mut bb, &tree, &ArithOptions::default())
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(
        found.model.products.is_some(),
        bb.as_dot().is_some(),
        "{what}: {}",
        found.model
    );
    let (report, matched) = fprev::check::check_models(
        &tree,
        std::slice::from_ref(&found.model),
        &mut bb,
        200,
        11,
        0,
    )
    .unwrap();
    assert!(
        matched.is_some(),
        "{what}: the model {} does not replay it: {:?}",
        found.model,
        report.mismatch
    );
    found.model
}

/// A sample of the sizes outputs/arith sweeps in full: the model of each
/// NumPy and JAX op, products included, replays it on random x and y.
#[test]
fn numpy_and_jax_models_with_their_products_replay_them() {
    for n in [1, 2, 31, 33, 100, 257] {
        for format in [Format::F32, Format::F64] {
            reveal_model_and_check("numpy:sum", n, format, None);
            reveal_model_and_check("numpy:dot", n, format, None);
            reveal_model_and_check("numpy:gemv", n, format, Some([4, 1, n]));
            reveal_model_and_check("numpy:gemm", n, format, Some([3, 2, n]));
        }
        if importable("jax") {
            reveal_model_and_check("jax:dot", n, Format::F32, None);
        }
    }
    // NumPy's f32 dot is OpenBLAS's sdot, whose kernel OpenBLAS picks for
    // the CPU. Haswell's (also Zen's): its FMA body rounds the first
    // product of each of 32 accumulators, its tail multiplies in f32.
    match numpy_openblas_core().as_deref() {
        Some("Haswell" | "Zen") => {
            let model = reveal_model_and_check("numpy:dot", 100, Format::F32, None);
            let products = model.products.unwrap();
            assert_eq!(products.default, fprev::arith::Product::Exact, "{products}");
            assert_eq!(products.leaves.len(), 32 + 4, "{products}");
        }
        core => eprintln!(
            "SKIPPED: the products of Haswell's sdot kernel: NumPy's OpenBLAS runs {core:?} here"
        ),
    }
}

/// The kernel set NumPy's bundled OpenBLAS picked for this CPU
/// (`openblas_get_corename`, under the prefix NumPy's wheel gives it).
fn numpy_openblas_core() -> Option<String> {
    let script = r#"
import ctypes, glob, os, numpy
libs = glob.glob(os.path.join(os.path.dirname(numpy.__file__), '..', 'numpy.libs', '*openblas*'))
lib = ctypes.CDLL(libs[0])
for name in ['scipy_openblas_get_corename64_', 'scipy_openblas_get_corename', 'openblas_get_corename64_', 'openblas_get_corename']:
    if hasattr(lib, name):
        f = getattr(lib, name)
        f.restype = ctypes.c_char_p
        print(f().decode())
        break
"#;
    let out = Command::new("python3").args(["-c", script]).output().ok()?;
    let core = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !core.is_empty()).then_some(core)
}

#[test]
fn numpy_sum_dot_gemv_gemm_reproduce_numpy_bit_for_bit() {
    for n in [1, 2, 5, 8, 9, 33, 200] {
        for format in [Format::F32, Format::F64] {
            reveal_and_check("numpy:sum", n, format, None);
        }
        reveal_and_check("numpy:dot", n, Format::F64, None);
    }
    // OpenBLAS's sdot adds its 32-lane SIMD body in f32 but its tail and the
    // final step in f64: one accumulator replays it only below 32 summands.
    for n in [1, 2, 5, 31, 64, 96] {
        reveal_and_check("numpy:dot", n, Format::F32, None);
    }
    for n in [1, 3, 16, 65] {
        reveal_and_check("numpy:gemv", n, Format::F32, Some([4, 1, n]));
        reveal_and_check("numpy:gemm", n, Format::F64, Some([3, 2, n]));
        reveal_and_check("numpy:gemm", n, Format::F32, None);
    }
}

#[test]
fn numpy_in_narrow_formats() {
    for n in [7, 100, 3000] {
        reveal_and_check("numpy:sum", n, Format::F16, None);
    }
    if importable("ml_dtypes") {
        reveal_and_check("numpy:sum", 40, Format::Bf16, None);
    } else {
        println!("SKIPPED bf16: ml_dtypes is not importable");
    }
}

#[test]
fn queries_are_packed_into_inputs_and_batched_into_rows() {
    // numpy.sum: one genuine call per input (and one that checks its
    // accumulator before queries are packed), several queries per input
    // but for the first pivot's n - 1, which each need one of their own
    // (guessed halves leave about 2n queries in all).
    let r = reveal_and_check("numpy:sum", 512, Format::F32, None);
    assert_eq!(r.stats.calls, r.stats.inputs + 1, "{:?}", r.stats);
    assert!(r.stats.inputs * 5 < r.stats.queries * 4, "{:?}", r.stats);
    // A GEMV: one call answers many inputs, one per row (after the calls
    // that check its rows sum alike and its accumulator).
    let r = reveal_and_check("numpy:gemv", 64, Format::F64, Some([64, 1, 64]));
    let checks = fprev::reveal::ROW_TRIALS as u64 + 1;
    assert!(
        (r.stats.calls - checks) * 16 < r.stats.inputs,
        "{:?}",
        r.stats
    );
}

#[test]
fn jax_sum_and_dot_reproduce_jax_bit_for_bit() {
    assert!(
        importable("jax"),
        "jax must be installed (scripts/test.sh installs it)"
    );
    for n in [1, 4, 9, 64, 130] {
        reveal_and_check("jax:sum", n, Format::F32, None);
        reveal_and_check("jax:dot", n, Format::F32, None);
    }
    reveal_and_check("jax:sum", 50, Format::F64, None);
    reveal_and_check("jax:gemm", 16, Format::F32, Some([4, 4, 16]));
}

/// `jnp.sum` on CPU is XLA's tree reduction rewriter, windows of 32 over
/// the padded summands: `fprev explain --no-verify` finds it from a few
/// sizes, and it gives the tree revealed at sizes explain never saw, up to
/// 2,048; from 4,096, XLA's vectorised reduction, which `explain` finds by
/// checking its formula there.
#[test]
fn jax_sum_is_windows_of_32() {
    assert!(
        importable("jax"),
        "jax must be installed (scripts/test.sh installs it)"
    );
    let sizes = "1..40,63..65,100";
    let out = fprev(&["explain", "jax:sum", "-n", sizes, "--no-verify"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        said.starts_with("native:windows(32, sequential)\n"),
        "{said}"
    );
    assert!(said.contains("it speaks for n <= 100"), "{said}");
    // Checked at 4,096 and past, the windows fail, and the formula that
    // holds there is XLA's below its switch.
    let out = fprev(&["explain", "jax:sum", "-n", sizes], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        said.starts_with("native:below(4096, windows(32, sequential), blocks(32768, "),
        "{said}"
    );
    assert!(
        stderr(&out).contains("fails at n = 4096"),
        "{}",
        stderr(&out)
    );
    let formula: fprev::formula::Formula = "windows(32, sequential)".parse().unwrap();
    for n in [77, 333, 1500, 2048] {
        let r = reveal_and_check("jax:sum", n, Format::F32, None);
        assert_eq!(formula.tree(n), r.tree, "{formula} at n = {n}");
    }
    // From 4,096 summands XLA's vectorised reduction, as written out from
    // reveals at 4,096 and 5,001 (docs/ALGORITHMS.md): 16 lanes, each in
    // chunks of 64 (windows of 4 inside), its rest in pieces of 16, then
    // 4, then what is left, the lane sums folded in halves. Checked at
    // sizes of each kind of rest it never came from (in this test: JAX is
    // imported once, in one thread).
    let vectorised: fprev::formula::Formula = "interleave(16, body(64, blocks(64, windows(4, \
        sequential), sequential), pieces(16, 4, windows(4, sequential))), fold)"
        .parse()
        .unwrap();
    // Past 32,768 summands, blocks of 32,768, each summed so, the block
    // sums folded in halves (written out from reveals at 65,536, 100,000
    // and 131,072).
    let blocked = fprev::formula::Formula::Blocks(
        32768,
        Box::new(vectorised.clone()),
        Box::new(fprev::formula::Formula::Fold),
    );
    // Lanes one summand longer are cut as the shortest is: where that
    // lane's rest is 47 (4,849) or 63 (16,383), cutting by each lane's own
    // length gives another tree.
    for (n, formula) in [
        (4097, &vectorised),
        (4500, &vectorised),
        (4849, &vectorised),
        (6000, &vectorised),
        (12345, &vectorised),
        (16383, &vectorised),
        (65537, &blocked),
    ] {
        let opts = ProbeOptions {
            n: Some(n),
            format: Format::F32,
            ..Default::default()
        };
        let mut probe = fprev::open("jax:sum", &opts).unwrap();
        let tree = reveal(&mut probe, &Options::default())
            .unwrap()
            .revealed()
            .expect("an order")
            .tree;
        assert!(formula.tree(n) == tree, "{formula} at n = {n}");
    }
}

/// A reveal whose tree is a known formula's asks the arithmetic of a few
/// nodes of each of the formula's parts: `jax:sum` at 6,000 (where every
/// node was asked, 18,000 calls) comes out with the same model in a few
/// dozen nodes.
#[test]
fn jax_s_arithmetic_is_asked_by_its_formula_s_parts() {
    assert!(
        importable("jax"),
        "jax must be installed (scripts/test.sh installs it)"
    );
    let o = fprev(&["reveal", "jax:sum", "-n", "6000"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let note = err
        .lines()
        .find(|l| l.starts_with("fprev: note: arithmetic: "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        note.contains(
            "f32, 64 nodes f32 compensated, 16 nodes f32 compensated dropping its error ("
        ),
        "{note}"
    );
    let asked: usize = note
        .split(" nodes asked")
        .next()
        .and_then(|head| head.rsplit('(').next())
        .and_then(|k| k.parse().ok())
        .unwrap_or_else(|| panic!("{note}"));
    assert!(asked < 100, "{note}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("# confirmed: replayed"));
}

/// From 4,096 summands XLA's vectorised sum adds each lane's sums of 64,
/// then its rest's, by Kahan's compensated steps: the model has one
/// compensated node a step (one per chunk of 64 after a lane's first, and
/// one for a rest); a lane without a rest takes its last error off, one
/// with a rest of several pieces drops it. The model replays JAX bit for
/// bit on 200 random inputs (random x and y for the dot product).
#[test]
fn jax_s_vectorised_sum_is_kahan_between_chunks_of_64() {
    assert!(
        importable("jax"),
        "jax must be installed (scripts/test.sh installs it)"
    );
    let cases = [
        ("jax:sum", 4096),
        ("jax:sum", 4097),
        ("jax:sum", 6000),
        ("jax:sum", 8193),
        ("jax:dot", 4096),
    ];
    for (spec, n) in cases {
        let model = reveal_model_and_check(spec, n, Format::F32, None);
        let lanes: Vec<usize> = (0..16).map(|lane| (n - lane).div_ceil(16)).collect();
        let steps: usize = lanes
            .iter()
            .map(|len| len / 64 - 1 + usize::from(len % 64 > 0))
            .sum();
        let compensated = model.nodes.values().filter(|a| a.compensated).count();
        assert_eq!(compensated, steps, "{spec} n = {n}: {model}");
        let dropping = model.nodes.values().filter(|a| a.drops_error).count();
        match n {
            // Every lane ends on a rest of 55: pieces of 16 and of 4.
            6000 => assert_eq!(dropping, 16, "{spec} n = {n}: {model}"),
            4096 => assert_eq!(dropping, 0, "{spec} n = {n}: {model}"),
            _ => {}
        }
    }
}

#[test]
fn torch_cpu_when_importable() {
    if !importable("torch") {
        println!(
            "SKIPPED: torch is not importable here (python3 -m pip install torch to run these)"
        );
        return;
    }
    for n in [1, 8, 100] {
        reveal_and_check("torch:sum", n, Format::F32, None);
        reveal_and_check("torch:gemv", n, Format::F32, Some([8, 1, n]));
        reveal_and_check("torch:gemm", n, Format::F32, Some([8, 8, n]));
        reveal_and_check("torch:dot", n, Format::F64, None);
    }
    // torch's f32 dot is OpenBLAS's sdot: f32 body, f64 tail (see above).
    for n in [1, 8, 31, 64] {
        reveal_and_check("torch:dot", n, Format::F32, None);
    }
    // Narrow formats reach torch as their bits (bf16 has no NumPy dtype
    // torch.from_numpy knows).
    reveal_and_check("torch:sum", 100, Format::Bf16, None);
    reveal_and_check("torch:sum", 100, Format::F16, None);
    reveal_and_check("torch:gemm", 64, Format::Bf16, Some([16, 16, 64]));
    reveal_and_check("torch:gemv", 40, Format::F16, Some([8, 1, 40]));
    // Their models, products included, on random x and y.
    for format in [Format::F32, Format::F16, Format::Bf16] {
        for n in [3, 64, 100] {
            reveal_model_and_check("torch:sum", n, format, None);
            reveal_model_and_check("torch:dot", n, format, None);
            reveal_model_and_check("torch:gemv", n, format, Some([8, 1, n]));
            reveal_model_and_check("torch:gemm", n, format, Some([8, 8, n]));
        }
    }
}

fn fprev(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::cargo_bin("fprev").unwrap();
    cmd.env("FPREV_CACHE_DIR", common::fresh_cache()).args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// One `fprev: error:` line, the given exit code, no panic, nothing on stdout.
fn assert_fails(o: &Output, code: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("fprev: error: "), "{err}");
    assert!(err.contains(needle), "expected {needle:?} in {err}");
    assert!(o.stdout.is_empty());
}

fn user_file(dir: &Path, body: &str) -> String {
    let path = dir.join("probe.py");
    std::fs::write(&path, body).unwrap();
    path.display().to_string()
}

#[test]
fn a_user_function_is_revealed() {
    let dir = tempfile::tempdir().unwrap();
    let path = user_file(
        dir.path(),
        "import numpy as np\n\ndef halves(x):\n    h = len(x) // 2\n    return np.float32(x[:h].sum()) + np.float32(x[h:].sum())\n",
    );
    let spec = format!("python:{path}:halves");
    let o = fprev(&["reveal", &spec, "-n", "4"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    // NumPy sums 2 elements left to right; the halves are then added.
    assert_eq!(text.lines().next(), Some("((0+1)+(2+3))"), "{text}");
}

#[test]
fn numpy_sum_probe_has_the_order_of_np_sum_itself() {
    // The probe calls np.add.reduce, which np.sum wraps: a user function
    // calling np.sum must reveal the same tree.
    let dir = tempfile::tempdir().unwrap();
    let path = user_file(
        dir.path(),
        "import numpy as np\n\ndef s(x):\n    return np.sum(x)\n",
    );
    for n in ["7", "200", "1000"] {
        let a = fprev(&["reveal", &format!("python:{path}:s"), "-n", n], &[]);
        let b = fprev(&["reveal", "numpy:sum", "-n", n], &[]);
        assert!(a.status.success() && b.status.success(), "{}", stderr(&a));
        let first = |o: &Output| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(str::to_string)
        };
        assert_eq!(first(&a), first(&b), "n = {n}");
    }
}

/// NumPy's sum in `long double` on x86-64: the order of its f64 sum, every
/// node x87's 64 bits, and the model replays it where f64 additions in the
/// same order do not.
#[cfg(target_arch = "x86_64")]
#[test]
fn numpy_s_long_double_sum_is_x87() {
    let dir = tempfile::tempdir().unwrap();
    let path = user_file(
        dir.path(),
        "import numpy as np\n\ndef s(x):\n    return float(np.sum(x.astype(np.longdouble)))\n",
    );
    let file = dir.path().join("t.json").display().to_string();
    let spec = format!("python:{path}:s");
    for n in ["100", "1000"] {
        let args = ["reveal", &spec, "-n", n, "--dtype", "f64", "-o", &file];
        let o = fprev(&args, &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        let mut doc = fprev::document::TreeDocument::read(Path::new(&file)).unwrap();
        assert_eq!(
            doc.arithmetic.as_ref().unwrap().to_string(),
            "x87",
            "n = {n}"
        );
        let f64_sum = fprev(&["reveal", "numpy:sum", "-n", n, "--dtype", "f64"], &[]);
        let first = |o: &Output| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(str::to_string)
        };
        assert_eq!(first(&f64_sum), Some(doc.tree().to_text()), "n = {n}");
        let o = fprev(&["check", &file, &spec, "--trials", "200"], &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        let f64_nodes = fprev::arith::NodeArithmetic::ieee(Format::F64);
        doc.arithmetic = Some(fprev::arith::Arithmetic::uniform(f64_nodes));
        std::fs::write(&file, doc.to_json()).unwrap();
        let o = fprev(&["check", &file, &spec, "--trials", "200"], &[]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "f64 additions replay it: {}",
            stderr(&o)
        );
    }
}

#[test]
fn an_exact_python_sum_is_reported_as_order_independent() {
    let dir = tempfile::tempdir().unwrap();
    let path = user_file(
        dir.path(),
        "import math\n\ndef exact(x):\n    return math.fsum(x)\n",
    );
    let spec = format!("python:{path}:exact");
    let o = fprev(&["reveal", &spec, "-n", "50", "--dtype", "f64"], &[]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("order-independent: "), "{text}");
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}

#[test]
fn a_sweep_records_sizes_where_the_black_box_breaks_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = user_file(
        dir.path(),
        "import numpy as np\n\ndef f(x):\n    return np.nan if len(x) == 6 else np.sum(x)\n",
    );
    let spec = format!("python:{path}:f");
    let o = fprev(&["sweep", &spec, "-n", "4..8"], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    let row = |n: &str| {
        table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(n))
            .map(|l| l.split_whitespace().nth(1).unwrap_or("").to_string())
    };
    assert_eq!(row("6").as_deref(), Some("broken"), "{table}");
    assert_eq!(row("7").as_deref(), Some("sequential"), "{table}");
    assert!(
        table.contains("broken at n = 6 (default threads): "),
        "{table}"
    );
    assert!(table.contains("NaN"), "{table}");
}

#[test]
fn python_failures_are_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = user_file(
        dir.path(),
        "import numpy as np\n\
         def boom(x):\n    raise ValueError('the probed function failed')\n\
         def nan(x):\n    return float('nan')\n\
         def vector(x):\n    return x\n\
         def text(x):\n    return 'seven'\n",
    );
    let spec = |f: &str| format!("python:{path}:{f}");
    let o = fprev(&["reveal", &spec("boom"), "-n", "8"], &[]);
    assert_fails(&o, 3, "ValueError: the probed function failed");
    assert!(stderr(&o).contains("line 3"), "{}", stderr(&o));
    assert_fails(&fprev(&["reveal", &spec("nan"), "-n", "8"], &[]), 3, "NaN");
    assert_fails(
        &fprev(&["reveal", &spec("vector"), "-n", "8"], &[]),
        3,
        "returned an array of shape (8,), not a number",
    );
    assert_fails(
        &fprev(&["reveal", &spec("text"), "-n", "8"], &[]),
        3,
        "seven",
    );
    assert_fails(
        &fprev(&["reveal", &spec("missing"), "-n", "8"], &[]),
        2,
        "no function 'missing'",
    );
    assert_fails(
        &fprev(&["reveal", "python:/no/such/file.py:f", "-n", "8"], &[]),
        2,
        "no such file",
    );
    assert_fails(
        &fprev(&["reveal", "numpy:median", "-n", "8"], &[]),
        2,
        "offers: dot, gemm, gemv, sum",
    );
    let needs = user_file(
        dir.path(),
        "import fprev_no_such_package_xyz\ndef f(x):\n    return 0.0\n",
    );
    assert_fails(
        &fprev(&["reveal", &format!("python:{needs}:f"), "-n", "8"], &[]),
        2,
        "python3 -m pip install fprev_no_such_package_xyz",
    );
}

/// A library adapter of the user's own, in a directory named by
/// FPREV_PROBES, in both forms of the protocol
/// (crates/fprev/src/probe/python/_bridge.py), each with an order known
/// independently of fprev.
#[test]
fn a_users_own_library_adapter_is_loaded_from_fprev_probes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mylib.py"),
        "import numpy as np\n\n\
         def sum(n, dtype, shape, arg):\n    \
             def fn(x):\n        \
                 s = 0.0\n        \
                 for v in reversed(x.tolist()):\n            \
                     s += v\n        \
                 return s\n    \
             fn.may_fuse = False\n    \
             return fn\n\n\
         def gemv(n, dtype, shape, arg):\n    \
             def fn(a):\n        \
                 return np.cumsum(a, axis=1)[:, -1]\n    \
             fn.rows = shape[0] if shape else n\n    \
             fn.may_fuse = False\n    \
             return fn\n",
    )
    .unwrap();
    let probes = dir.path().to_str().unwrap();
    let reveal = |args: &[&str]| {
        let o = fprev(args, &[("FPREV_PROBES", probes)]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = String::from_utf8(o.stdout).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        (
            v["tree"].to_string().replace(' ', ""),
            v["stats"]["calls"].as_u64().unwrap(),
            v["stats"]["inputs"].as_u64().unwrap(),
        )
    };
    // A Python loop from the right: the reverse order.
    let (tree, _, _) = reveal(&[
        "reveal",
        "mylib:sum",
        "-n",
        "6",
        "--dtype",
        "f64",
        "--format",
        "json",
    ]);
    assert_eq!(tree, "[0,[1,[2,[3,[4,5]]]]]");
    // numpy.cumsum along each row: left to right, seven rows a call.
    let (tree, calls, inputs) = reveal(&[
        "reveal",
        "mylib:gemv",
        "-n",
        "6",
        "--shape",
        "7,1,6",
        "--dtype",
        "f64",
        "--format",
        "json",
    ]);
    assert_eq!(tree, "[[[[[0,1],2],3],4],5]");
    let row_check = fprev::reveal::ROW_TRIALS as u64;
    assert!(calls - row_check < inputs, "{calls} calls, {inputs} inputs");
    let o = fprev(
        &["reveal", "mylib:median", "-n", "6"],
        &[("FPREV_PROBES", probes)],
    );
    assert_fails(&o, 2, "offers: gemv, sum");
}

#[test]
fn packages_of_an_active_virtualenv_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv");
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip", "--system-site-packages"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(made.success());
    let site = Command::new(venv.join("bin/python3"))
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .unwrap();
    let site = String::from_utf8(site.stdout).unwrap();
    std::fs::write(
        Path::new(site.trim()).join("fprev_venv_only.py"),
        "def total(x):\n    return float(sum(float(v) for v in x))\n",
    )
    .unwrap();
    let path = user_file(
        dir.path(),
        "from fprev_venv_only import total\n\ndef f(x):\n    return total(x)\n",
    );
    let spec = format!("python:{path}:f");
    let venv_str = venv.display().to_string();
    let bin = venv.join("bin").display().to_string();
    let path_var = format!("{bin}:{}", std::env::var("PATH").unwrap_or_default());
    let o = fprev(
        &["reveal", &spec, "-n", "5", "--dtype", "f64"],
        &[("VIRTUAL_ENV", &venv_str), ("PATH", &path_var)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().next(),
        Some("((((0+1)+2)+3)+4)")
    );
    // Without the virtualenv the package is missing, and fprev says how to get it.
    let o = fprev(&["reveal", &spec, "-n", "5"], &[]);
    assert_fails(&o, 2, "fprev_venv_only");
}

/// NumPy's sum is one formula, `fprev explain` finds it, and it gives the
/// tree revealed at sizes explain never saw, up to 16,384; `--infer`
/// predicts the tree at 16,384 from it, proven by masked checks (in under
/// `n / 8` calls) and confirmed by replay there.
#[test]
fn numpy_sum_is_one_formula_at_every_size() {
    let out = fprev(&["explain", "numpy:sum"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let formula: fprev::formula::Formula = said
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("native:"))
        .unwrap_or_else(|| panic!("{said}"))
        .parse()
        .unwrap();
    for n in [3000, 4097, 16384] {
        let r = reveal_and_check("numpy:sum", n, Format::F32, None);
        assert_eq!(formula.tree(n), r.tree, "{formula} at n = {n}");
    }
    let out = fprev(&["reveal", "numpy:sum", "-n", "16384", "--infer"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains(&format!("predicted by native:{formula}")),
        "{text}"
    );
    assert!(
        text.contains("revealed (predicted, proven by 16383 masked checks)"),
        "{text}"
    );
    assert!(text.contains("# confirmed: replayed"), "{text}");
    let predicted: fprev::SummationTree = text.lines().next().unwrap().parse().unwrap();
    assert_eq!(predicted, formula.tree(16384));
    // The proof's target: under n / 8 calls of NumPy.
    let opts = ProbeOptions {
        n: Some(16384),
        ..ProbeOptions::default()
    };
    let mut numpy = fprev::open("numpy:sum", &opts).unwrap();
    let proven = fprev::reveal::reveal_predicted(
        &mut numpy,
        &Options::default(),
        &predicted,
        &mut fprev::reveal::Silent,
    )
    .unwrap()
    .revealed()
    .expect("an order");
    assert_eq!(proven.tree, predicted);
    assert!(
        proven.stats.calls < 16384 / 8,
        "{} calls",
        proven.stats.calls
    );
}
