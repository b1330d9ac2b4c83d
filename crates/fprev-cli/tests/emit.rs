//! `fprev emit`: code that reproduces a black box's bits, written only
//! when its check against the real library passes, then compiled and run
//! here against that library again (NumPy through ctypes, OpenBLAS's
//! sdot), independently of fprev's own check.

mod common;

use std::process::Command;

use common::{assert_code, assert_error, assert_ok, fprev, run_in, stderr};
use tempfile::TempDir;

/// Runs Python `code` with the arguments `args`; its stdout.
fn python(code: &str, args: &[&str]) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(code)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Compiles the emitted C at `c` as its comment says.
fn compile(c: &std::path::Path) -> std::path::PathBuf {
    let lib = c.with_extension("so");
    let status = Command::new("cc")
        .args(["-std=c99", "-O3", "-march=native", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(c)
        .arg("-lm")
        .status()
        .unwrap();
    assert!(status.success());
    lib
}

/// Calls `symbol` of `lib` and NumPy's own sum on random float32 arrays
/// at every n given, printing how many agreed bit for bit.
const NUMPY_AGAINST: &str = r#"
import ctypes, sys
import numpy as np
lib, symbol, sizes = sys.argv[1], sys.argv[2], [int(v) for v in sys.argv[3:]]
f = getattr(ctypes.CDLL(lib), symbol)
f.restype = ctypes.c_float
f.argtypes = [ctypes.POINTER(ctypes.c_float), ctypes.c_size_t]
rng = np.random.default_rng(7)
same = tried = 0
for n in sizes:
    for scale in (1.0, 1e6):
        x = (rng.standard_normal(n) * rng.uniform(0, scale, n)).astype(np.float32)
        ours = f(x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), n)
        same += np.float32(ours).tobytes() == np.sum(x).tobytes()
        tried += 1
print(same, tried)
"#;

#[test]
fn numpy_s_sum_emitted_in_c_gives_numpy_s_bits() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "emit",
            "numpy:sum",
            "--check",
            "--check-sizes",
            "1..300,4096,65536",
            "-o",
            "sum.c",
        ],
    );
    assert_ok(&out);
    assert!(stderr(&out).contains("Checked: compiled and run against numpy:sum"));
    let c = dir.path().join("sum.c");
    let source = std::fs::read_to_string(&c).unwrap();
    assert!(source.contains("float numpy_sum_f32(const float *x, size_t n)"));
    assert!(
        source
            .contains("native:halves(128, 8, body(8, interleave(8, sequential, pairwise), then))")
    );
    // Sizes the check never ran, against NumPy itself.
    let lib = compile(&c);
    let sizes: Vec<String> = [1usize, 7, 127, 129, 1000, 3001, 100_003, 1 << 21]
        .iter()
        .map(|n| n.to_string())
        .collect();
    let mut args = vec![lib.to_str().unwrap(), "numpy_sum_f32"];
    args.extend(sizes.iter().map(String::as_str));
    assert_eq!(python(NUMPY_AGAINST, &args).trim(), "16 16");
}

/// As [`NUMPY_AGAINST`], each array a view one byte past a 64-byte
/// boundary: NumPy buffers such an array in chunks of 8,192 elements.
const NUMPY_UNALIGNED_AGAINST: &str = r#"
import ctypes, sys
import numpy as np
lib, symbol, sizes = sys.argv[1], sys.argv[2], [int(v) for v in sys.argv[3:]]
f = getattr(ctypes.CDLL(lib), symbol)
f.restype = ctypes.c_float
f.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
rng = np.random.default_rng(7)
same = tried = 0
for n in sizes:
    block = np.zeros(4 * n + 65, dtype=np.uint8)
    start = -block.ctypes.data % 64 + 1
    x = block[start:start + 4 * n].view(np.float32)
    for scale in (1.0, 1e6):
        x[...] = (rng.standard_normal(n) * rng.uniform(0, scale, n)).astype(np.float32)
        ours = f(x.ctypes.data, n)
        same += np.float32(ours).tobytes() == np.sum(x).tobytes()
        tried += 1
print(same, tried)
"#;

