//! End-to-end tests of the `fprev` command line against the contract of
//! docs/REFERENCE.md: commands, output formats, tree files, and exit statuses
//! (0 ok; 1 trees differ or a check mismatch; 2 usage or bad input; 3 the
//! black box broke an assumption).
//!
//! Expected trees are written here from the definitions of the orders, never
//! taken from an earlier run of fprev.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{Value, json};
use tempfile::TempDir;

mod common;
use common::{assert_error, assert_ok, run, run_in, stderr, stdout};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn fprev() -> Command {
    let mut command = assert_cmd::cargo::cargo_bin_cmd!("fprev");
    command.env("FPREV_CACHE_DIR", common::fresh_cache());
    command
}

fn first_line(out: &Output) -> String {
    stdout(out).lines().next().unwrap_or("").to_string()
}

/// Asserts a usage error as clap reports it: exit 2, no panic, nothing on
/// stdout, and the whole message (what was wrong, then the usage line or
/// where help is). Returns stderr.
fn assert_usage_error(out: &Output) -> String {
    let err = stderr(out);
    assert!(!err.contains("panicked"), "panic: {err}");
    assert_eq!(out.status.code(), Some(2), "expected exit 2\nstderr: {err}");
    assert!(stdout(out).is_empty(), "stdout on error: {}", stdout(out));
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("Usage:") || err.contains("--help"), "{err}");
    err
}

/// Writes `text` to `dir/name` and returns the path.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Parses a JSON document and returns it.
fn parse_json(text: &str) -> Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// Whether Graphviz's `dot` is on the PATH (SVG needs it).
fn have_dot() -> bool {
    std::process::Command::new("dot")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn assert_is_svg(bytes: &[u8]) {
    let s = String::from_utf8_lossy(bytes);
    assert!(
        s.starts_with("<?xml") || s.contains("<svg"),
        "not SVG: {}",
        &s[..s.len().min(200)]
    );
    assert!(s.contains("</svg>"), "truncated SVG");
}

/// Where SVG is asked for: with Graphviz, checks the SVG; without it, checks
/// that fprev says so with exit 2 (and returns false).
fn check_svg_run(out: &Output, svg: impl FnOnce() -> Vec<u8>) -> bool {
    if have_dot() {
        assert_ok(out);
        assert_is_svg(&svg());
        true
    } else {
        let line = assert_error(out, 2);
        assert!(line.contains("dot"), "{line}");
        false
    }
}

fn assert_is_dot(text: &str, n: usize) {
    assert!(text.contains("digraph"), "not DOT: {text}");
    for i in 0..n {
        assert!(text.contains(&format!("\"x{i}\"")), "leaf x{i} missing");
    }
}

// ---------------------------------------------------------------------------
// Reference trees, from the definitions
// ---------------------------------------------------------------------------

/// Pairwise halving over `[lo, hi)`: `S[lo,hi) = S[lo,h) + S[h,hi)`,
/// `h = lo + floor((hi - lo) / 2)`, in text form.
fn pairwise_text(lo: usize, hi: usize) -> String {
    if hi - lo == 1 {
        return lo.to_string();
    }
    let h = lo + (hi - lo) / 2;
    format!("({}+{})", pairwise_text(lo, h), pairwise_text(h, hi))
}

/// The same tree as JSON nested arrays.
fn pairwise_json(lo: usize, hi: usize) -> Value {
    if hi - lo == 1 {
        return json!(lo);
    }
    let h = lo + (hi - lo) / 2;
    json!([pairwise_json(lo, h), pairwise_json(h, hi)])
}

/// Left to right: `((((0+1)+2)+3)+...)`.
fn sequential_text(n: usize) -> String {
    let mut s = "0".to_string();
    for i in 1..n {
        s = format!("({s}+{i})");
    }
    s
}

#[test]
fn reference_trees_are_what_the_definitions_say() {
    assert_eq!(pairwise_text(0, 1), "0");
    assert_eq!(pairwise_text(0, 4), "((0+1)+(2+3))");
    assert_eq!(pairwise_text(0, 5), "((0+1)+(2+(3+4)))");
    assert_eq!(pairwise_json(0, 3), json!([0, [1, 2]]));
    assert_eq!(sequential_text(4), "(((0+1)+2)+3)");
}

// ---------------------------------------------------------------------------
// reveal
// ---------------------------------------------------------------------------

#[test]
fn reveal_without_arguments_prints_a_tree() {
    let out = run(&["reveal"]);
    let text = assert_ok(&out);
    let first = text.lines().next().unwrap_or("");
    assert!(first.starts_with('('), "first line: {first:?}");
    assert!(first.ends_with(')'), "first line: {first:?}");
    assert!(!first.contains(' '), "text form has no spaces: {first:?}");
}

#[test]
fn reveal_prints_the_text_form_on_the_first_line() {
    // 13 is not a power of two: the floor(n/2) split matters.
    let out = run(&["reveal", "native:pairwise", "-n", "13"]);
    assert_ok(&out);
    assert_eq!(first_line(&out), pairwise_text(0, 13));
}

#[test]
fn reveal_explicit_text_format_prints_the_text_form() {
    let out = run(&["reveal", "native:pairwise", "-n", "8", "--format", "text"]);
    assert_ok(&out);
    assert_eq!(first_line(&out), pairwise_text(0, 8));
}

#[test]
fn reveal_sequential_prints_a_left_to_right_chain() {
    let out = run(&["reveal", "native:sequential", "-n", "20"]);
    assert_ok(&out);
    assert_eq!(first_line(&out), sequential_text(20));
}

/// `reveal native:pairwise -n 16 --dtype D --format json` gives the pairwise
/// tree with `"n": 16` and `"dtype": D`.
fn assert_pairwise_json_for(dtype: &str) {
    let out = run(&[
        "reveal",
        "native:pairwise",
        "-n",
        "16",
        "--dtype",
        dtype,
        "--format",
        "json",
    ]);
    let doc = parse_json(&assert_ok(&out));
    assert_eq!(doc["n"], json!(16), "{doc}");
    assert_eq!(doc["dtype"], json!(dtype), "{doc}");
    assert_eq!(doc["probe"], json!("native:pairwise"), "{doc}");
    assert_eq!(doc["tree"], pairwise_json(0, 16), "{doc}");
}

#[test]
fn reveal_json_dtype_f64() {
    assert_pairwise_json_for("f64");
}

#[test]
fn reveal_json_dtype_f32() {
    assert_pairwise_json_for("f32");
}

#[test]
fn reveal_json_dtype_f16() {
    assert_pairwise_json_for("f16");
}

#[test]
fn reveal_json_dtype_bf16() {
    assert_pairwise_json_for("bf16");
}

#[test]
fn reveal_json_dtype_e4m3() {
    assert_pairwise_json_for("e4m3");
}

#[test]
fn reveal_json_dtype_e5m2() {
    assert_pairwise_json_for("e5m2");
}

#[test]
fn reveal_json_default_dtype_is_f32() {
    let out = run(&["reveal", "native:pairwise", "-n", "5", "--format", "json"]);
    let doc = parse_json(&assert_ok(&out));
    assert_eq!(doc["dtype"], json!("f32"));
    assert_eq!(doc["tree"], pairwise_json(0, 5));
}

#[test]
fn reveal_json_odd_n_matches_pairwise_definition() {
    let out = run(&["reveal", "native:pairwise", "-n", "13", "--format", "json"]);
    let doc = parse_json(&assert_ok(&out));
    assert_eq!(doc["n"], json!(13));
    assert_eq!(doc["tree"], pairwise_json(0, 13));
}

#[test]
fn reveal_bf16_accumulator_sequential_600() {
    // 600 summands are more units than bf16 counts exactly (256): the
    // engine must split the reveal and still find the chain.
    let out = run(&["reveal", "native:sequential", "-n", "600", "--acc", "bf16"]);
    assert_ok(&out);
    assert_eq!(first_line(&out), sequential_text(600));
}

#[test]
fn reveal_single_summand_is_leaf_zero() {
    let out = run(&["reveal", "native:sequential", "-n", "1"]);
    assert_ok(&out);
    assert_eq!(first_line(&out), "0");
    let out = run(&["reveal", "native:pairwise", "-n", "1", "--format", "json"]);
    let doc = parse_json(&assert_ok(&out));
    assert_eq!(doc["n"], json!(1));
    assert_eq!(doc["tree"], json!(0));
}

#[test]
fn reveal_fused_node_in_text_form() {
    // fused:3 on 4 summands: (0+1) is a 2-term group (an IEEE addition),
    // then one 3-term fused node adds it to 2 and 3.
    let out = run(&["reveal", "native:fused:3", "-n", "4"]);
    let text = assert_ok(&out);
    assert_eq!(first_line(&out), "((0+1)+2+3)");
    // One fused node of three children: any reveal needs 3 inputs for it.
    assert!(
        text.lines()
            .any(|l| l.starts_with("# fused nodes: ") && l.contains("needs at least 3")),
        "{text}"
    );
    let binary = run(&["reveal", "native:pairwise", "-n", "8"]);
    assert!(!assert_ok(&binary).contains("# fused nodes"));
}

#[test]
fn reveal_replay_of_a_tree_file_gives_the_tree_back() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        "t.json",
        r#"{"n": 6, "tree": [[0, [3, 5]], [[1, 4], 2]]}"#,
    );
    let out = run_in(dir.path(), &["reveal", "replay:t.json", "--format", "json"]);
    let doc = parse_json(&assert_ok(&out));
    assert_eq!(doc["n"], json!(6));
    assert_eq!(doc["tree"], json!([[0, [3, 5]], [[1, 4], 2]]));
}

