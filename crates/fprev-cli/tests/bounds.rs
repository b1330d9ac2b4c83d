//! Every size, count and index a user writes (on the command line, in a
//! formula, a tree file or a survey file) is bounded before anything is
//! allocated for it: too large is one error line and exit 2, at once, never
//! a panic, an allocation abort or a silent pass (issue 35).

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

mod common;
use common::{assert_error, assert_ok, run, run_in, stderr};

/// Exit 2, one line `fprev: error: ...` on stderr, nothing on stdout, no
/// panic; returns the line.
fn assert_input_error(out: &Output) -> String {
    assert_error(out, 2)
}

/// A usage error as clap reports it (exit 2, no panic); returns stderr.
fn assert_usage_error(out: &Output) -> String {
    let err = stderr(out);
    assert!(!err.contains("panicked"), "panic: {err}");
    assert_eq!(out.status.code(), Some(2), "expected exit 2\nstderr: {err}");
    assert!(err.starts_with("error: "), "{err}");
    err
}

/// Runs `args` and asserts it is refused at once (well under the time an
/// allocation of gigabytes would take).
fn refused_at_once(dir: &Path, args: &[&str]) -> String {
    let start = Instant::now();
    let out = run_in(dir, args);
    let line = assert_input_error(&out);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{args:?} took {:?}",
        start.elapsed()
    );
    line
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    std::fs::write(dir.join(name), text).unwrap();
    name.to_string()
}

// ---------------------------------------------------------------------------
// Tree files
// ---------------------------------------------------------------------------

#[test]
fn a_leaf_index_past_the_leaf_count_is_refused_before_it_allocates() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    write(d, "ok.json", r#"{"tree":[[0,1],[2,3]]}"#);
    for leaf in ["18446744073709551615", "99999999999", "3000000000"] {
        let file = write(
            d,
            &format!("leaf{leaf}.json"),
            &format!(r#"{{"tree":[[0,1],[2,{leaf}]]}}"#),
        );
        let replay = format!("replay:{file}");
        for args in [
            vec!["render", file.as_str()],
            vec!["diff", file.as_str(), "ok.json"],
            vec!["check", file.as_str(), "native:pairwise"],
            vec!["reveal", replay.as_str()],
        ] {
            let line = refused_at_once(d, &args);
            assert!(
                line.contains(&format!("leaf {leaf} is out of range")) && line.contains("4 leaves"),
                "{args:?}: {line}"
            );
        }
    }
    // The text form reads through the same parser.
    let line = refused_at_once(
        d,
        &["render", &write(d, "t.txt", "((0+1)+(2+99999999999))")],
    );
    assert!(line.contains("out of range"), "{line}");
}

#[test]
fn a_model_naming_a_product_leaf_outside_the_tree_is_refused() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let model = json!({
        "version": 4,
        "default": {"format": "f32", "rounding": "nearest-even"},
        "products": {"default": "exact", "leaves": {"77": "f32"}}
    });
    let file = write(
        d,
        "p.json",
        &json!({"tree": [[0, 1], [2, 3]], "arithmetic": model}).to_string(),
    );
    let line = refused_at_once(d, &["reveal", &format!("replay:{file}")]);
    assert!(line.contains("77") && line.contains("4 summands"), "{line}");
}

