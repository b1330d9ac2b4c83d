//! Issue 51: every number is refused at once, by the library's bound, in
//! the flag the user wrote; an invariance study claims nothing its cases
//! do not carry (no replay, failed cases); emitted code's names are
//! refused before any work; error lines are one line of readable length,
//! the program's prefix said once.

use std::process::Output;
use std::time::{Duration, Instant};

#[cfg(feature = "python")]
use tempfile::TempDir;

mod common;
#[cfg(feature = "python")]
use common::run_in;
use common::{assert_code, assert_error, run, stderr};

/// Runs `args`, asserts exit 2 with one error line within `seconds`, and
/// returns the line.
fn refused_within(args: &[&str], seconds: u64) -> String {
    let dir = tempfile::TempDir::new().unwrap();
    let start = Instant::now();
    let mut child = common::fprev()
        .current_dir(dir.path())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Stopped, not waited for, past the limit: a slow refusal fails here.
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(seconds) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{args:?} was not refused within {seconds} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_error(&child.wait_with_output().unwrap(), 2)
}

#[test]
fn each_count_is_bounded_once_and_said_in_the_flag_given() {
    for (args, says) in [
        (
            vec!["reveal", "native:pairwise", "--threads", "65535"],
            "65535 is out of range; give --threads from 1 to 1024",
        ),
        (
            vec![
                "sweep",
                "native:pairwise",
                "-n",
                "1..4",
                "--runs",
                "10000000000000",
            ],
            "give --runs from 2 to 1000000, or 0",
        ),
        (
            vec!["reveal", "native:pairwise", "-n", "99999999999999999999999"],
            "give -n from 1 to",
        ),
        (
            vec![
                "invariance",
                "numpy:gemm",
                "-n",
                "8",
                "--shape",
                "2,2,8",
                "--columns",
                "99999999999999999999",
            ],
            "give --columns from 0 to",
        ),
        (
            vec![
                "invariance",
                "reduce:binary-tree",
                "-n",
                "8",
                "--threads",
                "1,2000",
            ],
            "2000 is out of range; give --threads from 1 to 1024",
        ),
        (
            vec!["emit", "numpy:sum", "--check", "--trials", "1001"],
            "give --trials from 1 to 1000",
        ),
    ] {
        let line = refused_within(&args, 10);
        assert!(line.contains(says), "{args:?}: {line}");
    }
}

#[test]
fn a_batch_count_or_thread_list_past_a_study_is_refused_at_once_in_its_own_words() {
    for (args, says) in [
        (
            vec![
                "invariance",
                "numpy:gemm",
                "-n",
                "16",
                "--shape",
                "4,4,16",
                "--batch",
                "1..1000000",
            ],
            "batch: 1000000 values",
        ),
        (
            vec!["sweep", "mpi:allreduce", "-n", "4", "--count", "1..1000000"],
            "--count: 1000000 message sizes",
        ),
        (
            vec![
                "invariance",
                "numpy:gemm",
                "-n",
                "16",
                "--shape",
                "4,4,16",
                "--batch",
                "1..100000000",
            ],
            "holds more than",
        ),
    ] {
        let line = refused_within(&args, 5);
        assert!(line.contains(says), "{args:?}: {line}");
        assert!(!line.contains("summands"), "{args:?}: not summands: {line}");
    }
    let threads: Vec<String> = (1..=5000).map(|t| t.to_string()).collect();
    let line = refused_within(
        &[
            "invariance",
            "reduce:binary-tree",
            "-n",
            "8",
            "--threads",
            &threads.join(","),
        ],
        5,
    );
    assert!(line.contains("give --threads from 1 to 1024"), "{line}");
}

#[test]
fn a_study_names_the_flag_it_was_given_or_none() {
    let out = run(&["invariance", "numpy:sum", "-n", "100", "--columns", "1"]);
    let line = assert_error(&out, 2);
    assert!(!line.contains("--column "), "{line}");
    assert!(line.contains("only a GEMM has output columns"), "{line}");
}

#[test]
fn sizes_that_are_not_summands_revealed_are_not_called_summands() {
    // Batch sizes and check sizes past what this machine holds.
    for args in [
        vec![
            "invariance",
            "numpy:gemm",
            "-n",
            "16",
            "--shape",
            "4,4,16",
            "--batch",
            "1,1099511627777",
        ],
        vec![
            "emit",
            "numpy:sum",
            "--check",
            "--check-sizes",
            "1..4,1000000000000",
        ],
    ] {
        let line = refused_within(&args, 5);
        assert!(!line.contains("summands"), "{args:?}: {line}");
    }
}