#[test]
fn reveal_basic_and_naive_agree_with_the_definition() {
    for algo in ["fprev", "basic", "naive"] {
        let out = run(&["reveal", "native:pairwise", "-n", "7", "--algo", algo]);
        assert_ok(&out);
        assert_eq!(first_line(&out), pairwise_text(0, 7), "--algo {algo}");
    }
}

#[test]
fn reveal_format_dot_to_stdout() {
    let out = run(&["reveal", "native:pairwise", "-n", "4", "--format", "dot"]);
    let text = assert_ok(&out);
    assert_is_dot(&text, 4);
}

#[test]
fn reveal_format_svg_to_stdout() {
    let out = run(&["reveal", "native:pairwise", "-n", "4", "--format", "svg"]);
    check_svg_run(&out, || out.stdout.clone());
}

#[test]
fn reveal_output_json_file_inferred_from_extension() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &["reveal", "native:pairwise", "-n", "16", "-o", "t.json"],
    );
    let printed = assert_ok(&out);
    assert!(printed.is_empty(), "-o writes nothing to stdout: {printed}");
    let doc = parse_json(&std::fs::read_to_string(dir.path().join("t.json")).unwrap());
    assert_eq!(doc["n"], json!(16));
    assert_eq!(doc["tree"], pairwise_json(0, 16));
}

#[test]
fn reveal_output_svg_file_inferred_from_extension() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &["reveal", "native:pairwise", "-n", "8", "-o", "t.svg"],
    );
    let svg = dir.path().join("t.svg");
    if !check_svg_run(&out, || std::fs::read(&svg).unwrap()) {
        assert!(!svg.exists());
    }
}

#[test]
fn reveal_output_dot_file_inferred_from_extension() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &["reveal", "native:pairwise", "-n", "8", "-o", "t.dot"],
    );
    assert_ok(&out);
    assert_is_dot(
        &std::fs::read_to_string(dir.path().join("t.dot")).unwrap(),
        8,
    );
}

#[test]
fn reveal_output_unknown_extension_writes_text() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &["reveal", "native:pairwise", "-n", "8", "-o", "t.txt"],
    );
    assert_ok(&out);
    let text = std::fs::read_to_string(dir.path().join("t.txt")).unwrap();
    assert_eq!(text.lines().next().unwrap(), pairwise_text(0, 8));
}

