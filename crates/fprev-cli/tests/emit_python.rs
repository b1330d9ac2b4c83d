//! `fprev emit --lang python`: NumPy code that reproduces a library's
//! bits, written only when its check against the library passes, then run
//! here by python3 against that library again at sizes the check never
//! saw (NumPy's sum, OpenBLAS's sdot through ctypes).

mod common;

use std::process::Command;

use common::{assert_ok, run_in, stderr};
use tempfile::TempDir;

/// Runs Python `code` with `args` in `dir` under `env`; its stdout.
fn python(code: &str, args: &[&str], dir: &std::path::Path, env: &[(&str, &str)]) -> String {
    let out = Command::new("python3")
        .current_dir(dir)
        .envs(env.iter().copied())
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

/// No library reduction in the code (its comments name the black box):
/// the code imitates them.
fn assert_no_reduction(source: &str) {
    let code: Vec<&str> = source
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    for call in ["np.sum", "np.dot", ".sum(", "reduce", "fsum", "einsum", "@"] {
        assert!(
            code.iter().all(|l| !l.contains(call)),
            "it calls {call}:\n{source}"
        );
    }
}

/// Imports function `argv[1]` of module `argv[1]`.py and compares it with
/// NumPy's own sum on random arrays of dtype `argv[2]` at every n given,
/// printing how many agreed bit for bit.
const NUMPY_AGAINST: &str = r#"
import importlib, sys
import numpy as np
name, dtype, sizes = sys.argv[1], np.dtype(sys.argv[2]), [int(v) for v in sys.argv[3:]]
sys.path.insert(0, '.')
f = getattr(importlib.import_module(name), name)
rng = np.random.default_rng(7)
same = tried = 0
for n in sizes:
    for scale in (1.0, 1e6):
        x = (rng.standard_normal(n) * rng.uniform(0, scale, n)).astype(dtype)
        ours = f(x)
        same += type(ours) is dtype.type and ours.tobytes() == np.sum(x).tobytes()
        tried += 1
print(same, tried)
"#;

#[test]
fn numpy_s_sum_emitted_in_python_gives_numpy_s_bits() {
    let dir = TempDir::new().unwrap();
    for dtype in ["f32", "f64"] {
        let name = format!("numpy_sum_{dtype}");
        let file = format!("{name}.py");
        let out = run_in(
            dir.path(),
            &[
                "emit",
                "numpy:sum",
                "--dtype",
                dtype,
                "--lang",
                "python",
                "--check",
                "--check-sizes",
                "1..300,4096,65536",
                "-o",
                &file,
            ],
        );
        assert_ok(&out);
        assert!(stderr(&out).contains("Checked: compiled and run against numpy:sum"));
        let source = std::fs::read_to_string(dir.path().join(&file)).unwrap();
        assert!(source.contains(&format!("def {name}(x):")), "{source}");
        assert_no_reduction(&source);
        // Sizes the check never ran, against NumPy itself.
        let numpy = match dtype {
            "f32" => "float32",
            _ => "float64",
        };
        let mut args = vec![name.as_str(), numpy];
        args.extend(["1", "7", "127", "129", "1000", "3001", "100003", "2097152"]);
        assert_eq!(
            python(NUMPY_AGAINST, &args, dir.path(), &[]).trim(),
            "16 16"
        );
    }
}

/// OpenBLAS's sdot on its Haswell kernel: 32 lanes of fused multiply-adds
/// whose first products are rounded, run as one array of f32 lanes, and
/// an f64 tail: emitted, checked, and run here against cblas_sdot at
/// sizes the check never saw.
#[test]
fn openblas_sdot_emitted_in_python_gives_its_bits() {
    let dir = TempDir::new().unwrap();
    let env = [
        ("OPENBLAS_CORETYPE", "Haswell"),
        ("OPENBLAS_NUM_THREADS", "1"),
    ];
    let out = common::fprev()
        .current_dir(dir.path())
        .envs(env)
        .args([
            "emit",
            "blas:dot@openblas",
            "--lang",
            "python",
            "--check",
            "--check-sizes",
            "1..200,5000",
            "-o",
            "blas_dot_f32.py",
        ])
        .output()
        .unwrap();
    assert_ok(&out);
    let source = std::fs::read_to_string(dir.path().join("blas_dot_f32.py")).unwrap();
    assert!(
        source.contains("x.array('p', np.float64), o, s, n, k, np.float64, _fprev_add_f32_each)"),
        "the lanes' exact products are fused:\n{source}"
    );
    assert!(
        source.contains("f64 additions; products f32 first, f32 after"),
        "the tail"
    );
    assert_no_reduction(&source);
    let code = r#"
import ctypes, sys
import numpy as np
sys.path.insert(0, '.')
from blas_dot_f32 import blas_dot_f32
blas = ctypes.CDLL("libopenblas.so.0")
P = ctypes.POINTER(ctypes.c_float)
blas.cblas_sdot.restype = ctypes.c_float
blas.cblas_sdot.argtypes = [ctypes.c_int, P, ctypes.c_int, P, ctypes.c_int]
rng = np.random.default_rng(3)
same = 0
for n in (33, 1023, 40001, 300007):
    x = rng.standard_normal(n).astype(np.float32); y = rng.standard_normal(n).astype(np.float32)
    a = blas_dot_f32(x, y)
    b = blas.cblas_sdot(n, x.ctypes.data_as(P), 1, y.ctypes.data_as(P), 1)
    same += a.tobytes() == np.float32(b).tobytes()
print(same)
"#;
    assert_eq!(python(code, &[], dir.path(), &env).trim(), "4");
}

/// JAX's f32 sum takes Kahan steps over chunks of 64 past 4,096 summands:
/// emitted in Python, its compensated steps are checked against JAX at
/// sizes past that switch.
#[test]
fn jax_s_sum_emitted_in_python_takes_its_kahan_steps() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "emit",
            "jax:sum",
            "--lang",
            "python",
            "--check",
            "--check-sizes",
            "1..70,4095,4096,5000,40000",
            "-o",
            "j.py",
        ],
    );
    assert_ok(&out);
    let source = std::fs::read_to_string(dir.path().join("j.py")).unwrap();
    assert!(source.contains("Kahan steps"), "{source}");
    assert_no_reduction(&source);
}
