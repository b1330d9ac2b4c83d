//! `fprev diff` and `fprev check` for machines and scripts: `--format json`
//! prints exactly one JSON object (keys in alphabetical order, every key
//! always there), `--quiet` prints nothing on stdout, and neither changes
//! the exit status of an outcome (docs/REFERENCE.md, "Commands" and "Exit
//! statuses": 0 equal or every trial matched, 1 the trees differ or a trial
//! mismatched, 2 usage or bad input).
//!
//! The trees are revealed by the real binary from `native:` black boxes.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use tempfile::TempDir;

mod common;
use common::{assert_code, run_in, stderr, stdout};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Asserts exit `code`, and that stdout is exactly one JSON object, pretty
/// printed, whose keys are `keys` in that (alphabetical) order; returns it.
fn json_output(out: &Output, code: i32, keys: &[&str]) -> Value {
    assert_code(out, code);
    let text = stdout(out);
    // `from_str` refuses anything after the one value.
    let value: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not one JSON value ({e}): {text}"));
    assert!(value.is_object(), "not an object: {text}");
    assert!(
        text.starts_with("{\n  \"") && text.ends_with("}\n"),
        "not pretty printed: {text:?}"
    );
    // The order the keys are printed in, read from the text itself.
    let printed: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("  \""))
        .filter_map(|l| l.split('"').next())
        .collect();
    assert_eq!(printed, keys, "keys, in the order printed: {text}");
    value
}

/// Asserts exit `code` and that nothing at all was printed on stdout or stderr.
fn assert_silent(out: &Output, code: i32) {
    assert_code(out, code);
    assert_eq!(stdout(out), "", "stdout with --quiet");
    assert_eq!(stderr(out), "", "stderr with --quiet and no error");
}

/// Asserts exit 2, nothing on stdout, and exactly one line on stderr that
/// starts with `prefix`; returns stderr.
fn assert_one_error_line(out: &Output, prefix: &str) -> String {
    assert_code(out, 2);
    assert_eq!(stdout(out), "", "stdout on error");
    let err = stderr(out);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one error line: {err:?}");
    assert!(lines[0].starts_with(prefix), "{err:?}");
    err
}

/// Reveals `spec` at `n` summands into `dir/name` (the tree file, with its
/// arithmetic model unless `extra` says `--no-arith`).
fn reveal(dir: &Path, spec: &str, n: usize, name: &str, extra: &[&str]) {
    let n = n.to_string();
    let mut args = vec!["reveal", spec, "-n", &n, "-o", name];
    args.extend_from_slice(extra);
    let out = run_in(dir, &args);
    assert_code(&out, 0);
    assert!(dir.join(name).is_file(), "{name} was not written");
}

/// A directory with `seq.json` (native:sequential, 16 summands),
/// `pair.json` (native:pairwise, 16), `pair-noarith.json` (native:pairwise,
/// 16, without an arithmetic model), `pair64.json` (native:pairwise, 16, in
/// f64) and `pair8.json` (native:pairwise, 8).
fn trees() -> TempDir {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    reveal(d, "native:sequential", 16, "seq.json", &[]);
    reveal(d, "native:pairwise", 16, "pair.json", &[]);
    reveal(
        d,
        "native:pairwise",
        16,
        "pair-noarith.json",
        &["--no-arith"],
    );
    reveal(d, "native:pairwise", 16, "pair64.json", &["--dtype", "f64"]);
    reveal(d, "native:pairwise", 8, "pair8.json", &[]);
    dir
}

const DIFF_KEYS: &[&str] = &[
    "a",
    "a_has",
    "arithmetic",
    "arithmetic_compared",
    "b",
    "b_has",
    "detail",
    "differs_in",
    "n",
    "node",
    "same",
    "same_order",
    "varies",
];

const CHECK_KEYS: &[&str] = &[
    "accumulator",
    "distinguished_from",
    "dtype",
    "mismatch",
    "model",
    "not_distinguished_from",
    "ok",
    "passed",
    "row",
    "seed",
    "spec",
    "tree",
    "trials",
];

// ---------------------------------------------------------------------------
// diff
// ---------------------------------------------------------------------------

#[test]
fn diff_json_of_equal_trees_says_same_and_exits_0() {
    let dir = trees();
    let out = run_in(
        dir.path(),
        &["diff", "seq.json", "seq.json", "--format", "json"],
    );
    let v = json_output(&out, 0, DIFF_KEYS);
    assert_eq!(
        v,
        json!({
            "a": "seq.json",
            "a_has": null,
            "arithmetic": ["f32", "f32"],
            "arithmetic_compared": true,
            "b": "seq.json",
            "b_has": null,
            "detail": null,
            "differs_in": null,
            "n": [16, 16],
            "node": null,
            "same": true,
            "same_order": true,
            "varies": [false, false],
        })
    );
}

