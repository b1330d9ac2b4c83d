//! The command line against black boxes that end the process, against two
//! runs sharing an output, and against output paths and flags that cannot
//! be honoured: each is one clear line and its exit status, checked before
//! the work where it can be, and no result is lost or silently inherited.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tempfile::TempDir;

mod common;
use common::{assert_error, compile_c, fprev, run_in, stderr, stdout};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// C black boxes that end the process, hang, or add left to right.
const C_SOURCE: &str = r#"
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

float exits_f32(const float *x, size_t n) { (void)x; (void)n; exit(0); }
float underscore_exits_f32(const float *x, size_t n) { (void)x; (void)n; _exit(42); }
float hang_f32(const float *x, size_t n) { (void)x; (void)n; for (;;) pause(); }
float seq_f32(const float *x, size_t n) {
    float s = 0.0f;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}
"#;

/// Compiles [`C_SOURCE`] into `dir/libends.so`.
fn build_library(dir: &Path) -> PathBuf {
    compile_c(dir, "ends", C_SOURCE)
}

fn dylib(lib: &Path, symbol: &str) -> String {
    format!("dylib:{}:{symbol}", lib.display())
}

/// Reveals `spec` at n = 8 into `dir/t.json`, and returns that path.
fn saved_tree(dir: &Path, spec: &str) -> PathBuf {
    let tree = dir.join("t.json");
    let out = run_in(dir, &["reveal", spec, "-n", "8", "-o", "t.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    tree
}

// ---------------------------------------------------------------------------
// A black box that ends the process
// ---------------------------------------------------------------------------

#[test]
fn a_black_box_calling_exit_is_reported_and_never_passes() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path());
    for symbol in ["exits_f32", "underscore_exits_f32"] {
        let spec = dylib(&lib, symbol);
        let out = run_in(dir.path(), &["reveal", &spec, "-n", "8"]);
        let line = assert_error(&out, 3);
        assert!(line.contains(&spec), "{line}");
        assert!(line.contains("ended the process"), "{line}");
    }
    // A CI check against it fails too.
    let tree = saved_tree(dir.path(), &dylib(&lib, "seq_f32"));
    let out = fprev()
        .current_dir(dir.path())
        .arg("check")
        .arg(&tree)
        .arg(dylib(&lib, "exits_f32"))
        .output()
        .unwrap();
    let line = assert_error(&out, 3);
    assert!(line.contains("exits_f32"), "{line}");
}

#[cfg(feature = "python")]
#[test]
fn a_python_black_box_calling_os_exit_is_reported() {
    let dir = TempDir::new().unwrap();
    let file = dir.path().join("quits.py");
    std::fs::write(&file, "import os\n\ndef f(x):\n    os._exit(0)\n").unwrap();
    let spec = format!("python:{}:f", file.display());
    let out = run_in(dir.path(), &["reveal", &spec, "-n", "8"]);
    let line = assert_error(&out, 3);
    assert!(line.contains(&spec), "{line}");
    assert!(line.contains("ended the process"), "{line}");
}

#[cfg(feature = "python")]
#[test]
fn the_timeout_covers_opening_the_black_box() {
    let dir = TempDir::new().unwrap();
    let file = dir.path().join("slow.py");
    std::fs::write(
        &file,
        "import time\ntime.sleep(100)\n\ndef f(x):\n    return x.sum()\n",
    )
    .unwrap();
    let spec = format!("python:{}:f", file.display());
    let started = Instant::now();
    let out = run_in(dir.path(), &["reveal", &spec, "-n", "8", "--timeout", "1"]);
    assert!(started.elapsed() < Duration::from_secs(30));
    let line = assert_error(&out, 3);
    assert!(line.contains("--timeout 1 s"), "{line}");
}

// ---------------------------------------------------------------------------
// Surveys sharing a directory, and usage errors found before surveying
// ---------------------------------------------------------------------------