#[test]
fn reveal_explicit_format_names_the_format_of_a_file_whose_extension_names_none() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "reveal",
            "native:pairwise",
            "-n",
            "8",
            "--format",
            "text",
            "-o",
            "t.tree",
        ],
    );
    assert_ok(&out);
    let text = std::fs::read_to_string(dir.path().join("t.tree")).unwrap();
    assert_eq!(text.lines().next().unwrap(), pairwise_text(0, 8));
}

#[test]
fn reveal_output_into_missing_directory_exits_2_and_writes_nothing() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "reveal",
            "native:pairwise",
            "-n",
            "4",
            "-o",
            "no/such/dir/t.json",
        ],
    );
    let line = assert_error(&out, 2);
    assert!(line.contains("t.json"), "names the file: {line}");
    assert!(!dir.path().join("no").exists());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

// ---------------------------------------------------------------------------
// render
// ---------------------------------------------------------------------------

/// A directory holding `p.json`: the pairwise tree of 16 summands, written by
/// hand.
fn saved_pairwise() -> TempDir {
    let dir = TempDir::new().unwrap();
    let doc = json!({"n": 16, "dtype": "f32", "probe": "native:pairwise",
                     "tree": pairwise_json(0, 16)});
    write(dir.path(), "p.json", &doc.to_string());
    dir
}

#[test]
fn render_json_tree_as_text() {
    let dir = saved_pairwise();
    let out = run_in(dir.path(), &["render", "p.json"]);
    assert_ok(&out);
    assert_eq!(first_line(&out), pairwise_text(0, 16));
    let out = run_in(dir.path(), &["render", "p.json", "--format", "text"]);
    assert_ok(&out);
    assert_eq!(first_line(&out), pairwise_text(0, 16));
}

#[test]
fn render_json_tree_as_json() {
    let dir = saved_pairwise();
    let out = run_in(dir.path(), &["render", "p.json", "--format", "json"]);
    let doc = parse_json(&assert_ok(&out));
    assert_eq!(doc["n"], json!(16));
    assert_eq!(doc["dtype"], json!("f32"));
    assert_eq!(doc["tree"], pairwise_json(0, 16));
}

#[test]
fn render_json_tree_as_dot() {
    let dir = saved_pairwise();
    let out = run_in(dir.path(), &["render", "p.json", "--format", "dot"]);
    assert_is_dot(&assert_ok(&out), 16);
}

#[test]
fn render_json_tree_as_svg() {
    let dir = saved_pairwise();
    let out = run_in(dir.path(), &["render", "p.json", "--format", "svg"]);
    check_svg_run(&out, || out.stdout.clone());
}

#[test]
fn render_to_files_inferred_from_extension() {
    let dir = saved_pairwise();
    for name in ["r.json", "r.dot", "r.svg"] {
        let out = run_in(dir.path(), &["render", "p.json", "-o", name]);
        let path = dir.path().join(name);
        if name == "r.svg" {
            check_svg_run(&out, || std::fs::read(&path).unwrap());
            continue;
        }
        assert_ok(&out);
        let text = std::fs::read_to_string(&path).unwrap();
        if name == "r.json" {
            assert_eq!(parse_json(&text)["tree"], pairwise_json(0, 16));
        } else {
            assert_is_dot(&text, 16);
        }
    }
}

#[test]
fn render_accepts_the_text_form() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "t.txt", "((0+1)+2)\n");
    let out = run_in(dir.path(), &["render", "t.txt"]);
    assert_ok(&out);
    assert_eq!(first_line(&out), "((0+1)+2)");
    let out = run_in(dir.path(), &["render", "t.txt", "--format", "json"]);
    let doc = parse_json(&assert_ok(&out));
    assert_eq!(doc["n"], json!(3));
    assert_eq!(doc["tree"], json!([[0, 1], 2]));
}

#[test]
fn render_canonicalises_child_order() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        "t.json",
        r#"{"n": 4, "tree": [[3, 2], [1, 0]]}"#,
    );
    let out = run_in(dir.path(), &["render", "t.json"]);
    assert_ok(&out);
    assert_eq!(first_line(&out), "((0+1)+(2+3))");
}

#[test]
fn render_fused_node_round_trips() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        "t.json",
        r#"{"n": 5, "tree": [[0, 1, 2], 3, 4]}"#,
    );
    let out = run_in(dir.path(), &["render", "t.json"]);
    assert_ok(&out);
    assert_eq!(first_line(&out), "((0+1+2)+3+4)");
    let out = run_in(dir.path(), &["render", "t.json", "--format", "json"]);
    assert_eq!(
        parse_json(&assert_ok(&out))["tree"],
        json!([[0, 1, 2], 3, 4])
    );
}

// ---------------------------------------------------------------------------
// diff
// ---------------------------------------------------------------------------

#[test]
fn diff_equal_modulo_child_order_exits_0() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        "a.json",
        r#"{"n": 4, "tree": [[0, 1], [2, 3]]}"#,
    );
    write(
        dir.path(),
        "b.json",
        r#"{"n": 4, "tree": [[3, 2], [1, 0]]}"#,
    );
    let out = run_in(dir.path(), &["diff", "a.json", "b.json"]);
    assert_ok(&out);
}

#[test]
fn diff_tree_file_against_text_form_exits_0() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "a.json", r#"{"n": 3, "tree": [[0, 1], 2]}"#);
    write(dir.path(), "b.txt", "(2+(1+0))\n");
    let out = run_in(dir.path(), &["diff", "a.json", "b.txt"]);
    assert_ok(&out);
}

#[test]
fn diff_different_trees_exits_1_and_names_the_subtrees() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        "a.json",
        r#"{"n": 4, "tree": [[0, 1], [2, 3]]}"#,
    );
    write(
        dir.path(),
        "c.json",
        r#"{"n": 4, "tree": [[[0, 1], 2], 3]}"#,
    );
    let out = run_in(dir.path(), &["diff", "a.json", "c.json"]);
    assert!(!stderr(&out).contains("panicked"));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    // The smallest subtree each tree has and the other lacks.
    assert!(text.contains("(2+3)"), "{text}");
    assert!(text.contains("((0+1)+2)"), "{text}");
    assert!(text.contains("a.json") && text.contains("c.json"), "{text}");
}

