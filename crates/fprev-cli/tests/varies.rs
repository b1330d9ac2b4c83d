//! `fprev reveal` and `fprev explain` of black boxes whose answers change
//! from call to call: exit 6 and the spread, never a precision or
//! compensation diagnosis; deterministic ones are never reported so.

mod common;

use tempfile::TempDir;

use common::{assert_code, run_in, stderr};

/// The black box: fixed chunks of 8 summed left to right, joined
/// in a random order on every call.
#[cfg(feature = "python")]
const RANDOM_JOINS: &str = "\
import random
import numpy as np

def f(x):
    chunks = [np.float32(0)] * 0
    for k in range(0, len(x), 8):
        s = np.float32(0)
        for v in x[k:k + 8]:
            s = np.float32(s + v)
        chunks.append(s)
    random.shuffle(chunks)
    t = np.float32(0)
    for c in chunks:
        t = np.float32(t + c)
    return t
";

#[cfg(feature = "python")]
#[test]
fn chunks_joined_at_random_vary_and_say_so() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("joins.py"), RANDOM_JOINS).unwrap();
    let spec = format!("python:{}:f", dir.path().join("joins.py").display());
    for args in [
        vec!["reveal", &spec, "-n", "128"],
        vec!["explain", &spec, "-n", "16,64"],
    ] {
        let out = run_in(dir.path(), &args);
        let text = assert_code(&out, 6);
        assert!(text.starts_with(&format!("varies: {spec}: ")), "{text}");
        assert!(
            text.contains("ulps") && text.contains("condition number"),
            "{text}"
        );
        let said = text.clone() + &stderr(&out);
        for wrong in [
            "Neumaier",
            "compensated",
            "closer to the exact sum",
            "--dtype f64",
        ] {
            assert!(!said.contains(wrong), "{args:?} blames precision: {said}");
        }
    }
}

#[cfg(feature = "python")]
#[test]
fn runs_look_for_variation_on_purpose() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("joins.py"), RANDOM_JOINS).unwrap();
    let spec = format!("python:{}:f", dir.path().join("joins.py").display());
    let out = run_in(dir.path(), &["reveal", &spec, "-n", "64", "--runs", "10"]);
    assert_code(&out, 6);
    // NumPy's sum adds in one order: revealed as ever, and said to be fixed.
    let out = run_in(
        dir.path(),
        &["reveal", "numpy:sum", "-n", "64", "--runs", "10"],
    );
    assert_code(&out, 0);
    assert!(
        stderr(&out).contains("fprev: note: deterministic: the same bits on every one of 10 calls"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn runs_are_bounded_and_one_run_shows_nothing() {
    let dir = TempDir::new().unwrap();
    for bad in ["1", "x", "1000001"] {
        let out = run_in(dir.path(), &["reveal", "native:pairwise", "--runs", bad]);
        assert_code(&out, 2);
    }
    // Deterministic native orders never vary.
    let out = run_in(dir.path(), &["reveal", "native:pairwise", "--runs", "5"]);
    assert_code(&out, 0);
}

#[test]
fn rayon_sum_varies_on_several_threads_and_is_a_tree_on_one() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "reveal",
            "rayon:sum",
            "-n",
            "100000",
            "--threads",
            "4",
            "--runs",
            "20",
            "--no-skeleton",
        ],
    );
    let text = assert_code(&out, 6);
    assert!(text.starts_with("varies: rayon:sum: "), "{text}");
    assert!(!text.contains("skeleton"), "{text}");
    assert!(
        stderr(&out).contains("rayon on 4 threads"),
        "{}",
        stderr(&out)
    );
    // One thread: one order, revealed and confirmed by replay.
    let out = run_in(
        dir.path(),
        &["reveal", "rayon:sum:1", "-n", "1000", "--runs", "10"],
    );
    let text = assert_code(&out, 0);
    assert!(text.contains("# confirmed: replayed"), "{text}");
    assert!(stderr(&out).contains("deterministic"), "{}", stderr(&out));
}

#[test]
fn blas_dot_on_one_thread_never_varies() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "reveal",
            "blas:dot",
            "-n",
            "4096",
            "--threads",
            "1",
            "--runs",
            "10",
        ],
    );
    let text = assert_code(&out, 0);
    assert!(text.contains("# confirmed"), "{text}");
}

/// An OpenMP reduction with a dynamic schedule: which thread takes which
/// chunk, and in which order the threads' partial sums are joined, change
/// from call to call.
const OPENMP: &str = "\
#include <stddef.h>
float sum_dynamic(const float *x, size_t n) {
    float s = 0.0f;
    #pragma omp parallel for reduction(+:s) schedule(dynamic, 64)
    for (long i = 0; i < (long)n; i++) s += x[i];
    return s;
}
";