#[test]
fn diff_json_of_different_orders_names_where_they_part_and_exits_1() {
    let dir = trees();
    let out = run_in(
        dir.path(),
        &["diff", "seq.json", "pair.json", "--format", "json"],
    );
    let v = json_output(&out, 1, DIFF_KEYS);
    // The smallest subtree of each that the other lacks: the chain's
    // ((0+1)+2), the pairs' (2+3).
    assert_eq!(
        v,
        json!({
            "a": "seq.json",
            "a_has": "((0+1)+2)",
            "arithmetic": ["f32", "f32"],
            "arithmetic_compared": false,
            "b": "pair.json",
            "b_has": "(2+3)",
            "detail": null,
            "differs_in": "order",
            "n": [16, 16],
            "node": null,
            "same": false,
            "same_order": false,
            "varies": [false, false],
        })
    );
    // The text says the same subtrees.
    let text = run_in(dir.path(), &["diff", "seq.json", "pair.json"]);
    assert_code(&text, 1);
    assert_eq!(
        stdout(&text),
        "different: the trees part at\n  seq.json: ((0+1)+2)\n  pair.json: (2+3)\n"
    );
}

#[test]
fn diff_json_of_different_sizes_gives_both_sizes_and_exits_1() {
    let dir = trees();
    let out = run_in(
        dir.path(),
        &["diff", "pair.json", "pair8.json", "--format", "json"],
    );
    let v = json_output(&out, 1, DIFF_KEYS);
    assert_eq!(v["n"], json!([16, 8]));
    assert_eq!(v["differs_in"], "size");
    assert_eq!(v["same"], false);
    assert_eq!(v["same_order"], false);
    assert_eq!(v["arithmetic_compared"], false);
    assert_eq!((&v["a_has"], &v["b_has"]), (&Value::Null, &Value::Null));
}

#[test]
fn diff_json_of_one_order_in_two_arithmetics_names_the_node_and_exits_1() {
    let dir = trees();
    let out = run_in(
        dir.path(),
        &["diff", "pair.json", "pair64.json", "--format", "json"],
    );
    let v = json_output(&out, 1, DIFF_KEYS);
    assert_eq!(v["same"], false);
    assert_eq!(v["same_order"], true);
    assert_eq!(v["arithmetic_compared"], true);
    assert_eq!(v["differs_in"], "arithmetic");
    assert_eq!(v["arithmetic"], json!(["f32", "f64"]));
    assert_eq!((&v["a_has"], &v["b_has"]), (&json!("f32"), &json!("f64")));
    // The first node from the leaves up: x0 + x1.
    assert_eq!(v["node"], "the node of 2 summands from x0");
    // The text names the same node and formats.
    let text = run_in(dir.path(), &["diff", "pair.json", "pair64.json"]);
    assert_code(&text, 1);
    assert!(
        stdout(&text).contains(
            "at the node of 2 summands from x0 pair.json computes f32 and pair64.json computes f64"
        ),
        "{}",
        stdout(&text)
    );
}

#[test]
fn diff_json_says_when_arithmetic_was_not_compared() {
    let dir = trees();
    let out = run_in(
        dir.path(),
        &["diff", "pair-noarith.json", "pair.json", "--format", "json"],
    );
    let v = json_output(&out, 0, DIFF_KEYS);
    assert_eq!(v["same"], true);
    assert_eq!(v["same_order"], true);
    assert_eq!(v["arithmetic_compared"], false);
    assert_eq!(v["arithmetic"], json!([null, "f32"]));
    assert_eq!(v["differs_in"], Value::Null);
}

#[test]
fn diff_quiet_prints_nothing_and_keeps_the_exit_status() {
    let dir = trees();
    for (a, b, code) in [
        ("seq.json", "seq.json", 0),
        ("pair-noarith.json", "pair.json", 0),
        ("seq.json", "pair.json", 1),
        ("pair.json", "pair8.json", 1),
        ("pair.json", "pair64.json", 1),
    ] {
        for quiet in ["--quiet", "-q"] {
            assert_silent(&run_in(dir.path(), &["diff", a, b, quiet]), code);
        }
        // The text, the default, exits the same way.
        let text = run_in(dir.path(), &["diff", a, b]);
        assert_code(&text, code);
        assert!(!stdout(&text).is_empty());
    }
}