#[test]
fn a_model_that_does_not_fit_its_tree_is_refused_not_checked_ok() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let default = json!({"format": "f32", "rounding": "nearest-even"});
    let node = json!({"first": 99, "size": 7, "format": "f64", "rounding": "nearest-even"});
    for (name, model, says) in [
        (
            "nodes",
            json!({"version": 4, "default": default, "nodes": [node]}),
            "no node of 7 summands from x99",
        ),
        (
            "bits",
            json!({"version": 4, "default": {"format": "f32", "rounding": "nearest-even",
                                              "fused_bits": 100000}}),
            "fused_bits",
        ),
        ("v0", json!({"version": 0, "default": default}), "version 0"),
    ] {
        let file = write(
            d,
            &format!("{name}.json"),
            &json!({"tree": [[0, 1], [2, 3]], "arithmetic": model}).to_string(),
        );
        // The black box is the tree's own order: only the file is wrong.
        let line = refused_at_once(d, &["check", &file, "native:pairwise", "-n", "4"]);
        assert!(line.contains(says), "{name}: {line}");
    }
    // A node that does exist still reads, and its model is replayed.
    let fine = json!({"first": 0, "size": 2, "format": "f64", "rounding": "nearest-even"});
    let file = write(
        d,
        "fine.json",
        &json!({"tree": [[0, 1], [2, 3]],
                "arithmetic": {"version": 4, "default": default, "nodes": [fine]}})
        .to_string(),
    );
    let out = run_in(d, &["check", &file, "native:pairwise", "-n", "4", "-q"]);
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
}

// ---------------------------------------------------------------------------
// Formulas
// ---------------------------------------------------------------------------

#[test]
fn formula_numbers_past_the_bound_are_refused_at_once() {
    let dir = TempDir::new().unwrap();
    let max = u64::MAX.to_string();
    for spec in [
        format!("native:fused:{max}"),
        format!("native:strided:{max}"),
        format!("native:split({max}, sequential, pairwise)"),
        format!("native:interleave(2, fused:{max}, fused:{max})"),
        "native:kblocks(9223372036854775808, 1, sequential)".to_string(),
    ] {
        let line = refused_at_once(dir.path(), &["reveal", &spec, "-n", "17"]);
        assert!(line.contains("at most"), "{spec}: {line}");
    }
}

