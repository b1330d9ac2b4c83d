//! `fprev survey` and `fprev compare` as people use them: surveys of this
//! machine in settings that differ in one known way each (the BLAS library,
//! OpenBLAS's core type, an OpenMP kernel's thread count), compared, each
//! naming exactly that difference; a survey resumed after an interruption;
//! and the page opened in a real headless browser (Debian's Chromium).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use tempfile::TempDir;

/// Sizes small enough for a test, with a change of regime for OpenBLAS's
/// 32-slot kernel to show.
const SIZES: &str = "1..40,64,100";

/// The environment variables that steer kernels, cleared so each survey
/// differs only in what the test sets.
const STEERING: &[&str] = &[
    "FPREV_BLAS",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "NPY_DISABLE_CPU_FEATURES",
];

fn fprev(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = assert_cmd::cargo::cargo_bin_cmd!("fprev");
    cmd.current_dir(dir).args(args);
    for v in STEERING {
        cmd.env_remove(v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("fprev runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_exit(out: &Output, code: i32) {
    let (o, e) = (text(&out.stdout), text(&out.stderr));
    assert!(!e.contains("panicked"), "{e}");
    assert_eq!(out.status.code(), Some(code), "stdout: {o}\nstderr: {e}");
}

/// `fprev survey` of `specs` into `dir/name`, in the environment `env`.
fn survey(dir: &Path, name: &str, specs: &[&str], env: &[(&str, &str)]) -> PathBuf {
    let mut args = vec![
        "survey",
        "-o",
        name,
        "-n",
        SIZES,
        "--dtypes",
        "f32",
        "--no-large",
        "--no-threads",
    ];
    for s in specs {
        args.extend(["--spec", s]);
    }
    let out = fprev(dir, &args, env);
    assert_exit(&out, 0);
    dir.join(name)
}

/// `fprev compare a b`: its exit status and text.
fn compare(dir: &Path, a: &Path, b: &Path) -> (i32, String) {
    let out = fprev(
        dir,
        &["compare", a.to_str().unwrap(), b.to_str().unwrap()],
        &[],
    );
    assert!(!text(&out.stderr).contains("panicked"));
    (out.status.code().unwrap_or(-1), text(&out.stdout))
}

/// The line of `report` about `spec`, and the lines under it.
fn about(report: &str, spec: &str) -> String {
    let mut lines = report.lines().skip_while(|l| !l.starts_with(spec));
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no line on {spec}: {report}"));
    std::iter::once(first)
        .chain(lines.take_while(|l| l.starts_with("    ")))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn compare_names_the_blas_library_that_replaced_openblas() {
    let dir = TempDir::new().unwrap();
    let openblas = survey(dir.path(), "openblas", &["blas:dot"], &[]);
    let blis = survey(dir.path(), "blis", &["blas:dot"], &[("FPREV_BLAS", "blis")]);
    let (code, report) = compare(dir.path(), &openblas, &blis);
    assert_eq!(code, 1, "{report}");
    let entry = about(&report, "blas:dot f32");
    assert!(entry.contains("DIFFERENT: other order"), "{entry}");
    assert!(entry.contains("$FPREV_BLAS: (unset) -> blis"), "{entry}");
    assert!(
        entry.contains("blas path: ") && entry.contains("blis"),
        "{entry}"
    );
    // Nothing else differs between the two settings.
    assert!(
        !entry.contains("OPENBLAS_CORETYPE") && !entry.contains("OMP_NUM_THREADS"),
        "{entry}"
    );
    // A survey compared with itself: the same bits, exit 0.
    let (code, same) = compare(dir.path(), &openblas, &openblas);
    assert_eq!(code, 0, "{same}");
    assert!(about(&same, "blas:dot f32").contains("same bits"), "{same}");
}

#[test]
fn compare_names_openblas_core_type() {
    let dir = TempDir::new().unwrap();
    let spec = ["blas:dot@openblas"];
    let native = survey(dir.path(), "native", &spec, &[]);
    let prescott = survey(
        dir.path(),
        "prescott",
        &spec,
        &[("OPENBLAS_CORETYPE", "Prescott")],
    );
    let (code, report) = compare(dir.path(), &native, &prescott);
    assert_eq!(code, 1, "{report}");
    let entry = about(&report, "blas:dot@openblas f32");
    assert!(entry.contains("DIFFERENT"), "{entry}");
    assert!(
        entry.contains("$OPENBLAS_CORETYPE: (unset) -> Prescott"),
        "{entry}"
    );
    assert!(!entry.contains("FPREV_BLAS"), "{entry}");
    // The JSON form says the same, for scripts.
    let out = fprev(
        dir.path(),
        &["compare", "native", "prescott", "--format", "json"],
        &[],
    );
    assert_exit(&out, 1);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = &v["entries"][0];
    assert_eq!(e["verdict"], "differ");
    assert!(e["first_differing"].as_u64().is_some());
    assert!(
        e["suspects"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().starts_with("$OPENBLAS_CORETYPE")),
        "{e}"
    );
}

/// Whether this CPU has every one of `flags`, as `/proc/cpuinfo` lists
/// them.
fn cpu_has(flags: &[&str]) -> bool {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let line = info.lines().find(|l| l.starts_with("flags")).unwrap_or("");
    let have: Vec<&str> = line.split_whitespace().collect();
    flags.iter().all(|f| have.contains(f))
}

/// `fprev reveal blas:dot@openblas -n 4096` under `env`, saved as `name`.
fn reveal_dot(dir: &Path, name: &str, env: &[(&str, &str)]) {
    let args = [
        "reveal",
        "blas:dot@openblas",
        "-n",
        "4096",
        "--format",
        "json",
        "-o",
        name,
    ];
    assert_exit(&fprev(dir, &args, env), 0);
}

/// `fprev survey --knobs` of OpenBLAS's dot at n = 1..8 and 4096, in
/// `dir/name`, under the core type `core`.
fn survey_knobs(dir: &Path, name: &str, core: &str) -> Value {
    let args = [
        "survey",
        "--knobs",
        "--spec",
        "blas:dot@openblas",
        "--dtypes",
        "f32",
        "-n",
        "1..8",
        "--large",
        "4096",
        "--no-threads",
        "--runs",
        "0",
        "-o",
        name,
    ];
    let out = fprev(dir, &args, &[("OPENBLAS_CORETYPE", core)]);
    assert_exit(&out, 0);
    serde_json::from_str(&std::fs::read_to_string(dir.join(name).join("survey.json")).unwrap())
        .unwrap()
}

#[test]
fn a_survey_with_knobs_finds_openblas_core_type_and_compare_names_it() {
    // OpenBLAS runs a forced core type without asking the CPU: Haswell's
    // (AVX2) and Prescott's (SSE3, Linux's `pni`) kernels run on every CPU
    // this suite runs on, AVX-512 or not, and sum a dot in other orders.
    assert!(
        cpu_has(&["avx2", "fma", "pni"]),
        "this CPU runs neither Haswell's nor Prescott's kernels"
    );
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    // What the knobs must find, found apart: plain reveals, diffed.
    reveal_dot(d, "haswell.json", &[("OPENBLAS_CORETYPE", "Haswell")]);
    reveal_dot(d, "prescott.json", &[("OPENBLAS_CORETYPE", "Prescott")]);
    reveal_dot(d, "one.json", &[("OPENBLAS_NUM_THREADS", "1")]);
    reveal_dot(d, "two.json", &[("OPENBLAS_NUM_THREADS", "2")]);
    let diff = |a: &str, b: &str| fprev(d, &["diff", a, b], &[]).status.code();
    assert_eq!(diff("haswell.json", "prescott.json"), Some(1));
    let threads_change = diff("one.json", "two.json") == Some(1);

    let a = survey_knobs(d, "A", "Haswell");
    let b = survey_knobs(d, "B", "Prescott");
    for s in [&a, &b] {
        assert_eq!(s["plan"]["knobs"], true);
        let knobs = s["entries"][0]["knobs"].as_array().unwrap();
        let knob = |name: &str| {
            knobs
                .iter()
                .find(|k| k["name"] == name)
                .unwrap_or_else(|| panic!("no {name}: {knobs:?}"))
        };
        let core = knob("OPENBLAS_CORETYPE");
        assert_eq!(core["n"], 4096);
        assert_eq!(core["changes"], true, "{core}");
        let values: Vec<&str> = core["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let at = |v: &str| values.iter().position(|x| *x == v).unwrap();
        let outcomes = core["outcomes"].as_array().unwrap();
        assert_ne!(outcomes[at("Haswell")], outcomes[at("Prescott")], "{core}");
        assert_eq!(knob("OPENBLAS_NUM_THREADS")["changes"], threads_change);
    }
    let page = std::fs::read_to_string(d.join("A").join("index.html")).unwrap();
    assert!(
        page.contains("OPENBLAS_CORETYPE changes the order at n = 4096: Haswell: "),
        "{page}"
    );
    // The machine facts hold each survey's setting, for compare to read.
    assert_eq!(a["machine"]["environment"]["OPENBLAS_CORETYPE"], "Haswell");
    assert_eq!(b["machine"]["environment"]["OPENBLAS_CORETYPE"], "Prescott");

    let note = "OPENBLAS_CORETYPE differs (Haswell on A, Prescott on B) and changes \
                blas:dot@openblas (at n = 4096): pin it";
    let out = fprev(d, &["compare", "A", "B", "--html", "compare.html"], &[]);
    assert_exit(&out, 1);
    let entry = about(&text(&out.stdout), "blas:dot@openblas f32");
    assert!(
        entry.contains("DIFFERENT") && entry.contains(note),
        "{entry}"
    );
    // The knob explains it: the facts that bear on it are not listed.
    assert!(!entry.contains("likely why"), "{entry}");
    let page = std::fs::read_to_string(d.join("compare.html")).unwrap();
    assert!(page.contains(note), "{page}");
    let out = fprev(d, &["compare", "A", "B", "--format", "json"], &[]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let k = &v["entries"][0]["knobs"][0];
    assert_eq!(
        (&k["knob"], &k["a"], &k["b"], &k["differs"]),
        (
            &Value::from("OPENBLAS_CORETYPE"),
            &Value::from("Haswell"),
            &Value::from("Prescott"),
            &Value::from(true)
        )
    );
    // Pinned to one core type on both: the same bits, nothing to pin.
    let (code, same) = compare(d, &d.join("A"), &d.join("A"));
    assert_eq!(code, 0, "{same}");
    assert!(!same.contains("pin"), "{same}");

    // A survey made before knobs were (no knobs key) still reads, and the
    // other survey's record still names the knob.
    let mut old = a.clone();
    old["plan"].as_object_mut().unwrap().remove("knobs");
    old["entries"][0].as_object_mut().unwrap().remove("knobs");
    std::fs::write(d.join("old.json"), old.to_string()).unwrap();
    let (code, report) = compare(d, &d.join("old.json"), &d.join("B"));
    assert_eq!(code, 1, "{report}");
    assert!(report.contains(note), "{report}");
    // A knob record that is no survey's: refused whole, exit 2.
    let mut bad = a.clone();
    bad["entries"][0]["knobs"][0]["outcomes"] = Value::Array(Vec::new());
    bad["entries"][0]["knobs"][0]["values"] = Value::Array(Vec::new());
    std::fs::write(d.join("bad.json"), bad.to_string()).unwrap();
    let out = fprev(d, &["compare", "bad.json", "B"], &[]);
    assert_exit(&out, 2);
    let err = text(&out.stderr);
    assert!(err.contains("knob") && err.lines().count() == 1, "{err}");
}

#[test]
fn numpy_is_told_to_disable_only_cpu_features_it_dispatches() {
    let dir = TempDir::new().unwrap();
    let args = [
        "survey",
        "--knobs",
        "--spec",
        "numpy:sum",
        "--dtypes",
        "f32",
        "-n",
        "1..8",
        "--no-large",
        "--no-threads",
        "--runs",
        "0",
        "-o",
        "np",
    ];
    let out = fprev(dir.path(), &args, &[]);
    assert_exit(&out, 0);
    // NumPy's own word where a feature is not one it dispatches (it then
    // disables nothing).
    let err = text(&out.stderr);
    assert!(!err.contains("You cannot disable"), "{err}");
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("np/survey.json")).unwrap())
            .unwrap();
    let dispatched = s["machine"]["libraries"]["numpy"]["cpu dispatch"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let knobs = s["entries"][0]["knobs"].as_array().unwrap();
    let npy = knobs
        .iter()
        .find(|k| k["name"] == "NPY_DISABLE_CPU_FEATURES");
    let Some(npy) = npy else {
        assert!(dispatched.is_empty(), "{knobs:?}");
        return;
    };
    assert_eq!(npy["values"][0], "unset");
    let off = npy["values"][1].as_str().unwrap();
    assert!(
        off.split_whitespace()
            .all(|f| dispatched.split_whitespace().any(|d| d == f)),
        "{off} against {dispatched}"
    );
    // Each value gave a finding, none failed.
    for o in npy["outcomes"].as_array().unwrap() {
        assert!(!o.as_str().unwrap().starts_with("failed"), "{npy}");
    }
}

/// Builds the OpenMP sum of `tests/c/omp_sum.c` into `dir`.
fn build_omp_sum(dir: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/omp_sum.c");
    let lib = dir.join("libomp_sum.so");
    let status = Command::new("cc")
        .args(["-O2", "-fopenmp", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&source)
        .status()
        .expect("a C compiler `cc` on the PATH (apt-get install gcc)");
    assert!(
        status.success(),
        "cc -fopenmp failed on {}",
        source.display()
    );
    lib
}

#[test]
fn compare_names_the_thread_count_of_an_openmp_kernel() {
    let dir = TempDir::new().unwrap();
    let lib = build_omp_sum(dir.path());
    let spec = format!("dylib:{}:omp_sum", lib.display());
    let run = |name: &str, threads: &str| {
        let out = fprev(
            dir.path(),
            &[
                "survey",
                "-o",
                name,
                "-n",
                "1..24",
                "--dtypes",
                "f32",
                "--no-large",
                "--spec",
                &spec,
            ],
            &[("OMP_NUM_THREADS", threads)],
        );
        assert_exit(&out, 0);
        dir.path().join(name)
    };
    let (one, two) = (run("one", "1"), run("two", "2"));
    let (code, report) = compare(dir.path(), &one, &two);
    assert_eq!(code, 1, "{report}");
    let entry = about(&report, &format!("{spec} f32"));
    // Up to 3 summands two threads' halves, ((0+1)+2), are one thread's
    // left-to-right sum: n = 4 is the first where they part.
    assert!(
        entry.contains("DIFFERENT: other order") && entry.contains("from n = 4"),
        "{entry}"
    );
    assert!(entry.contains("$OMP_NUM_THREADS: 1 -> 2"), "{entry}");
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(one.join("survey.json")).unwrap()).unwrap();
    assert_eq!(s["entries"][0]["formula"], "sequential");
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(two.join("survey.json")).unwrap()).unwrap();
    assert_eq!(s["entries"][0]["formula"], "split(2, sequential, doubling)");
}

#[test]
fn a_survey_goes_on_where_it_stopped() {
    let dir = TempDir::new().unwrap();
    let specs = ["native:strided:4", "native:pairwise"];
    let path = survey(dir.path(), "s", &specs, &[]).join("survey.json");
    let full: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(full["entries"].as_array().unwrap().len(), 2);
    // As if stopped after the first black box.
    let mut cut = full.clone();
    cut["entries"].as_array_mut().unwrap().truncate(1);
    std::fs::write(&path, serde_json::to_string(&cut).unwrap()).unwrap();
    let mut args = vec![
        "survey",
        "-o",
        "s",
        "-n",
        SIZES,
        "--dtypes",
        "f32",
        "--no-large",
    ];
    args.extend(["--no-threads", "--spec", specs[0], "--spec", specs[1]]);
    let out = fprev(dir.path(), &args, &[]);
    assert_exit(&out, 0);
    assert!(
        text(&out.stderr).contains("1 entries already surveyed"),
        "{}",
        text(&out.stderr)
    );
    let again: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // The first entry was kept as it was (its time too), the second made.
    assert_eq!(again["entries"][0], full["entries"][0]);
    assert_eq!(again["entries"][1]["spec"], "native:pairwise");
    assert_eq!(
        again["entries"][1]["formula"],
        full["entries"][1]["formula"]
    );
    // In another setting the file is not mixed with new results.
    let out = fprev(dir.path(), &args, &[("OPENBLAS_CORETYPE", "Haswell")]);
    assert_exit(&out, 2);
    let err = text(&out.stderr);
    assert!(
        err.contains("was made on another machine or setting")
            && err.contains("$OPENBLAS_CORETYPE"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    args.push("--fresh");
    assert_exit(
        &fprev(dir.path(), &args, &[("OPENBLAS_CORETYPE", "Haswell")]),
        0,
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("not.json"), "{\"n\": 3}").unwrap();
    for args in [
        vec!["compare", "not.json", "not.json"],
        vec!["compare", "missing.json", "not.json"],
        vec!["survey", "--only", "nosuchlib"],
        vec!["survey", "--shape", "0,4"],
    ] {
        let out = fprev(dir.path(), &args, &[]);
        assert_exit(&out, 2);
        let err = text(&out.stderr);
        assert!(
            err.starts_with("fprev: error:") || err.starts_with("error:"),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

// ---------------------------------------------------------------------------
// The page in a real browser
// ---------------------------------------------------------------------------

/// Debian's Chromium, or why the browser tests cannot run.
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            let out = Command::new("sh")
                .args(["-c", &format!("command -v {name}")])
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| PathBuf::from(text(&out.stdout).trim()))
        });
    if found.is_none() {
        eprintln!("SKIPPED: no Chromium to open the page in (apt-get install chromium)");
    }
    found
}

/// What a headless Chromium makes of `page`: the DOM after load, the
/// console's errors, and a screenshot at `shot`.
fn open_in_browser(browser: &Path, page: &Path, shot: &Path) -> (String, Vec<String>) {
    let url = format!("file://{}", page.display());
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1400,1100",
    ];
    let dom = Command::new(browser)
        .args(common)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .expect("chromium runs");
    // The console's messages are logged as `CONSOLE` lines; page errors too.
    let errors: Vec<String> = text(&dom.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect();
    let shot_run = Command::new(browser)
        .args(common)
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .expect("chromium runs");
    assert!(shot_run.status.success(), "{}", text(&shot_run.stderr));
    (text(&dom.stdout), errors)
}

#[test]
fn the_survey_page_loads_in_a_real_browser_without_errors() {
    let Some(browser) = chromium() else { return };
    let dir = TempDir::new().unwrap();
    // Three black boxes: explained, with a change of regime, and in f64.
    let s = survey(
        dir.path(),
        "s",
        &["native:strided:8", "native:blocked:16", "ndarray:dot"],
        &[],
    );
    let page = s.join("index.html");
    let (dom, errors) = open_in_browser(&browser, &page, &dir.path().join("shot.png"));
    assert!(errors.is_empty(), "console errors: {errors:?}");
    assert!(
        dom.contains("<table class=\"entries\">"),
        "{}",
        &dom[..dom.len().min(2000)]
    );
    // A header row and one row per black box, each drawn.
    let table = &dom[dom.find("<table class=\"entries\">").unwrap()..];
    let body = &table[table.find("<tbody>").unwrap()..];
    assert_eq!(body.matches("<tr class=\"entry\">").count(), 3);
    assert_eq!(body.matches("<svg").count(), 3);
    assert!(body.contains("native:strided:8") && body.contains("blocked:16"));
    let png = std::fs::read(dir.path().join("shot.png")).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );

    // The check sees a console error where there is one.
    let broken = dir.path().join("broken.html");
    std::fs::write(
        &broken,
        "<!DOCTYPE html><script>console.error('boom')</script>",
    )
    .unwrap();
    let (_, errors) = open_in_browser(&browser, &broken, &dir.path().join("b.png"));
    assert!(errors.iter().any(|e| e.contains("boom")), "{errors:?}");
}

#[test]
fn the_compare_page_loads_in_a_real_browser_without_errors() {
    let Some(browser) = chromium() else { return };
    let dir = TempDir::new().unwrap();
    let a = survey(dir.path(), "a", &["blas:dot"], &[]);
    let b = survey(dir.path(), "b", &["blas:dot"], &[("FPREV_BLAS", "blis")]);
    let page = dir.path().join("diff.html");
    let out = fprev(
        dir.path(),
        &[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
        ],
        &[],
    );
    assert_exit(&out, 1);
    let (dom, errors) = open_in_browser(&browser, &page, &dir.path().join("shot.png"));
    assert!(errors.is_empty(), "console errors: {errors:?}");
    assert!(dom.contains("class=\"differ\""), "{dom}");
    assert_eq!(dom.matches("<svg").count(), 2, "both trees drawn");
}

/// Polars and DuckDB, installed, are libraries a survey visits: their sum
/// in f32 and f64, with their versions among the machine's facts; DuckDB's
/// on each thread count compared, Polars' on the one count it was imported
/// with only.
#[cfg(feature = "python")]
#[test]
fn a_survey_visits_polars_and_duckdb() {
    let dir = TempDir::new().unwrap();
    let args = [
        "survey",
        "--only",
        "polars,duckdb",
        "-n",
        "1..8",
        "--dtypes",
        "f32,f64",
        "--no-large",
        "--threads",
        "1,2",
        "--thread-sizes",
        "64",
        "-o",
        "s",
    ];
    assert_exit(&fprev(dir.path(), &args, &[]), 0);
    let text = std::fs::read_to_string(dir.path().join("s/survey.json")).unwrap();
    let survey: Value = serde_json::from_str(&text).unwrap();
    let entries = survey["entries"].as_array().unwrap();
    let mut seen: Vec<String> = entries
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["spec"].as_str().unwrap(),
                e["dtype"].as_str().unwrap()
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            "duckdb:sum f32",
            "duckdb:sum f64",
            "polars:sum f32",
            "polars:sum f64"
        ]
    );
    for e in entries {
        let compared = e["threads"]["counts"] == serde_json::json!([1, 2]);
        assert_eq!(compared, e["spec"] == "duckdb:sum", "{e}");
    }
    for library in ["polars", "duckdb"] {
        let facts = &survey["machine"]["libraries"][library];
        assert!(facts["version"].is_string(), "{library}: {facts}");
    }
}
