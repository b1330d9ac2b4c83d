//! `fprev invariance` against real libraries: the knobs that change an
//! order are named (MKL's thread count, OpenBLAS's core type), one that
//! does not is invariant (NumPy's sum under OpenBLAS's thread count), and
//! a box that varies is never invariant.

mod common;

use tempfile::TempDir;

use common::{assert_code, assert_error, run_in};

#[test]
fn mkl_threads_change_a_long_dot_product() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "invariance",
            "blas:dot@mkl",
            "-n",
            "65536",
            "--threads",
            "1,2",
        ],
    );
    let text = assert_code(&out, 1);
    assert!(text.contains("  [A] threads=1: "), "{text}");
    assert!(text.contains("  [B] threads=2: "), "{text}");
    assert!(
        text.contains("not invariant: changing threads alone changes the order or its arithmetic"),
        "{text}"
    );
}

#[test]
fn openblas_core_types_change_its_dot_product_and_threads_do_not() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "invariance",
            "blas:dot@openblas",
            "-n",
            "4096",
            "--threads",
            "1,2",
            "--env",
            "OPENBLAS_CORETYPE=Haswell,SkylakeX",
        ],
    );
    let text = assert_code(&out, 1);
    assert!(text.contains("4 settings, 2 distinct outcomes"), "{text}");
    assert!(
        text.contains("changing OPENBLAS_CORETYPE alone changes the order or its arithmetic"),
        "{text}"
    );
    assert!(text.contains("pin OPENBLAS_CORETYPE:"), "{text}");
    // Each core type's group is the tree a plain reveal under it gives.
    for (core, letter) in [("Haswell", 'A'), ("SkylakeX", 'B')] {
        for threads in ["1", "2"] {
            let line = format!("  [{letter}] threads={threads} OPENBLAS_CORETYPE={core}: ");
            assert!(text.contains(&line), "{line} in {text}");
        }
    }
}

#[cfg(feature = "python")]
#[test]
fn numpy_sum_is_invariant_under_openblas_threads() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "invariance",
            "numpy:sum",
            "-n",
            "1000",
            "--env",
            "OPENBLAS_NUM_THREADS=1,2",
        ],
    );
    let text = assert_code(&out, 0);
    assert!(
        text.contains(
            "invariant: every setting tried gave the same order and arithmetic, confirmed by replay"
        ),
        "{text}"
    );
}

/// Chunks of 8, joined in a random order: another order every call, so
/// never invariant, whatever the setting.
#[cfg(feature = "python")]
#[test]
fn a_black_box_that_varies_is_never_invariant() {
    let dir = TempDir::new().unwrap();
    std::fs::write(
        dir.path().join("joins.py"),
        "import random\nimport numpy as np\n\ndef f(x):\n    \
         c = [np.float32(np.sum(x[k:k + 8])) for k in range(0, len(x), 8)]\n    \
         random.shuffle(c)\n    t = np.float32(0)\n    for v in c:\n        \
         t = np.float32(t + v)\n    return t\n",
    )
    .unwrap();
    let spec = format!("python:{}:f", dir.path().join("joins.py").display());
    let out = run_in(
        dir.path(),
        &["invariance", &spec, "-n", "64", "--env", "FPREV_UNUSED=1,2"],
    );
    let text = assert_code(&out, 1);
    assert!(text.contains("varies from call to call"), "{text}");
    assert!(text.contains("no knob tried, pinned"), "{text}");
}

#[test]
fn bad_knobs_are_refused_before_any_reveal() {
    let dir = TempDir::new().unwrap();
    for args in [
        vec!["invariance", "native:pairwise"],
        vec!["invariance", "native:pairwise", "--env", "NOVALUES"],
        vec!["invariance", "native:pairwise", "--env", "A=1,1"],
        vec!["invariance", "native:pairwise", "--env", "BAD NAME=1,2"],
        vec![
            "invariance",
            "native:pairwise",
            "--env",
            "A=1,2,3,4,5,6,7,8",
            "--env",
            "B=1,2,3,4,5,6,7,8,9",
        ],
    ] {
        let out = run_in(dir.path(), &args);
        assert_error(&out, 2);
    }
}