#[test]
fn diff_fused_against_binary_exits_1() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "f.json", r#"{"n": 3, "tree": [0, 1, 2]}"#);
    write(dir.path(), "b.json", r#"{"n": 3, "tree": [[0, 1], 2]}"#);
    let out = run_in(dir.path(), &["diff", "f.json", "b.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"));
    let text = stdout(&out);
    assert!(text.contains("(0+1+2)"), "{text}");
    assert!(text.contains("(0+1)"), "{text}");
}

#[test]
fn diff_trees_of_different_n_exits_1() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        "a.json",
        r#"{"n": 4, "tree": [[0, 1], [2, 3]]}"#,
    );
    write(
        dir.path(),
        "d.json",
        r#"{"n": 5, "tree": [[[0, 1], 2], [3, 4]]}"#,
    );
    let out = run_in(dir.path(), &["diff", "a.json", "d.json"]);
    assert!(!stderr(&out).contains("panicked"));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains('4') && text.contains('5'), "{text}");
}

#[test]
fn diff_with_a_bad_file_exits_2() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        "a.json",
        r#"{"n": 4, "tree": [[0, 1], [2, 3]]}"#,
    );
    write(dir.path(), "bad.json", r#"{"n": 3, "tree": [[0,1]"#);
    let out = run_in(dir.path(), &["diff", "a.json", "bad.json"]);
    assert!(assert_error(&out, 2).contains("bad.json"));
    let out = run_in(dir.path(), &["diff", "missing.json", "a.json"]);
    assert!(assert_error(&out, 2).contains("missing.json"));
}

// ---------------------------------------------------------------------------
// check
// ---------------------------------------------------------------------------

/// A directory holding `p.json`, saved by `fprev reveal native:pairwise -n 16`.
fn revealed_pairwise() -> TempDir {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &["reveal", "native:pairwise", "-n", "16", "-o", "p.json"],
    );
    assert_ok(&out);
    dir
}

#[test]
fn check_pairwise_tree_against_pairwise_exits_0() {
    let dir = revealed_pairwise();
    let out = run_in(dir.path(), &["check", "p.json", "native:pairwise"]);
    let text = assert_ok(&out);
    assert!(text.starts_with("ok"), "{text}");
}

#[test]
fn check_pairwise_tree_against_sequential_exits_1_with_the_input() {
    let dir = revealed_pairwise();
    let out = run_in(dir.path(), &["check", "p.json", "native:sequential"]);
    assert!(!stderr(&out).contains("panicked"));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("mismatch"), "{text}");
    // The input that told them apart, all 16 summands of it, in a file of
    // its own rather than on the terminal.
    assert!(
        text.contains("fprev-mismatch.json") && text.lines().count() == 2,
        "{text}"
    );
    let saved =
        parse_json(&std::fs::read_to_string(dir.path().join("fprev-mismatch.json")).unwrap());
    assert_eq!(saved["input"].as_array().map(Vec::len), Some(16), "{saved}");
    assert_eq!(saved["probe"], "native:sequential");
    let replayed = saved["replayed"].as_f64().unwrap();
    assert_ne!(
        replayed.to_bits(),
        saved["black_box"].as_f64().unwrap().to_bits()
    );
}

#[test]
fn check_in_other_formats() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "s.txt", &sequential_text(10));
    for dtype in ["f64", "f16", "bf16", "e5m2"] {
        let args = [
            "check",
            "s.txt",
            "native:sequential",
            "--dtype",
            dtype,
            "--trials",
            "200",
        ];
        assert_ok(&run_in(dir.path(), &args));
    }
}

#[test]
fn check_with_n_disagreeing_with_the_tree_exits_2() {
    let dir = revealed_pairwise();
    let out = run_in(
        dir.path(),
        &["check", "p.json", "native:pairwise", "-n", "8"],
    );
    assert_error(&out, 2);
}

#[test]
fn check_with_unknown_spec_exits_2() {
    let dir = revealed_pairwise();
    let out = run_in(dir.path(), &["check", "p.json", "nope:sum"]);
    assert!(assert_error(&out, 2).contains("nope:sum"));
}

// ---------------------------------------------------------------------------
// probes
// ---------------------------------------------------------------------------

#[test]
fn probes_lists_the_native_and_replay_specs() {
    let out = run(&["probes"]);
    let text = assert_ok(&out);
    for spec in [
        "native:sequential",
        "native:reverse",
        "native:pairwise",
        "native:strided",
        "native:blocked",
        "native:binary-tree",
        "native:fused",
        "replay:",
    ] {
        assert!(text.contains(spec), "{spec} not listed:\n{text}");
    }
}

#[test]
fn every_listed_native_spec_reveals() {
    for spec in [
        "native:sequential",
        "native:reverse",
        "native:pairwise",
        "native:strided:4",
        "native:blocked:3",
        "native:binary-tree",
        "native:fused:4",
    ] {
        let out = run(&["reveal", spec, "-n", "12"]);
        let text = assert_ok(&out);
        assert!(text.starts_with('('), "{spec}: {text}");
    }
}

#[test]
fn version_and_help_exit_0() {
    fprev().arg("--version").assert().success();
    fprev()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("reveal"));
    fprev()
        .args(["reveal", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--dtype"));
}

// ---------------------------------------------------------------------------
// Bad input: exit 2, one line, no panic
// ---------------------------------------------------------------------------

#[test]
fn bad_input_malformed_json_exits_2() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "bad.json", r#"{"n": 3, "tree": [[0,1]"#);
    let out = run_in(dir.path(), &["render", "bad.json"]);
    assert!(assert_error(&out, 2).contains("bad.json"));
}

#[test]
fn bad_input_duplicated_leaf_exits_2() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "dup.json", r#"{"n": 3, "tree": [[0, 1], 1]}"#);
    let out = run_in(dir.path(), &["render", "dup.json"]);
    let line = assert_error(&out, 2);
    assert!(line.contains("dup.json"), "{line}");
    assert!(line.contains('1'), "names the leaf: {line}");
}