#[test]
fn diff_format_text_is_the_default() {
    let dir = trees();
    for (a, b) in [("seq.json", "pair.json"), ("pair.json", "pair.json")] {
        let plain = run_in(dir.path(), &["diff", a, b]);
        let text = run_in(dir.path(), &["diff", a, b, "--format", "text"]);
        assert_eq!(stdout(&plain), stdout(&text));
        assert_eq!(plain.status.code(), text.status.code());
        assert!(stdout(&text).starts_with("different") || stdout(&text).starts_with("equal"));
    }
}

#[test]
fn diff_bad_input_is_one_error_line_and_exit_2_in_json_and_quiet() {
    let dir = trees();
    std::fs::write(dir.path().join("bad.json"), "{not json").unwrap();
    for b in ["missing.json", "bad.json"] {
        for mode in [&["--format", "json"][..], &["--quiet"][..]] {
            let mut args = vec!["diff", "pair.json", b];
            args.extend_from_slice(mode);
            let err = assert_one_error_line(&run_in(dir.path(), &args), "fprev: error: ");
            assert!(err.contains(b), "the error names the file: {err}");
        }
    }
}

// ---------------------------------------------------------------------------
// check
// ---------------------------------------------------------------------------

#[test]
fn check_json_against_the_black_box_it_was_revealed_from_is_ok_and_exits_0() {
    let dir = trees();
    let out = run_in(
        dir.path(),
        &[
            "check",
            "pair.json",
            "native:pairwise",
            "--trials",
            "200",
            "--format",
            "json",
        ],
    );
    let v = json_output(&out, 0, CHECK_KEYS);
    assert_eq!(
        v,
        json!({
            "accumulator": "f32",
            "distinguished_from": [
                "f32 toward-zero",
                "f16",
                "f64",
                "the tree regrouped at one node, each of 7 ways",
            ],
            "dtype": "f32",
            "mismatch": null,
            "model": "f32",
            "not_distinguished_from": [],
            "ok": true,
            "passed": 200,
            "row": 0,
            "seed": 0,
            "spec": "native:pairwise",
            "tree": "pair.json",
            "trials": 200,
        })
    );
    assert!(!dir.path().join("fprev-mismatch.json").exists());
    // A tree without a model is replayed in accumulators, and says which.
    let out = run_in(
        dir.path(),
        &[
            "check",
            "pair-noarith.json",
            "native:pairwise",
            "--format",
            "json",
        ],
    );
    let v = json_output(&out, 0, CHECK_KEYS);
    assert_eq!(v["ok"], true);
    assert_eq!(v["model"], Value::Null);
    assert_eq!(v["accumulator"], "f32");
    assert_eq!((&v["trials"], &v["passed"]), (&json!(1000), &json!(1000)));
}

#[test]
fn check_json_against_another_black_box_names_the_mismatch_and_exits_1() {
    let dir = trees();
    let out = run_in(
        dir.path(),
        &[
            "check",
            "seq.json",
            "native:pairwise",
            "--mismatch-out",
            "m.json",
            "--format",
            "json",
        ],
    );
    let v = json_output(&out, 1, CHECK_KEYS);
    assert_eq!(v["ok"], false);
    assert_eq!(v["spec"], "native:pairwise");
    assert_eq!(v["tree"], "seq.json");
    assert_eq!(v["accumulator"], Value::Null, "no accumulator matched");
    let m = &v["mismatch"];
    let keys: Vec<&str> = m
        .as_object()
        .expect("a mismatch")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "accumulator",
            "against",
            "black_box",
            "input_file",
            "kind",
            "replayed",
            "trial"
        ]
    );
    assert_eq!(m["input_file"], "m.json");
    // Every trial before the mismatch matched; the mismatch is the last run.
    let trial = m["trial"].as_u64().expect("a trial number");
    assert_eq!(v["trials"], json!(trial + 1));
    assert_eq!(v["passed"], json!(trial));
    assert_ne!(m["replayed"], m["black_box"]);
    // The saved input is the one reported, with the same results.
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("m.json")).unwrap()).unwrap();
    for key in ["trial", "kind", "replayed", "black_box", "accumulator"] {
        assert_eq!(saved[key], m[key], "{key}");
    }
    assert_eq!(saved["input"].as_array().map(Vec::len), Some(16));
    // The text reports the same trial (counting from 1) and results.
    let text = run_in(dir.path(), &["check", "seq.json", "native:pairwise"]);
    assert_code(&text, 1);
    let first = stdout(&text).lines().next().unwrap_or("").to_string();
    assert!(
        first.starts_with(&format!("mismatch on trial {} (", trial + 1)),
        "{first}"
    );
}

