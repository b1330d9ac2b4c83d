//! `fprev reveal` and `fprev explain` of black boxes whose answers change
//! from call to call: exit 6 and the spread, never a precision or
//! compensation diagnosis; deterministic ones are never reported so.

mod common;

use tempfile::TempDir;

use common::{assert_code, run_in, stderr, stdout};

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
        stderr(&out).contains("fprev: note: deterministic within this one process: the same bits on every one of 10 calls"),
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
    for bad in [
        vec!["--skeleton-seconds", "86401"],
        vec!["--skeleton-seconds", "-1"],
        vec!["--skeleton-seconds", "5", "--no-skeleton"],
    ] {
        let mut args = vec!["reveal", "native:pairwise", "--runs", "5"];
        args.extend(bad);
        assert_code(&run_in(dir.path(), &args), 2);
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

/// The verdict and the spread are said before the skeleton is looked for,
/// and a search whose time is spent says what it left unexplored. Work
/// stealing regroups the sum on most calls at this size, not on all: a run
/// that saw none is tried again.
#[test]
fn the_verdict_comes_first_and_a_spent_search_says_what_it_left() {
    let dir = TempDir::new().unwrap();
    let args = [
        "reveal",
        "rayon:sum",
        "-n",
        "20000",
        "--threads",
        "4",
        "--runs",
        "20",
        "--skeleton-seconds",
        "0",
    ];
    for _ in 0..6 {
        let out = run_in(dir.path(), &args);
        if out.status.code() == Some(0) {
            continue;
        }
        let text = assert_code(&out, 6);
        let said = stderr(&out);
        let verdict = said
            .find("fprev: note: varies from call to call: ")
            .unwrap_or_else(|| panic!("{said}"));
        assert!(said[verdict..].contains("ulps"), "{said}");
        assert!(
            said[verdict..].contains("looking for the subtrees every call shares for up to 0 s"),
            "{said}"
        );
        assert!(text.starts_with("varies: rayon:sum: "), "{text}");
        assert!(
            text.contains("# unexplored: the search stopped when its 0 s were spent, "),
            "{text}"
        );
        assert!(text.contains("--skeleton-seconds"), "{text}");
        return;
    }
    panic!("rayon:sum on 4 threads never varied in 6 runs");
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

/// OpenMP reductions of one loop under two schedules. Dynamic: which
/// thread takes which chunk changes from call to call. Static: thread t of
/// T always sums the same contiguous block left to right (GCC gives the
/// first n mod T threads one summand more); the threads' partial sums are
/// then joined with an atomic add in the order the threads finish.
const OPENMP: &str = "\
#include <stddef.h>
float sum_dynamic(const float *x, size_t n) {
    float s = 0.0f;
    #pragma omp parallel for reduction(+:s) schedule(dynamic, 64)
    for (long i = 0; i < (long)n; i++) s += x[i];
    return s;
}
float sum_static(const float *x, size_t n) {
    float s = 0.0f;
    #pragma omp parallel for reduction(+:s) schedule(static)
    for (long i = 0; i < (long)n; i++) s += x[i];
    return s;
}
";

/// [`OPENMP`] compiled with `cc -fopenmp` into `dir`: its `dylib:` spec
/// of `symbol`.
fn openmp(dir: &std::path::Path, symbol: &str) -> String {
    let lib = dir.join("libomp_sum.so");
    if !lib.exists() {
        let c = dir.join("omp.c");
        std::fs::write(&c, OPENMP).unwrap();
        let status = std::process::Command::new("cc")
            .args(["-O2", "-shared", "-fPIC", "-fopenmp", "-o"])
            .arg(&lib)
            .arg(&c)
            .status()
            .expect("a C compiler `cc` with OpenMP (apt-get install gcc)");
        assert!(status.success(), "cc -fopenmp failed");
    }
    format!("dylib:{}:{symbol}", lib.display())
}

/// `fprev ARGS` in `dir` on `threads` OpenMP threads.
fn on_omp_threads(dir: &std::path::Path, threads: &str, args: &[&str]) -> std::process::Output {
    common::fprev()
        .current_dir(dir)
        .env("OMP_NUM_THREADS", threads)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn an_openmp_reduction_varies_on_several_threads_and_is_a_tree_on_one() {
    let dir = TempDir::new().unwrap();
    let spec = openmp(dir.path(), "sum_dynamic");
    let reveal = |threads| {
        on_omp_threads(
            dir.path(),
            threads,
            &[
                "reveal",
                &spec,
                "-n",
                "20000",
                "--runs",
                "50",
                "--no-skeleton",
            ],
        )
    };
    // Whether 4 threads split the sum otherwise from call to call rests on
    // the scheduler: on cores busy elsewhere they may run one after another
    // on every call. Each try says it varies, or that its answers were
    // inconsistent (it held through the calls that looked for variation
    // and varied during the reveal), or, where it held, that it was
    // deterministic (never a wrong tree); one of three must see it vary.
    let varied = (0..3).any(|_| {
        let o = reveal("4");
        match o.status.code() {
            Some(6) => {
                let text = stdout(&o);
                assert!(text.starts_with(&format!("varies: {spec}: ")), "{text}");
                true
            }
            Some(3) => {
                let text = stderr(&o);
                assert!(
                    text.contains("may depend on the values or vary between calls"),
                    "{text}"
                );
                true
            }
            _ => {
                assert_code(&o, 0);
                assert!(stderr(&o).contains("deterministic"), "{}", stderr(&o));
                false
            }
        }
    });
    assert!(
        varied,
        "4 threads gave the same bits in 3 tries of 50 calls"
    );
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
    assert!(
        text.contains("# fixed: every subtree above agrees with every answer to ")
            && text.contains("each asked 2 times, 50 times in a subproblem where answers disagree"),
        "{text}"
    );

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
        *fprev::document::TreeDocument::parse(&saved).unwrap().tree(),
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

/// The static schedule on 2 threads: block 0 (the first ceil(n/2)
/// summands) and block 1, each left to right, joined; the join of two
/// partial sums commutes, so the finishing order cannot show and the box
/// is deterministic. On 4 threads the order the threads finish in joins
/// the partial sums differently from call to call: the skeleton is the 4
/// threads' blocks (the first `n % 4` of `n / 4 + 1` summands, the rest
/// of `n / 4`, as the schedule deals them), each left to right, under one
/// varying join.
#[test]
fn an_openmp_static_schedule_is_its_blocks_on_two_threads_and_varies_on_four() {
    let dir = TempDir::new().unwrap();
    let spec = openmp(dir.path(), "sum_static");
    let n = 1001;
    let (q, r) = (n / 2, n % 2);
    let blocks = format!("native:blocked:{}", q + r.min(1));
    let out = on_omp_threads(
        dir.path(),
        "2",
        &[
            "reveal", &spec, "-n", "1001", "--runs", "50", "-o", "omp.json",
        ],
    );
    assert_code(&out, 0);
    assert!(stderr(&out).contains("deterministic"), "{}", stderr(&out));
    let out = run_in(
        dir.path(),
        &["reveal", &blocks, "-n", "1001", "-o", "blocks.json"],
    );
    assert_code(&out, 0);
    let out = run_in(dir.path(), &["diff", "omp.json", "blocks.json"]);
    let text = assert_code(&out, 0);
    assert!(text.starts_with("equal"), "{text}");
    let out = on_omp_threads(
        dir.path(),
        "4",
        &[
            "reveal",
            &spec,
            "-n",
            "1001",
            "--runs",
            "30",
            "-o",
            "omp4.json",
        ],
    );
    let text = assert_code(&out, 6);
    assert!(text.starts_with(&format!("varies: {spec}: ")), "{text}");
    let (q, r) = (n / 4, n % 4);
    let mut start = 0;
    let mut chains = Vec::new();
    for t in 0..4 {
        let size = q + usize::from(t < r);
        let chain = (start + 1..start + size).fold(start.to_string(), |c, k| format!("({c}+{k})"));
        chains.push(chain);
        start += size;
    }
    let expected: fprev::SummationTree = format!("({})", chains.join("+")).parse().unwrap();
    let saved = std::fs::read_to_string(dir.path().join("omp4.json")).unwrap();
    let doc = fprev::document::TreeDocument::parse(&saved).unwrap();
    assert_eq!(*doc.tree(), expected);
    let skeleton = doc.varies.and_then(|v| v.skeleton).unwrap();
    assert_eq!(skeleton.varying.len(), 1);
}

/// A Python callable summing 16 chunks in a `ThreadPoolExecutor` (each
/// left to right, NumPy letting go of the GIL while it adds) and adding
/// the chunk sums as they complete (`completed`) or as they were
/// submitted (`submitted`).
#[cfg(feature = "python")]
const THREADED: &str = "\
from concurrent.futures import ThreadPoolExecutor, as_completed
import numpy as np

_pool = ThreadPoolExecutor(max_workers=4)

def _chunk_sum(c):
    return np.cumsum(c)[-1]

def _partials(x, chunks=16):
    size = -(-len(x) // chunks)
    return [_pool.submit(_chunk_sum, x[k:k + size]) for k in range(0, len(x), size)]

def completed(x):
    t = x.dtype.type(0)
    for f in as_completed(_partials(x)):
        t = t + f.result()
    return t

def submitted(x):
    t = x.dtype.type(0)
    for f in _partials(x):
        t = t + f.result()
    return t
";

#[cfg(feature = "python")]
#[test]
fn a_thread_pool_joining_in_completion_order_varies_and_in_submission_order_is_its_chunks() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("pool.py"), THREADED).unwrap();
    let spec = |f: &str| format!("python:{}:{f}", dir.path().join("pool.py").display());
    // Chunks of 4096: long enough for the threads to finish out of order.
    let completed = spec("completed");
    let out = run_in(
        dir.path(),
        &[
            "reveal",
            &completed,
            "-n",
            "65536",
            "--runs",
            "50",
            "--no-skeleton",
        ],
    );
    let text = assert_code(&out, 6);
    assert!(
        text.starts_with(&format!("varies: {completed}: ")),
        "{text}"
    );
    let submitted = spec("submitted");
    let out = run_in(
        dir.path(),
        &[
            "reveal",
            &submitted,
            "-n",
            "1024",
            "--runs",
            "20",
            "-o",
            "pool.json",
        ],
    );
    assert_code(&out, 0);
    assert!(stderr(&out).contains("deterministic"), "{}", stderr(&out));
    // 16 chunks of 1024 / 16 summands, the chunk sums left to right.
    let blocks = format!("native:blocked:{}", 1024 / 16);
    let out = run_in(
        dir.path(),
        &["reveal", &blocks, "-n", "1024", "-o", "blocks.json"],
    );
    assert_code(&out, 0);
    let out = run_in(dir.path(), &["diff", "pool.json", "blocks.json"]);
    assert_code(&out, 0);
}

/// DuckDB's threads share a scan out as they come: on 2 threads, 300,000
/// rows (past one scan partition) are summed in an order that varies; on 1
/// thread, left to right.
#[cfg(feature = "python")]
#[test]
fn duckdb_sum_varies_on_two_threads_and_is_a_tree_on_one() {
    let dir = TempDir::new().unwrap();
    for args in [
        vec!["reveal", "duckdb:sum:2"],
        vec!["reveal", "duckdb:sum", "--threads", "2"],
    ] {
        let args = [
            args,
            vec![
                "-n",
                "300000",
                "--dtype",
                "f64",
                "--runs",
                "50",
                "--no-skeleton",
            ],
        ]
        .concat();
        let out = run_in(dir.path(), &args);
        let text = assert_code(&out, 6);
        assert!(
            text.starts_with(&format!("varies: {}: ", args[1])),
            "{text}"
        );
    }
    let out = run_in(
        dir.path(),
        &["reveal", "duckdb:sum:1", "-n", "1000", "--dtype", "f64"],
    );
    let text = assert_code(&out, 0);
    assert!(text.contains("# confirmed"), "{text}");
    assert!(text.contains("(native:sequential)"), "{text}");
}

/// Polars' Series.sum() adds one column on one thread whatever its pool:
/// on 1 thread and on 2, a confirmed tree and never reported as varying.
#[cfg(feature = "python")]
#[test]
fn polars_sum_is_a_tree_on_one_thread_and_on_two() {
    let dir = TempDir::new().unwrap();
    for threads in ["1", "2"] {
        for dtype in ["f32", "f64"] {
            let out = run_in(
                dir.path(),
                &[
                    "reveal",
                    "polars:sum",
                    "--threads",
                    threads,
                    "-n",
                    "10000",
                    "--dtype",
                    dtype,
                    "--runs",
                    "20",
                ],
            );
            let text = assert_code(&out, 0);
            assert!(text.contains("# confirmed"), "{text}");
            assert!(stderr(&out).contains("deterministic"), "{}", stderr(&out));
        }
    }
    // The spec's count and --threads must agree.
    let out = run_in(
        dir.path(),
        &["reveal", "polars:sum:1", "--threads", "2", "-n", "8"],
    );
    common::assert_error(&out, 2);
}

/// Deterministic boxes, asked 20 times each: never reported as varying.
#[cfg(feature = "python")]
#[test]
fn deterministic_boxes_never_vary() {
    let dir = TempDir::new().unwrap();
    for args in [
        vec!["numpy:sum", "-n", "1000"],
        vec!["blas:dot", "--threads", "1", "-n", "4096"],
        vec!["polars:sum:1", "-n", "1000"],
        vec!["duckdb:sum:1", "-n", "1000"],
    ] {
        let args = [vec!["reveal"], args, vec!["--runs", "20"]].concat();
        let out = run_in(dir.path(), &args);
        let text = assert_code(&out, 0);
        assert!(text.contains("# confirmed"), "{args:?}: {text}");
        assert!(
            stderr(&out)
                .contains("fprev: note: deterministic within this one process: the same bits on every one of 20 calls"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}