#[test]
fn a_survey_directory_in_use_is_refused() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path());
    let hang = dylib(&lib, "hang_f32");
    let survey = |spec: &str| {
        let mut c = fprev();
        c.current_dir(dir.path()).args([
            "survey",
            "--spec",
            spec,
            "--dtypes",
            "f32",
            "-n",
            "2..4",
            "--no-large",
            "-o",
            "here",
        ]);
        c
    };
    let mut first = survey(&hang)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first survey holds the directory once it has made it.
    let started = Instant::now();
    while !dir.path().join("here").exists() {
        assert!(started.elapsed() < Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let second = survey(&dylib(&lib, "seq_f32")).output().unwrap();
    // SAFETY: kill(2) on the child this test started.
    unsafe { libc::kill(first.id() as i32, libc::SIGTERM) };
    let _ = first.wait();
    let line = assert_error(&second, 2);
    assert!(line.contains("another fprev survey"), "{line}");
    assert!(!dir.path().join("here").join("survey.json").exists());
}

#[test]
fn survey_o_naming_a_file_says_so() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("taken"), "x").unwrap();
    let out = run_in(
        dir.path(),
        &["survey", "--spec", "native:pairwise", "-o", "taken"],
    );
    let line = assert_error(&out, 2);
    assert!(line.contains("taken is a file"), "{line}");
}