#[test]
fn large_formula_numbers_within_the_bound_cost_what_n_costs() {
    // A billion blocks of 17 summands: 17 blocks of one and empty ones,
    // the block sums halved pairwise, which is pairwise halving itself.
    let pairwise = run(&["reveal", "native:pairwise", "-n", "17", "--format", "json"]);
    let start = Instant::now();
    for p in ["1000000000", "10000000000"] {
        let split = run(&[
            "reveal",
            &format!("native:split({p}, sequential, pairwise)"),
            "-n",
            "17",
            "--format",
            "json",
        ]);
        let tree = |out: &Output| -> Value {
            serde_json::from_str::<Value>(&assert_ok(out)).unwrap()["tree"].clone()
        };
        assert_eq!(tree(&split), tree(&pairwise), "split({p})");
    }
    // On 2^33 ranks by recursive doubling, the 17 first ranks hold a
    // summand, as on 32 ranks (a power of two too: no ranks fold first).
    let out = run(&[
        "reveal",
        "native:split(8589934592, sequential, doubling)",
        "-n",
        "17",
    ]);
    let doubling = run(&[
        "reveal",
        "native:split(32, sequential, doubling)",
        "-n",
        "17",
    ]);
    assert_eq!(
        assert_ok(&out).lines().next(),
        assert_ok(&doubling).lines().next()
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn deeply_nested_formulas_are_refused_not_a_stack_overflow() {
    let dir = TempDir::new().unwrap();
    let deep = 10_000;
    let open = "windows(2, ".repeat(deep);
    let closed = format!("native:{open}sequential{}", ")".repeat(deep));
    let unclosed = format!("native:{open}sequential");
    for spec in [closed, unclosed] {
        let line = refused_at_once(dir.path(), &["reveal", &spec, "-n", "8"]);
        assert!(line.contains("nested more than"), "{line}");
        // Short: the 100 KB spec is not echoed whole.
        assert!(line.len() < 400, "{} characters", line.len());
    }
    // Deep, but within the bound: read and run.
    let within = format!(
        "native:{}sequential{}",
        "windows(2, ".repeat(30),
        ")".repeat(30)
    );
    let out = run(&["reveal", &within, "-n", "9", "--format", "json"]);
    let seq = run(&[
        "reveal",
        "native:windows(2, sequential)",
        "-n",
        "9",
        "--format",
        "json",
    ]);
    let tree =
        |out: &Output| serde_json::from_str::<Value>(&assert_ok(out)).unwrap()["tree"].clone();
    assert_eq!(tree(&out), tree(&seq));
}

#[test]
fn formula_errors_name_the_missing_parenthesis_and_stay_short() {
    let out = run(&["reveal", "native:body(8, sequential, then", "-n", "12"]);
    let line = assert_input_error(&out);
    assert!(line.contains("')'"), "{line}");
    assert!(!line.contains("unknown order"), "{line}");
    let long = format!("native:blocks(2, {}", "x".repeat(20_000));
    let line = assert_input_error(&run(&["reveal", &long, "-n", "8"]));
    assert!(line.len() < 500, "{} characters: {line}", line.len());
    assert!(line.contains("native:blocks(2, xxx"), "{line}");
}

// ---------------------------------------------------------------------------
// Sizes, shapes and counts on the command line
// ---------------------------------------------------------------------------

#[test]
fn a_range_of_sizes_is_bounded_as_one_size_is() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    for args in [
        vec!["explain", "native:pairwise", "-n", "1..1000000000"],
        vec!["sweep", "native:pairwise", "-n", "1..1000000000"],
        vec![
            "survey",
            "--spec",
            "native:pairwise",
            "-n",
            "1..1000000000",
            "--no-large",
        ],
        vec!["explain", "native:pairwise", "-n", "1..8,1000000000000000"],
    ] {
        let start = Instant::now();
        let err = assert_usage_error(&run_in(d, &args));
        assert!(start.elapsed() < Duration::from_secs(20), "{args:?}");
        assert!(
            err.contains("sizes") || err.contains("memory"),
            "{args:?}: {err}"
        );
    }
    // A range within the bounds still runs.
    let out = run(&["sweep", "native:pairwise", "-n", "1..4"]);
    assert_ok(&out);
}

#[test]
fn a_gemm_shape_too_large_is_refused_for_every_library_at_once() {
    let dir = TempDir::new().unwrap();
    for spec in ["ndarray:gemm", "numpy:gemm"] {
        let line = refused_at_once(
            dir.path(),
            &[
                "reveal",
                spec,
                "-n",
                "16",
                "--shape",
                "100000000,100000000,16",
            ],
        );
        assert!(line.contains("too large"), "{spec}: {line}");
    }
}

#[test]
fn trials_and_timeouts_have_a_documented_bound() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    write(d, "t.json", r#"{"tree":[[0,1],[2,3]]}"#);
    let max = u64::MAX.to_string();
    let err = assert_input_error(&run_in(
        d,
        &["check", "t.json", "native:pairwise", "--trials", &max],
    ));
    assert!(err.contains("give --trials from 1 to 1000000"), "{err}");
    let err = assert_input_error(&run_in(
        d,
        &["reveal", "native:pairwise", "--confirm", &max],
    ));
    assert!(err.contains("give --confirm from 0 to 1000000"), "{err}");
    let err = assert_usage_error(&run_in(
        d,
        &["check", "t.json", "native:pairwise", "--timeout", "1e300"],
    ));
    assert!(
        err.contains("too large") && err.contains("at most"),
        "{err}"
    );
    // The bound itself is accepted.
    let out = run_in(
        d,
        &[
            "check",
            "t.json",
            "native:pairwise",
            "-n",
            "4",
            "--trials",
            "1000000",
            "-q",
        ],
    );
    assert_ok(&out);
}

// ---------------------------------------------------------------------------
// Survey files
// ---------------------------------------------------------------------------

/// A real survey of `native:pairwise` at sizes 1 to 6, as JSON.
fn pairwise_survey(dir: &Path) -> Value {
    let out = run_in(
        dir,
        &[
            "survey",
            "--spec",
            "native:pairwise",
            "--dtypes",
            "f32",
            "-n",
            "1..6",
            "--no-large",
            "--no-draw",
            "-o",
            "s",
        ],
    );
    assert_ok(&out);
    serde_json::from_str(&std::fs::read_to_string(dir.join("s/survey.json")).unwrap()).unwrap()
}

/// A change that makes a survey file corrupt.
type Corruption = Box<dyn Fn(&mut Value)>;

/// Size `n`'s result in the survey's one entry.
fn size(s: &mut Value, n: usize) -> &mut Value {
    &mut s["entries"][0]["sizes"][n - 1]
}

#[test]
fn a_corrupt_survey_is_refused_not_compared_as_same() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let good = pairwise_survey(d);
    write(d, "good.json", &good.to_string());
    // The survey compared with itself is the same, exit 0.
    assert_ok(&run_in(d, &["compare", "good.json", "good.json"]));
    let corruptions: Vec<(&str, Corruption)> = vec![
        (
            "duplicate leaf",
            Box::new(|s| size(s, 3)["tree"] = json!("((0+0)+1)")),
        ),
        (
            "leaf out of range",
            Box::new(|s| size(s, 4)["tree"] = json!("((0+1)+(2+18446744073709551615))")),
        ),
        (
            "tree of another size",
            Box::new(|s| size(s, 3)["tree"] = json!("(0+1)")),
        ),
        (
            "huge n",
            Box::new(|s| {
                let mut extra = size(s, 6).clone();
                extra["n"] = json!(1_000_000_000_000u64);
                s["entries"][0]["sizes"].as_array_mut().unwrap().push(extra);
            }),
        ),
        (
            "newer model",
            Box::new(|s| size(s, 2)["arithmetic"]["version"] = json!(99)),
        ),
        (
            "duplicate entry",
            Box::new(|s| {
                let e = s["entries"][0].clone();
                s["entries"].as_array_mut().unwrap().push(e);
            }),
        ),
        (
            "duplicate size",
            Box::new(|s| {
                let x = size(s, 6).clone();
                s["entries"][0]["sizes"].as_array_mut().unwrap().push(x);
            }),
        ),
        ("layout 0", Box::new(|s| s["fprev_survey"] = json!(0))),
        (
            "unknown outcome",
            Box::new(|s| size(s, 5)["outcome"] = json!("fine")),
        ),
        (
            "deep formula",
            Box::new(|s| {
                s["entries"][0]["formula"] = json!(format!(
                    "{}pairwise{}",
                    "windows(2,".repeat(10_000),
                    ")".repeat(10_000)
                ))
            }),
        ),
        (
            "bad formula",
            Box::new(|s| s["entries"][0]["formula"] = json!("pairwsie")),
        ),
    ];
    for (what, corrupt) in corruptions {
        let mut bad = good.clone();
        corrupt(&mut bad);
        write(d, "bad.json", &bad.to_string());
        for args in [
            ["compare", "bad.json", "good.json"],
            ["compare", "good.json", "bad.json"],
        ] {
            let line = refused_at_once(d, &args);
            assert!(line.contains("bad.json"), "{what}: {line}");
        }
    }
}

#[test]
fn a_python_black_box_s_rows_are_bounded_as_a_matrix_is() {
    // An adapter (FPREV_PROBES) whose function says it sums 10^12 rows a
    // call: refused before NumPy is asked for terabytes.
    let dir = TempDir::new().unwrap();
    let probes = dir.path().join("probes");
    std::fs::create_dir(&probes).unwrap();
    std::fs::write(
        probes.join("mylib.py"),
        "def sum(n, dtype, shape, arg):\n    def fn(X):\n        return X.sum(axis=1)\n\n    \
         fn.rows = 10**12\n    return fn\n",
    )
    .unwrap();
    let out = assert_cmd::cargo::cargo_bin_cmd!("fprev")
        .current_dir(dir.path())
        .env("FPREV_PROBES", &probes)
        .args(["reveal", "mylib:sum", "-n", "8"])
        .output()
        .unwrap();
    let line = assert_input_error(&out);
    assert!(
        line.contains("1000000000000 rows") && line.contains("too many"),
        "{line}"
    );
}
