//! `fprev survey --gpu ARCH` and `fprev compare` of two simulated GPUs:
//! will results change from an A100 to an H100? The surveys (one
//! instruction each, at small K) are compared, and the difference named
//! is checked against MMA-Sim's own parameters, read from the installed
//! package's classes here (products a fused step takes, bits it keeps,
//! its output rounding), not written into the test.
#![cfg(feature = "python")]

mod common;

use std::path::Path;

use common::{assert_code, assert_error, assert_ok, fprev, stdout};
use serde_json::{Value, json};
use tempfile::TempDir;

/// Surveys `arch`'s instructions of `dtype` inputs at K = `sizes` into
/// `dir/arch`; returns what it printed.
fn survey(dir: &Path, arch: &str, dtype: &str, sizes: &str) -> String {
    let out = fprev()
        .args(["survey", "--gpu", arch, "--dtypes", dtype, "-n", sizes])
        .arg("-o")
        .arg(dir.join(arch))
        .output()
        .unwrap();
    assert_ok(&out)
}

/// `fprev compare` of the surveys of `a` and `b` in `dir`: its exit
/// status, its text, and its JSON.
fn compare(dir: &Path, a: &str, b: &str) -> (Option<i32>, String, Value) {
    let run = |extra: &[&str]| {
        fprev()
            .arg("compare")
            .args([dir.join(a), dir.join(b)])
            .args(extra)
            .output()
            .unwrap()
    };
    let text = run(&[]);
    let json = run(&["--format", "json"]);
    assert_eq!(text.status.code(), json.status.code());
    (
        text.status.code(),
        stdout(&text),
        serde_json::from_str(&stdout(&json)).unwrap(),
    )
}

/// MMA-Sim's parameters of `instruction` on `arch` (its own name):
/// `(L_max, F, rho)`.
fn mmasim_parameters(arch: &str, instruction: &str) -> (u64, u64, String) {
    let script = format!(
        "from mmasim.nv_ptx import MMA\n\
         op = MMA({arch:?}, {instruction:?}).arithmetic_op\n\
         print(op.L_max, op.F, op.rho)"
    );
    let out = std::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "MMA-Sim is not importable (scripts/test.sh installs it): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let parts: Vec<&str> = text.split_whitespace().collect();
    (
        parts[0].parse().unwrap(),
        parts[1].parse().unwrap(),
        parts[2].to_string(),
    )
}

/// The instruction a survey of `arch` in `dir` took.
fn instruction(dir: &Path, arch: &str) -> String {
    let text = std::fs::read_to_string(dir.join(arch).join("survey.json")).unwrap();
    let survey: Value = serde_json::from_str(&text).unwrap();
    let spec = survey["entries"][0]["spec"].as_str().unwrap();
    spec.rsplit(':').next().unwrap().to_string()
}