#[test]
fn survey_usage_errors_exit_2_before_surveying() {
    let dir = TempDir::new().unwrap();
    for args in [
        (
            &["--spec", "native:interleave(8"][..],
            "native:interleave(8",
        ),
        (&["--spec", "native:pairwise", "--dtypes", "x87"][..], "x87"),
    ] {
        let (args, named) = args;
        let out = run_in(
            dir.path(),
            &[&["survey", "-n", "1..4", "--no-large", "-o", "s"][..], args].concat(),
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("run the same command again"), "{err}");
        // One line of fprev's, or clap's usage message, naming the culprit.
        assert!(err.lines().next().unwrap_or("").contains(named), "{err}");
        assert!(
            !dir.path().join("s").join("survey.json").exists(),
            "{args:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// Output paths and formats checked before the work
// ---------------------------------------------------------------------------

#[test]
fn an_output_path_naming_a_directory_is_refused_before_the_work() {
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path());
    std::fs::create_dir(dir.path().join("d")).unwrap();
    // The black box would end the process: exit 2 shows it was never called.
    let exits = dylib(&lib, "exits_f32");
    for args in [
        &["reveal", &exits, "-n", "8", "--mismatch-out", "d"][..],
        &["reveal", &exits, "-n", "8", "-o", "d"][..],
        &["sweep", &exits, "-n", "2..4", "-o", "d"][..],
    ] {
        let line = assert_error(&run_in(dir.path(), args), 2);
        assert!(line.contains("is a directory"), "{args:?}: {line}");
    }
    let tree = saved_tree(dir.path(), "native:pairwise");
    let out = fprev()
        .current_dir(dir.path())
        .arg("check")
        .arg(&tree)
        .args([&exits, "--mismatch-out", "d"])
        .output()
        .unwrap();
    let line = assert_error(&out, 2);
    assert!(line.contains("is a directory"), "{line}");
}

#[test]
fn a_format_contradicting_the_extension_is_refused() {
    let dir = TempDir::new().unwrap();
    let tree = saved_tree(dir.path(), "native:pairwise");
    let t = tree.to_str().unwrap();
    for args in [
        &[
            "reveal",
            "native:pairwise",
            "-n",
            "8",
            "--format",
            "dot",
            "-o",
            "x.svg",
        ][..],
        &[
            "reveal",
            "native:pairwise",
            "-n",
            "8",
            "--format",
            "text",
            "-o",
            "x.JSON",
        ][..],
        &["render", t, "--format", "json", "-o", "x.dot"][..],
        &[
            "sweep",
            "native:pairwise",
            "-n",
            "2..4",
            "--format",
            "table",
            "-o",
            "x.json",
        ][..],
    ] {
        let line = assert_error(&run_in(dir.path(), args), 2);
        assert!(line.contains("--format"), "{args:?}: {line}");
        let written: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .filter(|n| n.to_string_lossy().starts_with("x."))
            .collect();
        assert!(written.is_empty(), "{args:?} wrote {written:?}");
    }
    // A format and an extension that agree, or an extension naming none.
    for args in [
        &[
            "reveal",
            "native:pairwise",
            "-n",
            "8",
            "--format",
            "dot",
            "-o",
            "y.gv",
        ][..],
        &[
            "reveal",
            "native:pairwise",
            "-n",
            "8",
            "--format",
            "json",
            "-o",
            "y.tree",
        ][..],
        &[
            "sweep",
            "native:pairwise",
            "-n",
            "2..4",
            "--format",
            "json",
            "-o",
            "y.json",
        ][..],
    ] {
        let out = run_in(dir.path(), args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_mismatch_that_cannot_be_saved_does_not_lose_the_result() {
    // /dev/full passes every check made before the work and fails the write.
    if !Path::new("/dev/full").exists() {
        return;
    }
    let dir = TempDir::new().unwrap();
    let tree = saved_tree(dir.path(), "native:pairwise");
    let t = tree.to_str().unwrap();
    let check = |format: &str| {
        run_in(
            dir.path(),
            &[
                "check",
                t,
                "native:sequential",
                "--mismatch-out",
                "/dev/full",
                "--format",
                format,
            ],
        )
    };
    let out = check("text");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot write /dev/full"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("could not be saved"),
        "{}",
        stdout(&out)
    );
    let out = check("json");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["ok"], false);
    assert!(json["mismatch"]["input_file"].is_null(), "{json}");
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<i32> {
    let out = std::process::Command::new("pgrep")
        .args(["-P", &pid.to_string()])
        .output()
        .expect("pgrep runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Whether process `pid` exists and has not ended (a zombie has).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

/// The process running `fprev`'s command (its child), once it has had
/// time to call the black box.
fn command_process(fprev: &std::process::Child) -> i32 {
    let started = Instant::now();
    let command = loop {
        if let Some(&child) = children_of(fprev.id()).first() {
            break child;
        }
        assert!(started.elapsed() < Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(300));
    command
}

#[test]
fn a_signal_to_fprev_ends_the_command_with_it_and_leaves_no_process() {
    use std::os::unix::process::ExitStatusExt;
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path());
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let mut fprev = fprev()
            .args(["reveal", &dylib(&lib, "hang_f32"), "-n", "8"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let command = command_process(&fprev);
        // SAFETY: kill(2) on the process this test started.
        unsafe { libc::kill(fprev.id() as i32, signal) };
        let status = fprev.wait().unwrap();
        assert_eq!(status.signal(), Some(signal), "{status:?}");
        // The command's process ended too.
        let started = Instant::now();
        while running(command) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the command's process {command} outlived fprev"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The command's process killed from outside (as the out-of-memory killer
/// does) is said in one line naming the black box and the signal, and
/// fprev ends with that signal: never a silent end.
#[test]
fn a_command_killed_from_outside_is_named_with_its_signal() {
    use std::os::unix::process::ExitStatusExt;
    let dir = TempDir::new().unwrap();
    let lib = build_library(dir.path());
    let spec = dylib(&lib, "hang_f32");
    let fprev = fprev()
        .args(["reveal", &spec, "-n", "8"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let command = command_process(&fprev);
    // SAFETY: kill(2) on the command's process, which this test started.
    unsafe { libc::kill(command, libc::SIGKILL) };
    let out = fprev.wait_with_output().unwrap();
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{:?}", out.status);
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!("fprev: error: {spec}: "))
            && err.contains("ended by signal 9")
            && err.lines().count() == 1,
        "{err}"
    );
}

/// `cache clear` removes the entries fprev wrote and nothing else: a tree
/// file and a settings file kept in the cache's directory stay, and are
/// said (`the_cache_of_formulas_is_proven_before_it_is_used` clears an
/// entry).
#[test]
fn clearing_the_cache_removes_only_its_entries() {
    let dir = TempDir::new().unwrap();
    let cache = dir.path().join("cache");
    let run = |args: &[&str]| {
        fprev()
            .current_dir(dir.path())
            .env("FPREV_CACHE_DIR", &cache)
            .args(args)
            .output()
            .unwrap()
    };
    std::fs::create_dir(&cache).unwrap();
    let tree = std::fs::read(saved_tree(dir.path(), "native:pairwise")).unwrap();
    std::fs::write(cache.join("tree.json"), &tree).unwrap();
    std::fs::write(cache.join("config.json"), "{\"threads\": 4}\n").unwrap();
    let out = run(&["cache", "clear"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "cleared 0 entries from {}; kept 2 files that are not fprev's cache entries: \
             config.json, tree.json\n",
            cache.display()
        )
    );
    assert_eq!(std::fs::read(cache.join("tree.json")).unwrap(), tree);
    assert!(cache.join("config.json").exists());
}