#[test]
fn bad_input_missing_leaf_exits_2() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "gap.json", r#"{"tree": [[0, 1], [2, 5]]}"#);
    let out = run_in(dir.path(), &["render", "gap.json"]);
    assert!(assert_error(&out, 2).contains("gap.json"));
}

#[test]
fn bad_input_one_child_node_exits_2() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "one.json", r#"{"tree": [[0, 1]]}"#);
    let out = run_in(dir.path(), &["render", "one.json"]);
    assert_error(&out, 2);
}

#[test]
fn bad_input_empty_file_exits_2() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "empty.json", "");
    let out = run_in(dir.path(), &["render", "empty.json"]);
    assert_error(&out, 2);
}

#[test]
fn bad_input_missing_file_exits_2() {
    let out = run(&["render", "missing.json"]);
    assert!(assert_error(&out, 2).contains("missing.json"));
}

#[test]
fn bad_input_unknown_dtype_in_tree_file_exits_2() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        "t.json",
        r#"{"n": 3, "dtype": "f8", "tree": [[0, 1], 2]}"#,
    );
    let out = run_in(dir.path(), &["render", "t.json"]);
    assert!(assert_error(&out, 2).contains("f8"));
}

#[test]
fn bad_input_n_disagreeing_with_tree_exits_2() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "t.json", r#"{"n": 4, "tree": [[0, 1], 2]}"#);
    let out = run_in(dir.path(), &["render", "t.json"]);
    let line = assert_error(&out, 2);
    assert!(line.contains('4') && line.contains('3'), "{line}");
}

#[test]
fn bad_input_unknown_spec_exits_2() {
    let out = run(&["reveal", "nope:sum"]);
    assert!(assert_error(&out, 2).contains("nope:sum"));
}

/// x87 is a format nodes are found to round to, not one inputs come in.
#[test]
fn bad_input_x87_as_dtype_or_accumulator_exits_2() {
    for option in ["--dtype", "--acc"] {
        let out = run(&["reveal", "native:sequential", option, "x87"]);
        assert!(assert_error(&out, 2).contains("--dtype f64"), "{option}");
    }
}

#[test]
fn bad_input_unknown_native_order_exits_2() {
    let out = run(&["reveal", "native:zigzag"]);
    assert!(assert_error(&out, 2).contains("zigzag"));
}

#[test]
fn bad_input_zero_parameters_of_native_orders_exit_2() {
    for spec in ["native:strided:0", "native:blocked:0", "native:fused:1"] {
        let out = run(&["reveal", spec, "-n", "4"]);
        assert_error(&out, 2);
    }
}

#[test]
fn bad_input_n_zero_or_negative_exits_2() {
    for n in ["0", "-5"] {
        let out = run(&["reveal", "native:pairwise", "-n", n]);
        let err = assert_error(&out, 2);
        assert!(err.contains("give -n from 1 to"), "{err}");
        let out = run(&["reveal", "-n", n]);
        assert_error(&out, 2);
    }
}

#[test]
fn bad_input_unknown_dtype_exits_2() {
    // A clap usage error: exit 2, names the formats, no panic. (That it is
    // one `fprev: error:` line is `usage_error_is_one_fprev_error_line`.)
    let out = run(&["reveal", "native:pairwise", "--dtype", "f8"]);
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(stdout(&out).is_empty());
    assert!(err.contains("f8"), "{err}");
    for f in ["f64", "f32", "f16", "bf16", "e4m3", "e5m2"] {
        assert!(err.contains(f), "does not list {f}: {err}");
    }
}

#[test]
fn usage_errors_show_clap_s_whole_message() {
    let out = run(&["reveal", "native:pairwise", "--dtype", "f8"]);
    assert_usage_error(&out);
    let out = run(&["reveal", "native:pairwise", "--algo", "quick"]);
    assert_usage_error(&out);
    // The possible values, "did you mean", the missing argument's name.
    let err = assert_usage_error(&run(&["reveal", "--pivot", "middle"]));
    assert!(err.contains("possible values: random, min, ends"), "{err}");
    let err = assert_usage_error(&run(&["reveel"]));
    assert!(err.contains("'reveal'"), "{err}");
    let err = assert_usage_error(&run(&["diff", "a.json"]));
    assert!(err.contains("<B>"), "{err}");
    // `fprev` alone teaches: the commands and the examples.
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    let help = stderr(&out);
    assert!(
        help.contains("Commands:") && help.contains("Examples:"),
        "{help}"
    );
}

#[test]
fn numeric_flags_are_refused_out_of_their_range() {
    for args in [
        &["reveal", "--timeout", "0"][..],
        &["reveal", "--timeout", "-1"],
        &["reveal", "--mpi-timeout", "0"],
        &["reveal", "--confirm", "-1"],
    ] {
        assert_usage_error(&run(args));
    }
    // A whole number outside the library's bound: one line, in the flag.
    for (args, flag) in [
        (&["reveal", "--batch", "0"][..], "--batch"),
        (&["reveal", "--algo", "basic", "--batch", "0"], "--batch"),
        (&["reveal", "--threads", "0"], "--threads"),
        (&["reveal", "--confirm", "1000001"], "--confirm"),
        (
            &["check", "t.json", "native:pairwise", "--trials", "0"],
            "--trials",
        ),
        (
            &["sweep", "native:pairwise", "-n", "4", "--confirm", "x"],
            "--confirm",
        ),
    ] {
        let line = assert_error(&run(args), 2);
        assert!(
            line.contains(&format!("give {flag} from")),
            "{args:?}: {line}"
        );
    }
}

#[test]
fn a_count_sweep_takes_one_size_and_counts_a_batch_can_have() {
    for (args, says) in [
        (
            &["sweep", "native:pairwise", "-n", "8,16", "--count", "1,2"][..],
            "one -n",
        ),
        (
            &[
                "sweep",
                "native:pairwise",
                "-n",
                "8",
                "--count",
                "1,2",
                "--threads",
                "2",
            ],
            "--threads",
        ),
    ] {
        let line = assert_error(&run(args), 2);
        assert!(line.contains(says), "{args:?}: {line}");
    }
    let line = assert_error(
        &run(&["sweep", "native:pairwise", "-n", "8", "--count", "0,2"]),
        2,
    );
    assert!(line.contains("not a list of sizes"), "{line}");
}