#[test]
fn an_openmp_reduction_varies_on_several_threads_and_is_a_tree_on_one() {
    let dir = TempDir::new().unwrap();
    let c = dir.path().join("omp.c");
    std::fs::write(&c, OPENMP).unwrap();
    let lib = dir.path().join("libomp_sum.so");
    let status = std::process::Command::new("cc")
        .args(["-O2", "-shared", "-fPIC", "-fopenmp", "-o"])
        .arg(&lib)
        .arg(&c)
        .status()
        .expect("a C compiler `cc` with OpenMP (apt-get install gcc)");
    assert!(status.success(), "cc -fopenmp failed");
    let spec = format!("dylib:{}:sum_dynamic", lib.display());
    let reveal = |threads: &str| {
        common::fprev()
            .current_dir(dir.path())
            .env("OMP_NUM_THREADS", threads)
            .args([
                "reveal",
                &spec,
                "-n",
                "20000",
                "--runs",
                "50",
                "--no-skeleton",
            ])
            .output()
            .unwrap()
    };
    let text = assert_code(&reveal("4"), 6);
    assert!(text.starts_with(&format!("varies: {spec}: ")), "{text}");
    let one = reveal("1");
    let text = assert_code(&one, 0);
    assert!(text.contains("# confirmed"), "{text}");
    assert!(stderr(&one).contains("deterministic"), "{}", stderr(&one));
}

/// The callable at n = 128: its skeleton is its 16 chunks, each
/// left to right (written here from the callable's description), under
/// one join that varies; the file keeps it, `render` draws the join
/// dashed, and `replay:` and `check` refuse it (it has no one order).
#[cfg(feature = "python")]
#[test]
fn the_skeleton_of_chunks_joined_at_random_is_found_saved_and_drawn() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("joins.py"), RANDOM_JOINS).unwrap();
    let spec = format!("python:{}:f", dir.path().join("joins.py").display());
    let out = run_in(dir.path(), &["reveal", &spec, "-n", "128", "--runs", "50"]);
    let text = assert_code(&out, 6);
    let chains: Vec<String> = (0..128)
        .step_by(8)
        .map(|a| (a + 1..a + 8).fold(a.to_string(), |t, k| format!("({t}+{k})")))
        .collect();
    let expected = format!("({})", chains.join("+"));
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with(&format!("varies: {spec}: ")), "{text}");
    assert!(lines[0].contains("on 50 calls each"), "{text}");
    assert_eq!(lines[1], expected);
    assert!(
        text.contains(
            "# skeleton: 16 runs of 8 consecutive summands, each left to right, joined in an \
             order that varies"
        ),
        "{text}"
    );
    assert!(text.contains("# fixed: every subtree above was a subtree in each of 50 calls"));

    let out = run_in(
        dir.path(),
        &["reveal", &spec, "-n", "128", "-o", "skeleton.json"],
    );
    assert_code(&out, 6);
    let saved = std::fs::read_to_string(dir.path().join("skeleton.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(doc["varies"]["version"], 1);
    assert_eq!(
        doc["varies"]["skeleton"]["varying"],
        serde_json::json!([[0, 128]])
    );
    assert_eq!(doc["varies"]["runs"], 50);
    let tree: fprev::SummationTree = expected.parse().unwrap();
    assert_eq!(
        fprev::document::TreeDocument::parse(&saved).unwrap().tree,
        tree
    );
    let out = run_in(dir.path(), &["render", "skeleton.json", "--format", "dot"]);
    let dot = assert_code(&out, 0);
    assert_eq!(dot.matches("style=\"dashed\"]").count(), 1 + 16, "{dot}");
    assert!(dot.contains("label=\"varies\\n16 parts\""), "{dot}");
    let out = run_in(dir.path(), &["render", "skeleton.json"]);
    assert!(assert_code(&out, 0).contains("widest varying join 16 parts"));
    // Never "equal": a varying black box has no one order.
    let out = run_in(dir.path(), &["diff", "skeleton.json", "skeleton.json"]);
    assert!(assert_code(&out, 1).contains("both vary from call to call, with the same skeleton"));
    std::fs::write(dir.path().join("chains.txt"), &expected).unwrap();
    let out = run_in(dir.path(), &["diff", "skeleton.json", "chains.txt"]);
    let said = assert_code(&out, 1);
    assert!(
        said.contains("skeleton.json varies from call to call"),
        "{said}"
    );
    assert!(said.contains("chains.txt sums in one order"), "{said}");
    for args in [
        vec!["reveal", "replay:skeleton.json"],
        vec!["check", "skeleton.json", &spec],
    ] {
        let out = run_in(dir.path(), &args);
        let said = common::assert_error(&out, 2);
        assert!(said.contains("varies"), "{args:?}: {said}");
    }
}