/// `emit --offset 1B` writes code for NumPy's sum of a float32 view one
/// byte past a boundary (blocks of 8,192 summands), checks it against
/// `np.sum` handed such views, and says in its comment and on stderr which
/// alignment it matches; run here on such views at sizes its check never
/// ran, it gives NumPy's bits, where the code for NumPy's own allocation
/// does not past 8,192. Before, `emit` refused `--offset` (exit 2).
#[test]
fn numpy_s_sum_of_an_unaligned_view_is_emitted_at_its_offset() {
    let dir = TempDir::new().unwrap();
    let emit = |formula: &str, more: &[&str]| {
        let args = [&["emit", "numpy:sum", "--formula", formula][..], more].concat();
        let out = run_in(dir.path(), &args);
        assert_ok(&out);
        out
    };
    let body = "halves(128, 8, body(8, interleave(8, sequential, pairwise), then))";
    let blocks = format!("blocks(8192, {body}, sequential)");
    let check = ["--check", "--check-sizes", "1..40,8192,8193,20000"];
    let out = emit(
        &blocks,
        &[&["--offset", "1B", "-o", "u.c"], &check[..]].concat(),
    );
    let matches = "This code matches numpy:sum on an input in an array starting 1 byte past a \
                   64-byte boundary";
    assert!(stderr(&out).contains(matches), "{}", stderr(&out));
    let unaligned = dir.path().join("u.c");
    let source = std::fs::read_to_string(&unaligned).unwrap();
    assert!(source.contains(matches) && source.contains("Checked: compiled and run"));
    emit(body, &["-o", "a.c"]);
    let aligned = dir.path().join("a.c");
    let source = std::fs::read_to_string(&aligned).unwrap();
    assert!(
        source.contains("where NumPy's allocation puts it"),
        "{source}"
    );
    let sizes = ["8193", "30001", "100003"];
    let against = |c: &std::path::Path| {
        let lib = compile(c);
        let args = [&[lib.to_str().unwrap(), "numpy_sum_f32"][..], &sizes].concat();
        python(NUMPY_UNALIGNED_AGAINST, &args)
    };
    assert_eq!(against(&unaligned).trim(), "6 6");
    assert_ne!(against(&aligned).trim(), "6 6");
}

#[test]
fn a_formula_the_black_box_does_not_follow_is_refused_with_5() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "emit",
            "native:pairwise",
            "--formula",
            "sequential",
            "-o",
            "x.c",
        ],
    );
    let err = assert_code(&out, 5);
    assert!(err.is_empty());
    assert!(
        stderr(&out).contains("the black box's tree there is not native:sequential's"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("x.c").exists());
}

/// A formula given by hand is proven as an explained one is, at every size
/// `explain` reveals and checks: `pairwise` is the tree of a black box
/// that sums pairwise below 2,000 summands and folded in halves from there
/// at the reference size 1,000 (where it was all that was checked), and
/// is refused at 2,048, the first size that shows it wrong. The right
/// formula is written, saying where it was proven.
#[test]
fn a_formula_given_by_hand_is_proven_at_explain_s_sizes() {
    let dir = TempDir::new().unwrap();
    let spec = "native:below(2000, pairwise, fold)";
    let out = run_in(
        dir.path(),
        &["emit", spec, "--formula", "pairwise", "-o", "x.c"],
    );
    assert_code(&out, 5);
    assert!(
        stderr(&out).contains(
            "fprev: error: at n = 2048, the black box's tree there is not native:pairwise's"
        ),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("x.c").exists());
    let out = run_in(
        dir.path(),
        &[
            "emit",
            spec,
            "--formula",
            "below(2000, pairwise, fold)",
            "-o",
            "x.c",
        ],
    );
    assert_ok(&out);
    let c = std::fs::read_to_string(dir.path().join("x.c")).unwrap();
    assert!(
        c.contains("The order was given (--formula); its tree proven now at n = 1..40,"),
        "{c}"
    );
}

/// A tree file's formula and confirmation are claims, checked against its
/// black box before code follows them: the formula of a confirmed
/// predicted tree, edited to one that gives the same tree at the file's
/// size but not at others, is refused (it was written as the code, exit
/// 0); the file unedited is emitted, its formula proven now.
#[test]
fn a_tree_file_s_formula_is_proven_on_its_black_box() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "reveal",
            "native:pairwise",
            "-n",
            "5000",
            "--infer",
            "-o",
            "p.json",
        ],
    );
    assert_ok(&out);
    let text = std::fs::read_to_string(dir.path().join("p.json")).unwrap();
    let edited = text.replace(
        "\"formula\": \"pairwise\"",
        "\"formula\": \"below(4000, reverse, pairwise)\"",
    );
    assert_ne!(edited, text);
    std::fs::write(dir.path().join("edited.json"), edited).unwrap();
    let out = run_in(dir.path(), &["emit", "edited.json", "-o", "e.c"]);
    assert_code(&out, 5);
    assert!(
        stderr(&out)
            .contains("the black box's tree there is not native:below(4000, reverse, pairwise)'s"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("e.c").exists());
    let out = run_in(dir.path(), &["emit", "p.json", "-o", "p.c"]);
    assert_ok(&out);
    let c = std::fs::read_to_string(dir.path().join("p.c")).unwrap();
    assert!(
        c.contains("from the tree file p.json (n = 5000); its tree proven now at n = 1..40,"),
        "{c}"
    );
    // A file that names no black box cannot be checked, so is refused.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut v = v;
    v.as_object_mut().unwrap().remove("probe");
    std::fs::write(dir.path().join("anon.json"), v.to_string()).unwrap();
    let err = assert_error(&run_in(dir.path(), &["emit", "anon.json"]), 2);
    assert!(err.contains("names no black box"), "{err}");
}