#[test]
fn bad_input_n_too_large_for_the_format_exits_2() {
    let out = run(&[
        "reveal",
        "native:sequential",
        "-n",
        "100000",
        "--dtype",
        "e4m3",
        "--acc",
        "e4m3",
    ]);
    let line = assert_error(&out, 2);
    assert!(line.contains("e4m3"), "{line}");
}

#[test]
fn bad_input_replay_n_disagreeing_with_dash_n_exits_2() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        "t.json",
        r#"{"n": 4, "tree": [[0, 1], [2, 3]]}"#,
    );
    let out = run_in(dir.path(), &["reveal", "replay:t.json", "-n", "5"]);
    let line = assert_error(&out, 2);
    assert!(line.contains('4') && line.contains('5'), "{line}");
}

#[test]
fn bad_input_replay_without_a_path_or_file_exits_2() {
    assert_error(&run(&["reveal", "replay:"]), 2);
    let out = run(&["reveal", "replay:missing.json"]);
    assert!(assert_error(&out, 2).contains("missing.json"));
}

#[test]
fn bad_input_naive_beyond_8_exits_2() {
    let out = run(&["reveal", "native:pairwise", "--algo", "naive", "-n", "9"]);
    assert!(assert_error(&out, 2).contains("naive"));
}

#[test]
fn bad_input_basic_beyond_the_accumulator_exits_2() {
    let out = run(&[
        "reveal",
        "native:sequential",
        "-n",
        "600",
        "--acc",
        "bf16",
        "--algo",
        "basic",
    ]);
    assert!(assert_error(&out, 2).contains("basic"));
}

// ---------------------------------------------------------------------------
// The black box broke an assumption: exit 3
// ---------------------------------------------------------------------------

#[test]
fn basic_on_a_fused_replay_exits_3() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "f.json", r#"{"n": 4, "tree": [0, 1, 2, 3]}"#);
    let out = run_in(dir.path(), &["reveal", "replay:f.json", "--algo", "basic"]);
    assert_error(&out, 3);
}

#[test]
fn fprev_on_a_fused_replay_reveals_the_fused_node() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "f.json", r#"{"n": 4, "tree": [0, 1, 2, 3]}"#);
    let out = run_in(dir.path(), &["reveal", "replay:f.json"]);
    assert_ok(&out);
    assert_eq!(first_line(&out), "(0+1+2+3)");
}

#[test]
fn naive_on_a_fused_black_box_exits_3() {
    // The true tree ((0+1)+2+3) is not binary: naive must not answer with a
    // binary tree that merely agreed on a few random inputs.
    let out = run(&["reveal", "native:fused:3", "-n", "4", "--algo", "naive"]);
    assert_error(&out, 3);
}

// ---------------------------------------------------------------------------
// Writing files
// ---------------------------------------------------------------------------

#[test]
fn output_error_names_only_the_requested_file() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &["reveal", "native:pairwise", "-n", "4", "-o", "no/t.json"],
    );
    let line = assert_error(&out, 2);
    assert!(!line.contains(".tmp"), "{line}");
}

#[cfg(unix)]
#[test]
fn output_file_has_the_usual_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &["reveal", "native:pairwise", "-n", "4", "-o", "t.json"],
    );
    assert_ok(&out);
    let reference = write(dir.path(), "reference.json", "{}");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(
        format!("{:o}", mode(&dir.path().join("t.json"))),
        format!("{:o}", mode(&reference))
    );
}

#[cfg(unix)]
#[test]
fn output_through_a_symlink_writes_its_target() {
    let dir = TempDir::new().unwrap();
    let target = write(dir.path(), "target.json", "old\n");
    std::os::unix::fs::symlink("target.json", dir.path().join("link.json")).unwrap();
    let out = run_in(
        dir.path(),
        &["reveal", "native:pairwise", "-n", "4", "-o", "link.json"],
    );
    assert_ok(&out);
    let link = std::fs::symlink_metadata(dir.path().join("link.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    let doc = parse_json(&std::fs::read_to_string(&target).unwrap());
    assert_eq!(doc["tree"], pairwise_json(0, 4));
}

// fprev sweep

#[test]
fn sweep_finds_where_blocks_start() {
    // Blocks of 16 summed left to right, then the block sums left to right:
    // up to 17 summands (a 17th is a block of one, added last) that is one
    // left-to-right sum; from 18 on it is not. The shape's name changes at
    // 18, the formula does not: one rule, no change point.
    let out = run(&["sweep", "native:blocked:16", "-n", "2..40"]);
    let table = assert_ok(&out);
    assert!(table.contains("2..17   sequential"), "{table}");
    assert!(table.contains("18..40  blocked:16"), "{table}");
    assert!(
        table.contains("change points: none: one formula over every size visited"),
        "{table}"
    );
    assert!(table.contains("formula: native:blocked:16"), "{table}");
    // Two rules: below 16 summands sequential, from 16 on pairwise halving
    // (at 16 itself a body of 16 lanes is pairwise too, so the switch may
    // be named at 16 or 17: the same trees at every size).
    let truth = "below(16, sequential, pairwise)";
    let out = run(&["sweep", &format!("native:{truth}"), "-n", "2..40"]);
    let table = assert_ok(&out);
    assert!(table.contains("where the formula switches rule"), "{table}");
    let found: fprev::formula::Formula = table
        .lines()
        .find_map(|l| l.strip_prefix("formula: native:"))
        .unwrap_or_else(|| panic!("{table}"))
        .parse()
        .unwrap();
    let truth: fprev::formula::Formula = truth.parse().unwrap();
    for n in [1, 15, 16, 17, 41, 100, 1000] {
        assert_eq!(found.tree(n), truth.tree(n), "{found} at n = {n}");
    }
}

#[test]
fn sweep_writes_json_with_change_points() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "sweep",
            "native:strided:4",
            "-n",
            "2..12:2,16",
            "-o",
            "s.json",
        ],
    );
    assert_ok(&out);
    let v = parse_json(&std::fs::read_to_string(dir.path().join("s.json")).unwrap());
    let sizes: Vec<u64> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["n"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [2, 4, 6, 8, 10, 12, 16]);
    assert_eq!(
        v["change_points"],
        json!([{"threads": null, "n": 6, "from": "pairwise", "to": "strided:4"}])
    );
    assert_eq!(
        v["points"][2]["stats"]["queries"].as_u64().map(|q| q > 0),
        Some(true)
    );
}