/// BLIS's SGEMM computes the last column of a product of 65 columns (an
/// edge tile) with products rounded to f32, the others with exact
/// (fused) products: `--column` reveals each, and the study names the
/// column as what changes the result. The trees are checked by revealing
/// each column alone and comparing with diff.
#[test]
fn blis_computes_an_edge_column_otherwise() {
    let dir = TempDir::new().unwrap();
    let shape = ["-n", "1000", "--shape", "16,65,1000"];
    let out = run_in(
        dir.path(),
        &[
            &["invariance", "blas:gemm@blis"][..],
            &shape,
            &["--columns", "0,63,64"],
        ]
        .concat(),
    );
    let text = assert_code(&out, 1);
    assert!(text.contains("  [A] column=0: "), "{text}");
    assert!(text.contains("  [A] column=63: "), "{text}");
    assert!(text.contains("  [B] column=64: "), "{text}");
    for j in ["0", "64"] {
        let file = format!("c{j}.json");
        let args = [
            &["reveal", "blas:gemm@blis"][..],
            &shape,
            &["--column", j, "-o", &file],
        ]
        .concat();
        assert_code(&run_in(dir.path(), &args), 0);
    }
    let out = run_in(dir.path(), &["diff", "c0.json", "c64.json"]);
    assert!(assert_code(&out, 1).starts_with("same order, different arithmetic"));
    let out = run_in(
        dir.path(),
        &[
            "reveal",
            "blas:gemm@blis",
            "-n",
            "100",
            "--shape",
            "4,8,100",
            "--column",
            "8",
        ],
    );
    assert!(assert_error(&out, 2).contains("give a column below 8"));
    let out = run_in(dir.path(), &["reveal", "native:pairwise", "--column", "1"]);
    assert!(assert_error(&out, 2).contains("--column picks an output column of a GEMM"));
}

/// NumPy's float32 GEMM (K = 1,000, N = 64): row 0's order depends on the
/// batch size M, the same from M = 16 on; checked by revealing M = 1, 16
/// and 64 alone and comparing with diff. Rows other than 0 are revealed
/// too (--rows), and the verdict says where the arithmetic was compared.
#[cfg(feature = "python")]
#[test]
fn numpy_gemm_row_order_depends_on_the_batch_size() {
    let dir = TempDir::new().unwrap();
    let args = [
        "invariance",
        "numpy:gemm",
        "-n",
        "1000",
        "--shape",
        "64,64,1000",
        "--batch",
        "1,16,64",
    ];
    let text = assert_code(&run_in(dir.path(), &args), 1);
    assert!(text.contains("  [A] batch=1: "), "{text}");
    assert!(text.contains("  [B] batch=16: "), "{text}");
    assert!(text.contains("  [B] batch=64: "), "{text}");
    assert!(text.contains("changing batch alone changes"), "{text}");
    for m in ["1", "16", "64"] {
        let shape = format!("{m},64,1000");
        let file = format!("m{m}.json");
        let reveal = [
            "reveal",
            "numpy:gemm",
            "-n",
            "1000",
            "--shape",
            &shape,
            "-o",
            &file,
        ];
        assert_code(&run_in(dir.path(), &reveal), 0);
    }
    assert_code(&run_in(dir.path(), &["diff", "m16.json", "m64.json"]), 0);
    assert_code(&run_in(dir.path(), &["diff", "m1.json", "m64.json"]), 1);
    let rows = [
        "invariance",
        "numpy:gemm",
        "-n",
        "1000",
        "--shape",
        "64,64,1000",
        "--batch",
        "16,64",
        "--rows",
        "first,last",
    ];
    let text = assert_code(&run_in(dir.path(), &rows), 0);
    assert!(text.contains("  [A] batch=64 row=last: "), "{text}");
    assert!(text.contains("invariant in order"), "{text}");
    let no_shape = ["invariance", "numpy:gemm", "-n", "1000", "--batch", "1,2"];
    assert!(assert_error(&run_in(dir.path(), &no_shape), 2).contains("give --shape"));
}