#[test]
fn an_unconfirmed_tree_file_is_refused_with_5() {
    let dir = TempDir::new().unwrap();
    // A tree of native:pairwise checked against a sequential sum: the
    // reveal exits 5 and writes the tree marked not confirmed.
    let reveal = run_in(
        dir.path(),
        &["reveal", "native:pairwise", "-n", "64", "-o", "t.json"],
    );
    assert_ok(&reveal);
    let text = std::fs::read_to_string(dir.path().join("t.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut v = v;
    v["confirmation"]["passed"] = serde_json::json!(0);
    std::fs::write(dir.path().join("bad.json"), v.to_string()).unwrap();
    let out = run_in(dir.path(), &["emit", "bad.json", "-o", "x.c"]);
    let err = assert_error(&out, 5);
    assert!(err.contains("is not confirmed"), "{err}");
    assert!(!dir.path().join("x.c").exists());
    // The confirmed file is emitted from its known formula... or refused
    // for want of one: pairwise at 64 is the formula `pairwise` only where
    // one is known; a predicted tree carries its own.
    let predicted = run_in(
        dir.path(),
        &[
            "reveal",
            "native:pairwise",
            "-n",
            "5000",
            "--infer",
            "-o",
            "p.json",
        ],
    );
    assert_ok(&predicted);
    let out = run_in(
        dir.path(),
        &["emit", "p.json", "--lang", "cuda", "-o", "p.cu"],
    );
    assert_ok(&out);
    let cu = std::fs::read_to_string(dir.path().join("p.cu")).unwrap();
    assert!(
        cu.contains("__global__ void native_pairwise_f32_kernel"),
        "{cu}"
    );
}

#[test]
fn bad_emit_flags_are_one_line_with_2() {
    let dir = TempDir::new().unwrap();
    let out = run_in(dir.path(), &["emit", "numpy:sum", "--lang", "fortran"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run_in(
        dir.path(),
        &["emit", "native:sequential", "--name", "9lives"],
    );
    let err = assert_error(&out, 2);
    assert!(err.contains("not a function name"), "{err}");
    let out = run_in(dir.path(), &["emit", "native:sequential", "--dtype", "f16"]);
    let err = assert_error(&out, 2);
    assert!(err.contains("f32 or f64"), "{err}");
}

/// OpenBLAS's sdot on its Haswell kernel: 32 lanes of fused multiply-adds
/// whose first products are rounded, an f64 tail: emitted, checked, and
/// run here against cblas_sdot at sizes the check never saw.
#[test]
fn openblas_sdot_emitted_in_c_gives_its_bits() {
    let dir = TempDir::new().unwrap();
    let out = common::fprev()
        .current_dir(dir.path())
        .env("OPENBLAS_CORETYPE", "Haswell")
        .env("OPENBLAS_NUM_THREADS", "1")
        .args([
            "emit",
            "blas:dot@openblas",
            "--check",
            "--check-sizes",
            "1..200,5000",
            "-o",
            "dot.c",
        ])
        .output()
        .unwrap();
    assert_ok(&out);
    let source = std::fs::read_to_string(dir.path().join("dot.c")).unwrap();
    assert!(
        source.contains("fmaf("),
        "the lanes' exact products are fused"
    );
    assert!(
        source.contains("f64 additions; products f32 first, f32 after"),
        "the tail"
    );
    let lib = compile(&dir.path().join("dot.c"));
    let code = r#"
import ctypes, sys
import numpy as np
lib = ctypes.CDLL(sys.argv[1])
blas = ctypes.CDLL("libopenblas.so.0")
P = ctypes.POINTER(ctypes.c_float)
lib.blas_dot_f32.restype = blas.cblas_sdot.restype = ctypes.c_float
lib.blas_dot_f32.argtypes = [P, P, ctypes.c_size_t]
blas.cblas_sdot.argtypes = [ctypes.c_int, P, ctypes.c_int, P, ctypes.c_int]
rng = np.random.default_rng(3)
same = 0
for n in (33, 1023, 40001, 300007):
    x = rng.standard_normal(n).astype(np.float32); y = rng.standard_normal(n).astype(np.float32)
    a = lib.blas_dot_f32(x.ctypes.data_as(P), y.ctypes.data_as(P), n)
    b = blas.cblas_sdot(n, x.ctypes.data_as(P), 1, y.ctypes.data_as(P), 1)
    same += np.float32(a).tobytes() == np.float32(b).tobytes()
print(same)
"#;
    let got = Command::new("python3")
        .env("OPENBLAS_CORETYPE", "Haswell")
        .env("OPENBLAS_NUM_THREADS", "1")
        .arg("-c")
        .arg(code)
        .arg(&lib)
        .output()
        .unwrap();
    assert!(
        got.status.success(),
        "{}",
        String::from_utf8_lossy(&got.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&got.stdout).trim(), "4");
}

/// JAX's f32 sum takes Kahan steps over chunks of 64 past 4,096 summands:
/// emitted, its compensated steps are checked against JAX at sizes past
/// that switch.
#[test]
fn jax_s_sum_emitted_in_c_takes_its_kahan_steps() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "emit",
            "jax:sum",
            "--check",
            "--check-sizes",
            "1..70,4095,4096,5000,40000",
            "-o",
            "j.c",
        ],
    );
    assert_ok(&out);
    let source = std::fs::read_to_string(dir.path().join("j.c")).unwrap();
    assert!(source.contains("Kahan steps"), "{source}");
}

/// JAX's f32 dot adds an FMA chain up to 32 summands and rounds its
/// products past, in one order: emitted, the formula is split where the
/// arithmetic changes (found by bisection), and the code gives JAX's bits
/// on both sides of it, two summands included.
#[test]
fn jax_s_dot_emitted_in_c_follows_its_arithmetic_at_every_size() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "emit",
            "jax:dot",
            "--check",
            "--check-sizes",
            "1..80,1000,5000",
            "-o",
            "d.c",
        ],
    );
    assert_ok(&out);
    let source = std::fs::read_to_string(dir.path().join("d.c")).unwrap();
    assert!(source.contains("native:below(33, "), "{source}");
    assert!(source.contains("from reveals at n = 3,32,"), "{source}");
}