#[test]
fn sweep_over_threads_finds_the_binary_tree_reduction_independent_of_them() {
    let out = run(&[
        "sweep",
        "reduce:binary-tree",
        "-n",
        "1..70",
        "--threads",
        "1,2,4",
        "--format",
        "json",
        "--dtype",
        "f64",
    ]);
    let v = parse_json(&assert_ok(&out));
    assert_eq!(v["threads"], json!([1, 2, 4]));
    assert_eq!(v["points"].as_array().unwrap().len(), 3 * 70);
    assert_eq!(v["change_points"], json!([]));
    assert_eq!(v["thread_dependent"], json!([]));
    assert!(
        v["points"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["n"].as_u64() > Some(2))
            .all(|p| p["order"] == "binary-tree"),
        "a point named otherwise"
    );
}

#[test]
fn sweep_rejects_bad_sizes_and_threads_for_black_boxes_without_them() {
    for sizes in ["8..4", "0..3", "x", "4,", "1..9:0"] {
        let out = run(&["sweep", "native:pairwise", "-n", sizes]);
        assert!(
            assert_usage_error(&out).contains("not a list of sizes"),
            "{sizes}"
        );
    }
    let out = run(&["sweep", "native:pairwise", "-n", "4", "--threads", "2"]);
    assert!(assert_error(&out, 2).contains("does not take a thread count"));
    let out = run(&["reveal", "native:pairwise", "--threads", "0"]);
    assert!(assert_error(&out, 2).contains("give --threads from 1 to 1024"));
    let out = run(&["reveal", "reduce:binary-tree:2", "--threads", "3"]);
    assert!(assert_error(&out, 2).contains("disagree"));
}

#[test]
fn the_pre_rounded_reducer_is_reported_as_order_independent() {
    for (n, dtype) in [("3", "f64"), ("100", "f64"), ("1000", "f32")] {
        let out = run(&["reveal", "reduce:prerounded", "-n", n, "--dtype", dtype]);
        assert_eq!(out.status.code(), Some(4), "n = {n}: {}", stderr(&out));
        assert!(stderr(&out).is_empty(), "{}", stderr(&out));
        assert!(
            first_line(&out).starts_with("order-independent: reduce:prerounded: "),
            "{}",
            stdout(&out)
        );
    }
    let out = run(&["sweep", "reduce:prerounded:2", "-n", "2..6"]);
    let table = assert_ok(&out);
    assert!(table.contains("2..6  order-independent"), "{table}");
}

// ---------------------------------------------------------------------------
// First contact: outputs, sizes and logs as a new user meets them
// ---------------------------------------------------------------------------

#[test]
fn output_dash_is_stdout_and_extensions_name_formats_whatever_their_case() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &["reveal", "native:pairwise", "-n", "8", "-o", "-"],
    );
    assert_eq!(first_line(&out), pairwise_text(0, 8));
    assert!(!dir.path().join("-").exists());
    let out = run_in(
        dir.path(),
        &["reveal", "native:pairwise", "-n", "8", "-o", "t.JSON"],
    );
    assert_ok(&out);
    let doc = parse_json(&std::fs::read_to_string(dir.path().join("t.JSON")).unwrap());
    assert_eq!(doc["tree"], pairwise_json(0, 8));
    if have_dot() {
        let out = run_in(
            dir.path(),
            &["reveal", "native:pairwise", "-n", "8", "-o", "t.SVG"],
        );
        assert_ok(&out);
        assert_is_svg(&std::fs::read(dir.path().join("t.SVG")).unwrap());
    }
    // An extension that names no format writes nothing.
    for args in [
        &["reveal", "-o", "t.png"][..],
        &["sweep", "native:pairwise", "-n", "2..4", "-o", "s.svg"],
    ] {
        let line = assert_error(&run_in(dir.path(), args), 2);
        assert!(line.contains("cannot write a ."), "{line}");
    }
    assert!(!dir.path().join("t.png").exists() && !dir.path().join("s.svg").exists());
}

#[test]
fn a_read_only_file_is_not_replaced() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new().unwrap();
    let file = write(dir.path(), "kept.txt", "keep me\n");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = run_in(dir.path(), &["reveal", "-o", "kept.txt"]);
    let line = assert_error(&out, 2);
    assert!(line.contains("read-only"), "{line}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me\n");
}

#[test]
fn a_leaf_out_of_range_is_named() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "t.txt", "((0+1)+9)");
    let line = assert_error(&run_in(dir.path(), &["render", "t.txt"]), 2);
    assert!(line.contains("leaf 9 is out of range"), "{line}");
    write(dir.path(), "t.json", r#"{"n": 8, "tree": [[0, 1], 9]}"#);
    let line = assert_error(&run_in(dir.path(), &["render", "t.json"]), 2);
    assert!(line.contains("leaf 9 is out of range"), "{line}");
}