#[test]
fn two_gpus_compared_name_what_the_simulator_changes_and_one_against_itself_nothing() {
    let dir = TempDir::new().unwrap();
    // Past Hopper's first group of 16 products.
    for arch in ["ampere", "hopper"] {
        let said = survey(dir.path(), arch, "f16", "3..20");
        assert!(said.contains("checked on"), "{said}");
    }
    let (code, text, json) = compare(dir.path(), "ampere", "hopper");
    assert_eq!(code, Some(1), "{text}");
    let e = &json["entries"][0];
    assert_eq!(e["verdict"], "differ", "{text}");
    let g = &e["gpu"];
    assert_eq!(g["types"], serde_json::json!(["f16", "f32"]));
    let mut expected = Vec::new();
    for (side, arch, name) in [("a", "ampere", "Ampere"), ("b", "hopper", "Hopper")] {
        let (l, f, rho) = mmasim_parameters(name, &instruction(dir.path(), arch));
        let found = &g[side];
        assert_eq!(found["products"], l, "{arch}: {found}");
        assert_eq!(found["fused_bits"], f, "{arch}: {found}");
        let (rounding, output) = rho.split_once('-').unwrap();
        let rounding = match rounding {
            "RZ" => "toward-zero",
            "RNE" => "nearest-even",
            other => panic!("{other}"),
        };
        assert_eq!(found["rounding"], rounding, "{arch}: {found}");
        assert_eq!(found["output"], output.to_lowercase().replace("fp", "f"));
        expected.push((l, f, rounding.replace('-', " ")));
    }
    let changed: Vec<&str> = g["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut named = Vec::new();
    if expected[0].0 != expected[1].0 {
        named.push("products");
    }
    if expected[0].1 != expected[1].1 {
        named.push("fused-bits");
    }
    assert_eq!(changed, named, "{text}");
    // The same in words, A's value first (both round alike, in MMA-Sim).
    assert_eq!(expected[0].2, expected[1].2);
    let words = format!(
        "f16 inputs into f32: results change: products a step {} → {}, bits kept {} → {}; \
         output rounding {} in both",
        expected[0].0, expected[1].0, expected[0].1, expected[1].1, expected[0].2
    );
    assert!(text.contains(&words), "{text}");
    assert!(
        text.contains("mma architecture: ampere -> hopper"),
        "{text}"
    );

    // A survey against itself: the same bits, nothing changes.
    let (code, text, json) = compare(dir.path(), "hopper", "hopper");
    assert_eq!(code, Some(0), "{text}");
    let e = &json["entries"][0];
    assert_eq!(e["verdict"], "same", "{text}");
    assert_eq!(e["gpu"]["changed"], serde_json::json!([]));
    assert!(text.contains("results do not change"), "{text}");

    // The page says it too.
    let page = dir.path().join("compare.html");
    let out = fprev()
        .arg("compare")
        .args([dir.path().join("ampere"), dir.path().join("hopper")])
        .arg("--html")
        .arg(&page)
        .arg("--no-draw")
        .output()
        .unwrap();
    assert_code(&out, 1);
    let html = std::fs::read_to_string(&page).unwrap();
    let first = format!("products a step {} → {}", expected[0].0, expected[1].0);
    assert!(html.contains(&first), "{html}");
}

/// CDNA3 adds in two stages, which fprev's model cannot express: a
/// reveal at K <= 9 confirms a one-stage fused model on its few dozen
/// random inputs, but the survey's check against the simulator refutes
/// it, so compare never reads it as the instruction's arithmetic.
#[test]
fn a_model_the_simulator_refutes_is_never_compared_as_the_arithmetic() {
    let dir = TempDir::new().unwrap();
    let said = survey(dir.path(), "cdna3", "f16", "3..9");
    assert!(said.contains("failed a check"), "{said}");
    // The page says so beside the models its reveals confirmed.
    let page = std::fs::read_to_string(dir.path().join("cdna3").join("index.html")).unwrap();
    assert!(page.contains("its model failed a check at n = 9"), "{page}");
    survey(dir.path(), "ampere", "f16", "3..9");
    let (code, text, json) = compare(dir.path(), "ampere", "cdna3");
    assert_eq!(code, Some(1), "{text}");
    let e = &json["entries"][0];
    assert_eq!(e["verdict"], "unknown", "{text}");
    assert_eq!(e["gpu"]["b"], Value::Null, "{text}");
    assert!(text.contains("no model of B's was confirmed"), "{text}");
}

#[test]
fn an_architecture_not_simulated_is_refused_naming_those_that_are() {
    let dir = TempDir::new().unwrap();
    let out = fprev()
        .args(["survey", "--gpu", "pascal", "-o"])
        .arg(dir.path().join("s"))
        .output()
        .unwrap();
    let e = assert_error(&out, 2);
    assert!(e.contains("hopper") && e.contains("cdna3"), "{e}");
    assert!(!dir.path().join("s").exists());
}

/// An instruction named with `--spec` is surveyed in its own input
/// format: the default dtypes (f32, f64, f16, bf16) once refused it (exit
/// 2, "takes f16 inputs"); an fp8 one is surveyed in e4m3, its masks
/// products of two operands, and its model the simulator's (13 bits kept,
/// the result truncated to E8M13); one fprev has no format for (AMD's FNUZ
/// fp8) is an entry that says why.
#[test]
fn an_instruction_spec_is_surveyed_in_its_own_format_or_says_why_not() {
    let dir = TempDir::new().unwrap();
    let run = |spec: &str, extra: &[&str], to: &str| {
        fprev()
            .args([
                "survey",
                "--spec",
                spec,
                "-n",
                "3..6",
                "--no-large",
                "--no-draw",
            ])
            .args(extra)
            .arg("-o")
            .arg(dir.path().join(to))
            .output()
            .unwrap()
    };
    let entries = |to: &str| -> Vec<Value> {
        let text = std::fs::read_to_string(dir.path().join(to).join("survey.json")).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        v["entries"].as_array().unwrap().clone()
    };
    assert_ok(&run("mma:volta:m8n8k4.f32.f16.f16.f32", &[], "volta"));
    let e = entries("volta");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0]["dtype"], "f16");
    assert_ok(&run(
        "mma:ada:m16n8k32.f32.e4m3.e4m3.f32",
        &["--dtypes", "e4m3"],
        "fp8",
    ));
    let e = entries("fp8");
    assert_eq!(e.len(), 1, "{e:?}");
    // One instruction (K = 32) at every size: one fused node each, whose
    // model is MMA-Sim's for Ada's fp8 (F = 13, RZ-E8M13).
    for size in e[0]["sizes"].as_array().unwrap() {
        let node = &size["arithmetic"]["default"];
        assert_eq!(
            (&node["format"], &node["rounding"], &node["fused_bits"]),
            (&json!("e8m13"), &json!("toward-zero"), &json!(13)),
            "{size}"
        );
    }
    // Named by hand, it is refused before surveying; in a survey of the
    // architecture, where fprev chose it, it is an entry saying why.
    let said = assert_error(
        &run(
            "mma:cdna3:f32_16x16x32_fp8_fp8",
            &["--dtypes", "e4m3"],
            "fnuz",
        ),
        2,
    );
    assert!(said.contains("FNUZ"), "{said}");
    let said = assert_code(
        &fprev()
            .args(["survey", "--gpu", "cdna3", "--dtypes", "e4m3", "-n", "3..4"])
            .args(["--no-draw", "-o"])
            .arg(dir.path().join("cdna3"))
            .output()
            .unwrap(),
        3,
    );
    let e = entries("cdna3");
    assert_eq!(e.len(), 1, "{said}");
    assert_eq!(e[0]["status"], "failed");
    let why = e[0]["error"].as_str().unwrap();
    assert!(why.contains("FNUZ"), "{why}");
}
