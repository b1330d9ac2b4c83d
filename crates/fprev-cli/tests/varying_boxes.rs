//! `fprev sweep`, `survey` and `compare` of a black box whose answers
//! change from call to call (Rayon's sum on 4 threads): its own outcome
//! everywhere, never a change point, never "same"; the same black box on
//! one thread, and a deterministic one, never reported so.

mod common;

use std::process::Output;

use serde_json::Value;
use tempfile::TempDir;

use common::{assert_code, run_in, stdout};

/// Work stealing regroups the sum on some calls only, more often under
/// load: a sweep or survey that saw none is tried again, up to this often.
const TRIES: usize = 6;

fn json(out: &Output) -> Value {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

#[test]
fn a_sweep_names_the_sizes_that_vary_and_claims_no_change_across_them() {
    let dir = TempDir::new().unwrap();
    let args = [
        "sweep",
        "rayon:sum",
        "-n",
        "1000,2000",
        "--threads",
        "1,4",
        "--runs",
        "50",
        "--format",
        "json",
    ];
    for _ in 0..TRIES {
        let out = run_in(dir.path(), &args);
        let s = json(&out);
        let points = s["points"].as_array().unwrap();
        let on = |t: u64| points.iter().filter(move |p| p["threads"] == t);
        // One thread: one order, a tree at each size.
        for p in on(1) {
            assert!(p["depth"].is_u64() && p["order"] != "varies", "{p}");
        }
        let varied: Vec<&Value> = on(4).filter(|p| p["order"] == "varies").collect();
        let broke = points.iter().any(|p| p["problem"].is_string());
        assert_eq!(
            out.status.code(),
            Some(match (broke, varied.is_empty()) {
                (true, _) => 3,
                (false, false) => 6,
                (false, true) => 0,
            }),
            "{s}"
        );
        for c in s["change_points"].as_array().unwrap() {
            assert!(c["from"] != "varies" && c["to"] != "varies", "{c}");
            assert_eq!(
                c["threads"], 1,
                "a change claimed across a varying size: {c}"
            );
        }
        let Some(p) = varied.first() else {
            continue;
        };
        let v = &p["variation"];
        assert!(v["varied"].as_u64() >= Some(1), "{p}");
        assert!(v["most_distinct"].as_u64() >= Some(2), "{p}");
        assert!(v["spread_ulps"].as_f64() > Some(0.0), "{p}");
        assert!(p.get("depth").is_none(), "{p}");
        let sizes: Vec<&Value> = varied.iter().map(|p| &p["n"]).collect();
        let dependent = s["thread_dependent"].as_array().unwrap();
        assert!(sizes.iter().all(|n| dependent.contains(n)), "{s}");
        return;
    }
    panic!("rayon:sum on 4 threads never varied in {TRIES} sweeps");
}

#[test]
fn a_deterministic_sweep_never_varies() {
    let dir = TempDir::new().unwrap();
    for spec in ["native:pairwise", "rayon:sum:1"] {
        let out = run_in(
            dir.path(),
            &["sweep", spec, "-n", "30,64,500", "--runs", "20"],
        );
        let text = assert_code(&out, 0);
        assert!(!text.contains("varies"), "{text}");
    }
}

/// `fprev survey` of `spec` (no thread counts compared) into `dir/out`,
/// looking for variation with up to 100 calls of each input at its
/// largest size, `large` (none: `""`).
fn survey(dir: &TempDir, spec: &str, out: &str, large: &str) -> Output {
    let mut args = vec![
        "survey",
        "--spec",
        spec,
        "--dtypes",
        "f32",
        "-n",
        "1..6",
        "--no-threads",
        "--no-draw",
        "--runs",
        "100",
        "--fresh",
        "-o",
        out,
    ];
    match large {
        "" => args.push("--no-large"),
        n => args.extend(["--large", n]),
    }
    run_in(dir.path(), &args)
}

#[test]
fn a_survey_marks_a_varying_box_and_compare_never_calls_it_the_same() {
    let dir = TempDir::new().unwrap();
    let varying = (0..TRIES).find_map(|_| {
        let out = survey(&dir, "rayon:sum:4", "four", "20000");
        let text = assert_code(&out, 0);
        text.contains("varies from call to call at n = ")
            .then_some(text)
    });
    let text = varying.unwrap_or_else(|| panic!("rayon:sum:4 never varied"));
    assert!(text.contains("ulps apart"), "{text}");
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("four/survey.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(s["fprev_survey"], 2);
    let e = &s["entries"][0];
    assert_eq!(
        (&e["spec"], &e["status"]),
        (&"rayon:sum:4".into(), &"varies".into()),
        "{e}"
    );
    let sizes = e["sizes"].as_array().unwrap();
    let varied: Vec<&Value> = sizes.iter().filter(|s| s["outcome"] == "varies").collect();
    assert!(!varied.is_empty(), "{e}");
    assert!(
        varied
            .iter()
            .all(|s| s["variation"]["varied"].as_u64() >= Some(1))
    );
    let page = std::fs::read_to_string(dir.path().join("four/index.html")).unwrap();
    assert!(
        page.contains("its answers vary from call to call at n = "),
        "no varies in the page"
    );

    // One thread: the same black box, deterministic.
    let one = survey(&dir, "rayon:sum:1", "one", "");
    let text = assert_code(&one, 0);
    assert!(!text.contains("varies"), "{text}");

    let compare = |a: &str, b: &str, more: &[&str]| {
        let mut args = vec!["compare", a, b];
        args.extend(more);
        run_in(dir.path(), &args)
    };
    // Varying in both surveys is never the same, whatever bits one run
    // gave (one side varying is a library test).
    let out = compare("four", "four/survey.json", &["--html", "c.html"]);
    let text = assert_code(&out, 1);
    assert!(
        text.contains("rayon:sum:4 f32: VARIES: varies from call to call: A varied at n = "),
        "{text}"
    );
    assert!(text.contains("; B varied at n = "), "{text}");
    assert!(text.contains("1 varying from call to call"), "{text}");
    let html = std::fs::read_to_string(dir.path().join("c.html")).unwrap();
    assert!(html.contains("<td class=varies>varies</td>"), "{html}");
    let out = compare("four", "four", &["--format", "json"]);
    assert_code(&out, 1);
    let c = json(&out);
    let e = &c["entries"][0];
    assert_eq!(e["verdict"], "varies", "{c}");
    let [a, b] = [&e["varies"][0], &e["varies"][1]];
    assert!(
        a == b && a.as_str().is_some_and(|a| a.contains("ulps")),
        "{c}"
    );
    // The deterministic side against itself: the same bits.
    let out = compare("one", "one", &[]);
    let text = assert_code(&out, 0);
    assert!(text.contains("rayon:sum:1 f32: same: same bits"), "{text}");
}

#[test]
fn a_survey_of_the_native_libraries_has_rayon_rows() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "survey",
            "--only",
            "rayon",
            "--ops",
            "sum,dot",
            "--dtypes",
            "f32",
            "-n",
            "1..4",
            "--no-large",
            "--no-threads",
            "--no-draw",
            "--runs",
            "0",
            "-o",
            "rayon",
        ],
    );
    let text = assert_code(&out, 0);
    for row in ["rayon:sum ", "rayon:dot "] {
        assert!(text.contains(row), "{text}");
    }
}