#[test]
fn sizes_the_memory_cannot_hold_are_refused_before_allocating() {
    let started = std::time::Instant::now();
    let out = run(&["reveal", "native:pairwise", "-n", "1000000000000"]);
    let line = assert_error(&out, 2);
    assert!(
        line.contains("of memory") && line.contains("smaller -n"),
        "{line}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn verbose_logs_are_plain_in_a_pipe_and_follow_rust_log() {
    let out = run(&["-v", "reveal", "native:pairwise", "-n", "64"]);
    let err = stderr(&out);
    assert!(err.contains("revealed: "), "{err}");
    assert!(!err.contains('\u{1b}'), "colours in a pipe: {err:?}");
    assert!(!err.contains("Stats {"), "{err}");
    // RUST_LOG alone turns logging on, at the level it names.
    let out = fprev()
        .env("RUST_LOG", "fprev=info")
        .args(["reveal", "native:pairwise", "-n", "64"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(
        err.contains("revealed: ") && !err.contains("DEBUG"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// A reader that hangs up: `fprev ... | head -1`
// ---------------------------------------------------------------------------

/// Runs `fprev ARGS` in `dir` with stdout piped, reads its first line (4 KiB
/// at most) and closes the pipe, as `| head -1` does; returns the line, the
/// status and stderr.
fn run_and_hang_up(dir: &Path, args: &[&str]) -> (String, std::process::ExitStatus, String) {
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Command as Process, Stdio};
    let mut child = Process::new(assert_cmd::cargo::cargo_bin!("fprev"))
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fprev starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap().take(4096))
        .read_line(&mut line)
        .unwrap();
    // The pipe's read end is dropped above: fprev's next write fails (EPIPE).
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (line, child.wait().unwrap(), err)
}

/// Asserts that fprev ended quietly with status 0 after its reader hung up.
fn assert_quiet_hang_up(line: &str, status: std::process::ExitStatus, err: &str) {
    assert!(!line.is_empty(), "no first line");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("Broken pipe"), "{err}");
    assert_eq!(status.code(), Some(0), "{status}: {err}");
}

#[test]
fn probes_into_a_pipe_closed_after_one_line_is_no_panic() {
    // The probes print line by line, each after its availability check
    // (NumPy, BLAS...), so later lines meet the closed pipe.
    let dir = TempDir::new().unwrap();
    let (line, status, err) = run_and_hang_up(dir.path(), &["probes"]);
    assert!(line.starts_with("native:"), "{line}");
    assert_quiet_hang_up(&line, status, &err);
}

#[test]
fn a_tree_larger_than_the_pipe_into_a_pipe_closed_early_is_no_panic() {
    // A JSON file whose tree line is about 230 KB, well over a pipe's 64
    // KiB buffer: the write is still going when the reader hangs up after
    // the first line, whatever the timing.
    let dir = TempDir::new().unwrap();
    write(dir.path(), "t.txt", &pairwise_text(0, 30_000));
    let args = ["render", "t.txt", "--format", "json"];
    let (line, status, err) = run_and_hang_up(dir.path(), &args);
    assert_eq!(line, "{\n");
    assert_quiet_hang_up(&line, status, &err);
}

/// The arithmetic model is found after the order by default, from a sample
/// of nodes; --every-node asks every node below the root; --no-arith skips
/// it. On a native order every node adds in the input format.
#[test]
fn reveal_finds_the_arithmetic_from_a_sample_or_every_node() {
    let sampled = run(&["reveal", "native:pairwise", "-n", "40"]);
    let err = stderr(&sampled);
    assert!(err.contains("arithmetic: f32 (16 nodes asked"), "{err}");
    assert!(stdout(&sampled).contains("# arithmetic: f32\n"));
    // 39 nodes; the root has no sibling to cancel against.
    let every = run(&["reveal", "native:pairwise", "-n", "40", "--every-node"]);
    let err = stderr(&every);
    assert!(err.contains("arithmetic: f32 (38 nodes asked"), "{err}");
    let none = run(&[
        "reveal",
        "native:pairwise",
        "-n",
        "40",
        "--no-arith",
        "--format",
        "json",
    ]);
    let doc: Value = serde_json::from_slice(&none.stdout).unwrap();
    assert!(doc.get("arithmetic").is_none(), "{doc}");
    assert!(doc["stats"].get("arithmetic_calls").is_none(), "{doc}");
    let clash = run(&["reveal", "native:pairwise", "--every-node", "--no-arith"]);
    assert_eq!(clash.status.code(), Some(2));
}

/// A tree file written twice for one order is one file: pretty-printed, a
/// key a line, no wall times (those only with --timings), so a golden file
/// changes only when the order does. Files of the one-line form with times
/// still read.
#[test]
fn tree_files_are_the_same_bytes_for_the_same_order() {
    let dir = TempDir::new().unwrap();
    for name in ["a.json", "b.json"] {
        assert_ok(&run_in(
            dir.path(),
            &["reveal", "native:strided:4", "-n", "40", "-o", name],
        ));
    }
    let a = std::fs::read_to_string(dir.path().join("a.json")).unwrap();
    assert_eq!(
        a,
        std::fs::read_to_string(dir.path().join("b.json")).unwrap()
    );
    assert!(!a.contains("seconds"), "{a}");
    assert!(a.starts_with("{\n  \"n\": 40,\n"), "{a}");
    let lines: Vec<&str> = a.lines().collect();
    assert!(lines.iter().any(|l| l.starts_with("  \"tree\": [")), "{a}");
    // Another order, another file.
    assert_ok(&run_in(
        dir.path(),
        &["reveal", "native:strided:8", "-n", "40", "-o", "c.json"],
    ));
    assert_ne!(
        a,
        std::fs::read_to_string(dir.path().join("c.json")).unwrap()
    );
    // --timings keeps the run's times.
    let timed = run(&[
        "reveal",
        "native:strided:4",
        "-n",
        "40",
        "--format",
        "json",
        "--timings",
    ]);
    let doc: Value = serde_json::from_str(&assert_ok(&timed)).unwrap();
    assert!(doc["stats"]["seconds"].as_f64().is_some(), "{doc}");
    // The one-line form, times and all, still reads, and is the same order.
    let old = r#"{"n":3,"dtype":"f32","tree":[[0,1],2],"stats":{"queries":2,"inputs":2,"calls":2,"seconds":0.5,"probe_seconds":0.1}}"#;
    std::fs::write(dir.path().join("old.json"), old).unwrap();
    assert_ok(&run_in(
        dir.path(),
        &["reveal", "native:sequential", "-n", "3", "-o", "new.json"],
    ));
    let same = run_in(dir.path(), &["diff", "old.json", "new.json"]);
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
}