#[test]
fn a_study_that_replayed_nothing_claims_no_replay() {
    let out = run(&[
        "invariance",
        "reduce:binary-tree",
        "-n",
        "64",
        "--threads",
        "1,2",
        "--confirm",
        "0",
    ]);
    let text = assert_code(&out, 0);
    assert!(!text.contains("order, confirmed by replay"), "{text}");
    assert!(!text.contains("plain additions replay it"), "{text}");
    assert!(text.contains("not confirmed by replay"), "{text}");
    // With a replay, the claim is made.
    let out = run(&[
        "invariance",
        "reduce:binary-tree",
        "-n",
        "64",
        "--threads",
        "1,2",
    ]);
    let text = assert_code(&out, 0);
    assert!(text.contains("confirmed by replay"), "{text}");
    assert!(!text.contains("not confirmed"), "{text}");
}

/// A Python file of black boxes in a fresh directory.
#[cfg(feature = "python")]
fn python_boxes(dir: &TempDir) -> String {
    let path = dir.path().join("boxes.py");
    std::fs::write(
        &path,
        "import numpy as np\n\
         def raises(X):\n    return 1 / 0\n\
         def nan(X):\n    return np.full(X.shape[0], np.nan)\n\
         def shouts(x):\n    raise ValueError('fprev: error: inner ' + 'x' * 20000)\n",
    )
    .unwrap();
    path.display().to_string()
}

#[cfg(feature = "python")]
#[test]
fn a_study_whose_cases_fail_claims_nothing_from_them() {
    let dir = TempDir::new().unwrap();
    let path = python_boxes(&dir);
    let batch = [
        "-n",
        "16",
        "--shape",
        "1,1,16",
        "--batch",
        "1,2",
        "--rows",
        "first,last",
    ];
    // What the black box raised ends the study, named.
    let spec = format!("python:{path}:raises");
    let args: Vec<&str> = ["invariance", spec.as_str()]
        .iter()
        .chain(&batch)
        .copied()
        .collect();
    let line = assert_error(&run_in(dir.path(), &args), 3);
    assert!(line.contains("ZeroDivisionError"), "{line}");
    // Cases that fail alike are one failure, and no knob is blamed.
    let spec = format!("python:{path}:nan");
    let args: Vec<&str> = ["invariance", spec.as_str()]
        .iter()
        .chain(&batch)
        .copied()
        .collect();
    let out = run_in(dir.path(), &args);
    let text = assert_code(&out, 3);
    assert!(text.contains("(2 cases)"), "alike failures are one: {text}");
    assert!(
        text.contains("no finding: every one of the 4 cases failed"),
        "{text}"
    );
    for claim in [
        "depends on",
        "alone changes",
        "batch-invariant",
        "invariant:",
        "part",
    ] {
        assert!(!text.contains(claim), "claims {claim:?}: {text}");
    }
}

#[cfg(feature = "python")]
#[test]
fn an_error_line_is_short_and_says_the_prefix_once() {
    let dir = TempDir::new().unwrap();
    let spec = format!("python:{}:shouts", python_boxes(&dir));
    let out = run_in(dir.path(), &["reveal", &spec, "-n", "8"]);
    let line = assert_error(&out, 3);
    assert!(line.len() < 1200, "{} characters: {line}", line.len());
    assert_eq!(line.matches("fprev: error: ").count(), 1, "{line}");
    assert!(line.contains("ValueError: inner xxx"), "{line}");
}

#[test]
fn emitted_names_that_break_the_code_are_refused_before_any_work() {
    for (lang, name) in [
        ("c", "int"),
        ("c", "size_t"),
        ("c", "a0"),
        ("c", "fprev_fin"),
        ("cuda", "threadIdx"),
        ("rust", "fn"),
        ("rust", "fin"),
        ("rust", "Some"),
        ("python", "import"),
        ("python", "np"),
        ("python", "min"),
        ("python", "_FprevInputs"),
    ] {
        let start = Instant::now();
        let out = run(&[
            "emit",
            "native:pairwise",
            "--formula",
            "pairwise",
            "--lang",
            lang,
            "--name",
            name,
        ]);
        let line = assert_error(&out, 2);
        assert!(line.contains(&format!("'{name}'")), "{lang} {name}: {line}");
        assert!(
            start.elapsed() < Duration::from_secs(5) && !stderr(&out).contains("note"),
            "{lang} {name}: refused after work, in {:?}",
            start.elapsed()
        );
    }
    // A name that is only another language's keyword is fine.
    let out: Output = run(&[
        "emit",
        "native:pairwise",
        "--formula",
        "pairwise",
        "--lang",
        "c",
        "--name",
        "fn",
    ]);
    assert!(assert_code(&out, 0).contains("fn(const float *x, size_t n)"));
}