#[test]
fn check_quiet_prints_nothing_keeps_the_exit_status_and_still_saves_the_input() {
    let dir = trees();
    let d = dir.path();
    assert_silent(
        &run_in(d, &["check", "pair.json", "native:pairwise", "--quiet"]),
        0,
    );
    assert!(!d.join("q.json").exists());
    assert_silent(
        &run_in(
            d,
            &[
                "check",
                "seq.json",
                "native:pairwise",
                "-q",
                "--mismatch-out",
                "q.json",
            ],
        ),
        1,
    );
    assert!(d.join("q.json").is_file(), "the mismatch is saved with -q");
    // The text, the default, exits the same way.
    assert_code(&run_in(d, &["check", "pair.json", "native:pairwise"]), 0);
    assert_code(&run_in(d, &["check", "seq.json", "native:pairwise"]), 1);
}

#[test]
fn check_bad_input_is_one_error_line_and_exit_2_in_json_and_quiet() {
    let dir = trees();
    for (tree, spec) in [
        ("missing.json", "native:pairwise"),
        ("pair.json", "nope:sum"),
        ("pair8.json", "native:pairwise:x"),
    ] {
        for mode in [&["--format", "json"][..], &["-q"][..]] {
            let mut args = vec!["check", tree, spec];
            args.extend_from_slice(mode);
            assert_one_error_line(&run_in(dir.path(), &args), "fprev: error: ");
        }
    }
    // A tree the black box's size does not fit.
    let out = run_in(
        dir.path(),
        &[
            "check",
            "pair.json",
            "native:pairwise",
            "-n",
            "8",
            "--format",
            "json",
        ],
    );
    let err = assert_one_error_line(&out, "fprev: error: ");
    assert!(err.contains("16 summands"), "{err}");
}

// ---------------------------------------------------------------------------
// Both
// ---------------------------------------------------------------------------

#[test]
fn quiet_with_format_is_a_usage_error() {
    let dir = trees();
    for args in [
        &[
            "diff",
            "seq.json",
            "pair.json",
            "--quiet",
            "--format",
            "json",
        ][..],
        &["diff", "seq.json", "seq.json", "--format", "text", "-q"][..],
        &[
            "check",
            "pair.json",
            "native:pairwise",
            "-q",
            "--format",
            "json",
        ][..],
    ] {
        let out = run_in(dir.path(), args);
        assert_code(&out, 2);
        assert_eq!(stdout(&out), "", "{args:?}");
        // clap names the two in the order given.
        let err = stderr(&out);
        assert!(err.starts_with("error: the argument '--"), "{err}");
        assert!(err.contains("cannot be used with"), "{err}");
        assert!(err.contains("--quiet") && err.contains("--format"), "{err}");
    }
    assert!(!dir.path().join("fprev-mismatch.json").exists());
}

#[test]
fn format_takes_text_or_json_only() {
    let dir = trees();
    for format in ["dot", "svg", "table", "yaml"] {
        for args in [
            &["diff", "seq.json", "pair.json", "--format", format][..],
            &["check", "pair.json", "native:pairwise", "--format", format][..],
        ] {
            let out = run_in(dir.path(), args);
            assert_code(&out, 2);
            assert_eq!(stdout(&out), "");
            let err = stderr(&out);
            assert!(err.contains(&format!("invalid value '{format}'")), "{err}");
            assert!(err.contains("[possible values: text, json]"), "{err}");
        }
    }
}

#[test]
fn help_names_the_new_flags_in_one_line_each() {
    let dir = TempDir::new().unwrap();
    for command in ["diff", "check"] {
        let out = run_in(dir.path(), &[command, "--help"]);
        assert_code(&out, 0);
        let help = stdout(&out);
        let line = |flag: &str| {
            help.lines()
                .find(|l| l.trim_start().starts_with(flag) || l.contains(&format!(", {flag}")))
                .unwrap_or_else(|| panic!("{command} --help lacks {flag}:\n{help}"))
                .to_string()
        };
        assert!(line("--format <FORMAT>").contains("json"), "{help}");
        assert!(line("--quiet").contains("exit status"), "{help}");
        assert!(help.contains("-q, --quiet"), "{help}");
    }
}
