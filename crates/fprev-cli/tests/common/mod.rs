//! What the command line's test files share: running `fprev`, reading what
//! it printed, asserting its exit status, compiling C black boxes.
// Each test file uses a part of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

/// The `fprev` binary of this build, as a command to run or spawn, with a
/// cache of formulas of its own (under the build's temporary directory),
/// so that no test reads what another kept.
pub fn fprev() -> Command {
    fprev_at(assert_cmd::cargo::cargo_bin!("fprev"))
}

/// The `fprev` binary at `bin` (another build of it), with a cache of
/// formulas of its own, as [`fprev`] has.
pub fn fprev_at(bin: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env("FPREV_CACHE_DIR", fresh_cache());
    cmd
}

/// A cache directory of formulas no other command has used (under the
/// build's temporary directory; made only if a formula is kept).
pub fn fresh_cache() -> PathBuf {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("fprev-cache")
        .join(format!("{}-{run}", std::process::id()))
}

/// Runs `fprev ARGS` in `dir` (where a mismatch file lands) and returns its
/// output, whatever the status.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    fprev()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("fprev runs")
}

/// Runs `fprev ARGS` in a fresh directory.
pub fn run(args: &[&str]) -> Output {
    let dir = TempDir::new().unwrap();
    run_in(dir.path(), args)
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("stderr is UTF-8")
}

/// Asserts exit `code` without a panic, and returns stdout.
pub fn assert_code(out: &Output, code: i32) -> String {
    assert!(!stderr(out).contains("panicked"), "{}", stderr(out));
    assert_eq!(
        out.status.code(),
        Some(code),
        "expected exit {code}\nstdout: {}\nstderr: {}",
        stdout(out),
        stderr(out)
    );
    stdout(out)
}

/// Asserts exit 0 without a panic, and returns stdout.
pub fn assert_ok(out: &Output) -> String {
    assert_code(out, 0)
}

/// Asserts exit `code` with exactly one line `fprev: error: ...` on
/// stderr, nothing on stdout and no panic; returns that line.
pub fn assert_error(out: &Output, code: i32) -> String {
    let err = stderr(out);
    assert!(!err.contains("panicked"), "panic: {err}");
    assert_eq!(
        out.status.code(),
        Some(code),
        "expected exit {code}\nstdout: {}\nstderr: {err}",
        stdout(out)
    );
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one error line, got: {err:?}");
    assert!(
        lines[0].starts_with("fprev: error: "),
        "error line lacks the `fprev: error: ` prefix: {err:?}"
    );
    assert!(
        lines[0].len() > "fprev: error: ".len() + 5,
        "empty error message: {err:?}"
    );
    assert!(out.stdout.is_empty(), "stdout on error: {}", stdout(out));
    lines[0].to_string()
}

/// Compiles the C `source` into `dir/libNAME.so` with `cc`.
pub fn compile_c(dir: &Path, name: &str, source: &str) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let lib = dir.join(format!("lib{name}.so"));
    let status = Command::new("cc")
        .args(["-O2", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&c)
        .arg("-lm")
        .status()
        .expect("a C compiler `cc` on the PATH (apt-get install gcc)");
    assert!(status.success(), "cc failed on {}", c.display());
    lib
}

/// The arguments of an MPI reveal long enough to interrupt: a large tree,
/// one query per call, on `ranks` ranks, stopped past `timeout` seconds,
/// writing `marker` (which names its processes) if it ever ends.
pub fn long_mpi_reveal<'a>(marker: &'a Path, ranks: &'a str, timeout: &'a str) -> [&'a str; 15] {
    [
        "reveal",
        "mpi:binary-tree",
        "-n",
        "16384",
        "--no-pack",
        "--batch",
        "1",
        "--pivot",
        "min",
        "--ranks",
        ranks,
        "--mpi-timeout",
        timeout,
        "-o",
        marker.to_str().unwrap(),
    ]
}

/// The processes whose command line holds `marker`.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let out = Command::new("pgrep").args(["-f", marker]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Waits (10 s at most) until no process holds `marker`.
pub fn wait_until_gone(marker: &str) {
    let started = std::time::Instant::now();
    while !processes_with(marker).is_empty() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "processes left behind: {:?}",
            processes_with(marker)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Runs `command` (an fprev) with `fprev reveal` arguments `args` and `-o
/// file`, asserts it succeeded, and returns the tree it wrote and what it
/// said on stderr (its notes).
pub fn reveal_tree(
    mut command: Command,
    args: &[&str],
    file: &Path,
) -> (fprev::SummationTree, String) {
    let o = command
        .args(args)
        .arg("-o")
        .arg(file)
        .output()
        .expect("fprev runs");
    let said = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{args:?}: {said}");
    let tree = fprev::document::TreeDocument::read(file)
        .unwrap()
        .into_tree();
    (tree, said)
}

/// Each MPI rank's sum of its block, as text: `n` summands in `ranks`
/// blocks as even as can be (the first `n mod ranks` one longer), each
/// summed left to right; written here, not taken from fprev.
pub fn block_sums(n: usize, ranks: usize) -> Vec<String> {
    let mut next = 0;
    (0..ranks)
        .map(|r| {
            let len = n / ranks + usize::from(r < n % ranks);
            let block = next..next + len;
            next += len;
            block
                .clone()
                .skip(1)
                .fold(block.start.to_string(), |s, i| format!("({s}+{i})"))
        })
        .collect()
}