/// BLIS's sdotv is a vectorised kernel: ten registers of eight lanes
/// merged into five, then two, then one, its lanes left to right and the
/// rest apart. Emitted, its stages, merges and fold give BLIS's bits at
/// every size to 300, below and past each stage's chunk. (BLIS's AVX2
/// kernels are pinned, `BLIS_ARCH_TYPE` 6, 0.9.0's Zen 3: an AVX-512 CPU
/// would otherwise run its SkylakeX `dotv`.)
#[test]
fn blis_s_sdotv_emitted_in_c_writes_its_kernel_s_stages() {
    let dir = TempDir::new().unwrap();
    let out = fprev()
        .current_dir(dir.path())
        .env("BLIS_ARCH_TYPE", "6")
        .args([
            "emit",
            "blas:dot@blis",
            "--lang",
            "c",
            "--check",
            "--check-sizes",
            "1..300,4099,65539",
            "-o",
            "b.c",
        ])
        .output()
        .expect("fprev runs");
    assert_ok(&out);
    let err = stderr(&out);
    assert!(
        err.contains(
            "Checked: compiled and run against blas:dot@blis on this machine, bit for bit"
        ),
        "{err}"
    );
    let source = std::fs::read_to_string(dir.path().join("b.c")).unwrap();
    assert!(
        source.contains("simd(8, 10[0+5, 1+6, 2+7, 3+8, 4+9], 5[(0+2)+4, 1+3], 2[0+1], 1, "),
        "{source}"
    );
}

/// A GEMV's order is found along K with rows of 16 (`--shape 16,1,K`), as
/// explain finds it, and the code is checked against the GEMV of that
/// shape at each size, K taking the size: without the shape the check's
/// square matrices are past memory long before 2^20. A shape without
/// rows is bad input (exit 2).
#[test]
fn a_gemv_is_emitted_and_checked_along_k_with_its_rows() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "emit",
            "blas:gemv@blis",
            "--shape",
            "16,1,1",
            "--check",
            "--check-sizes",
            "1..40,1000,4099,65539",
            "-o",
            "g.c",
        ],
    );
    assert_ok(&out);
    let err = stderr(&out);
    assert!(
        err.contains("Checked: compiled and run against blas:gemv@blis on this machine")
            && err.contains("65539"),
        "{err}"
    );
    let bad = run_in(dir.path(), &["emit", "blas:gemv@blis", "--shape", "0,1,1"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}
