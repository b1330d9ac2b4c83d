//! `fprev invariance` against real libraries: the knobs that change an
//! order are named (MKL's thread count, OpenBLAS's core type), one that
//! does not is invariant (NumPy's sum under OpenBLAS's thread count), and
//! a box that varies is never invariant.

mod common;

use tempfile::TempDir;

use common::{assert_code, assert_error, run_in};

#[test]
fn mkl_threads_change_a_long_dot_product() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "invariance",
            "blas:dot@mkl",
            "-n",
            "65536",
            "--threads",
            "1,2",
        ],
    );
    let text = assert_code(&out, 1);
    assert!(text.contains("  [A] threads=1\n"), "{text}");
    assert!(text.contains("  [B] threads=2\n"), "{text}");
    assert!(
        text.contains("not invariant: changing threads alone changes the order or its arithmetic"),
        "{text}"
    );
    assert!(text.contains("pin threads:"), "{text}");
}

#[test]
fn openblas_core_types_change_its_dot_product_and_threads_do_not() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "invariance",
            "blas:dot@openblas",
            "-n",
            "4096",
            "--threads",
            "1,2",
            "--env",
            // Kernels every x86-64 CPU here runs (SkylakeX's need AVX-512).
            "OPENBLAS_CORETYPE=Haswell,Prescott",
        ],
    );
    let text = assert_code(&out, 1);
    // Each core type in two fresh processes, whose repeats agree.
    assert!(text.contains(": 8 cases ("), "{text}");
    assert!(text.contains("2 distinct outcomes:"), "{text}");
    assert!(
        text.contains("changing OPENBLAS_CORETYPE alone changes the order or its arithmetic"),
        "{text}"
    );
    assert!(!text.contains("varies between repeats"), "{text}");
    assert!(text.contains("pin OPENBLAS_CORETYPE:"), "{text}");
    // Each core type's group is the tree a plain reveal under it gives.
    for (core, letter) in [("Haswell", 'A'), ("Prescott", 'B')] {
        for process in ["1", "2"] {
            for threads in ["1", "2"] {
                let line = format!(
                    "  [{letter}] OPENBLAS_CORETYPE={core} process={process} threads={threads}\n"
                );
                assert!(text.contains(&line), "{line} in {text}");
            }
        }
    }
}

#[cfg(feature = "python")]
#[test]
fn numpy_sum_is_invariant_under_openblas_threads() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "invariance",
            "numpy:sum",
            "-n",
            "1000",
            "--env",
            "OPENBLAS_NUM_THREADS=1,2",
        ],
    );
    let text = assert_code(&out, 0);
    assert!(
        text.contains(
            "invariant: every case gave the same order and arithmetic, confirmed by replay"
        ),
        "{text}"
    );
}

/// Chunks of 8, joined in a random order: another order every call, so
/// never invariant, whatever the setting.
#[cfg(feature = "python")]
#[test]
fn a_black_box_that_varies_is_never_invariant() {
    let dir = TempDir::new().unwrap();
    std::fs::write(
        dir.path().join("joins.py"),
        "import random\nimport numpy as np\n\ndef f(x):\n    \
         c = [np.float32(np.sum(x[k:k + 8])) for k in range(0, len(x), 8)]\n    \
         random.shuffle(c)\n    t = np.float32(0)\n    for v in c:\n        \
         t = np.float32(t + v)\n    return t\n",
    )
    .unwrap();
    let spec = format!("python:{}:f", dir.path().join("joins.py").display());
    let out = run_in(
        dir.path(),
        &["invariance", &spec, "-n", "64", "--env", "FPREV_UNUSED=1,2"],
    );
    let text = assert_code(&out, 1);
    assert!(text.contains("varies from call to call"), "{text}");
    // A variable the black box never reads is never blamed for it.
    assert!(
        text.contains(
            "not invariant: the order varies between repeats of one setting (between calls at \
             FPREV_UNUSED=1, FPREV_UNUSED=2): no knob can be blamed for it"
        ),
        "{text}"
    );
    assert!(!text.contains("changing FPREV_UNUSED"), "{text}");
    assert!(!text.contains("pin"), "{text}");
}

/// Sums left to right from a place drawn as the process starts (as a hash
/// seed or a thread pool's start-up picks an order): one order in each
/// process, another in the next.
#[cfg(feature = "python")]
const DRAWN_PER_PROCESS: &str = "import os\nimport numpy as np\n\n\
    START = int.from_bytes(os.urandom(2), 'little') % 64\n\n\
    def f(x):\n    t = np.float32(0)\n    for k in range(len(x)):\n        \
    t = np.float32(t + x[(START + k) % len(x)])\n    return t\n";

/// Each setting runs in two fresh processes: an order drawn per process
/// differs between repeats of one setting, and the variable the black box
/// never reads is not named (it was, as changing the order, with "pin
/// DUMMY", when each setting ran once).
#[cfg(feature = "python")]
#[test]
fn an_order_drawn_per_process_blames_no_knob() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("drawn.py"), DRAWN_PER_PROCESS).unwrap();
    let spec = format!("python:{}:f", dir.path().join("drawn.py").display());
    let out = run_in(
        dir.path(),
        &["invariance", &spec, "-n", "64", "--env", "DUMMY=1,2"],
    );
    let text = assert_code(&out, 1);
    assert!(text.contains(": 4 cases ("), "{text}");
    assert!(text.contains("  [A] DUMMY=1 process=1\n"), "{text}");
    assert!(
        text.contains(
            "not invariant: the order varies between repeats of one setting (between fresh \
             processes at "
        ),
        "{text}"
    );
    assert!(!text.contains("changing DUMMY"), "{text}");
    assert!(!text.contains("pin DUMMY"), "{text}");
}

/// `reveal --processes` compares the answers of fresh processes: an order
/// drawn per process is exit 6, said so, where a reveal in one process
/// exits 0 with that process's tree; a deterministic black box passes,
/// and --runs says it looked within one process.
#[cfg(feature = "python")]
#[test]
fn reveal_processes_tells_an_order_drawn_per_process() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("drawn.py"), DRAWN_PER_PROCESS).unwrap();
    let spec = format!("python:{}:f", dir.path().join("drawn.py").display());
    let out = run_in(
        dir.path(),
        &["reveal", &spec, "-n", "64", "--processes", "3"],
    );
    let text = assert_code(&out, 6);
    assert!(
        text.contains("its answer to the same input changes from process to process"),
        "{text}"
    );
    assert!(
        text.contains("gave different bits in 3 processes"),
        "{text}"
    );
    let out = run_in(
        dir.path(),
        &[
            "reveal",
            "numpy:sum",
            "-n",
            "64",
            "--processes",
            "2",
            "--runs",
            "4",
        ],
    );
    assert_code(&out, 0);
    let err = common::stderr(&out);
    assert!(
        err.contains("the same bits in each of 2 processes on each of 8 random inputs"),
        "{err}"
    );
    assert!(
        err.contains("deterministic within this one process"),
        "{err}"
    );
    // An MPI job's ranks are not fresh processes of one's own.
    let out = run_in(
        dir.path(),
        &[
            "reveal",
            "native:pairwise",
            "--processes",
            "2",
            "--ranks",
            "2",
        ],
    );
    assert_error(&out, 2);
}

/// NumPy buffers an unaligned array in chunks of 8,192 elements: a float32
/// view one byte past an aligned address is summed in another order at n
/// = 20,000, which `--offset` names as the knob; reveal says which
/// alignment its tree holds for, and a black box handed no NumPy array
/// refuses an offset.
#[cfg(feature = "python")]
#[test]
fn numpy_sums_an_unaligned_view_in_another_order() {
    let dir = TempDir::new().unwrap();
    let out = run_in(
        dir.path(),
        &["invariance", "numpy:sum", "-n", "20000", "--offset", "0,1B"],
    );
    let text = assert_code(&out, 1);
    assert!(text.contains("2 distinct outcomes:"), "{text}");
    assert!(text.contains("  [A] offset=0\n  [B] offset=1B\n"), "{text}");
    assert!(
        text.contains("not invariant: changing offset alone changes the order"),
        "{text}"
    );
    let out = run_in(dir.path(), &["reveal", "numpy:sum", "-n", "64"]);
    assert_code(&out, 0);
    let err = common::stderr(&out);
    assert!(
        err.contains("numpy:sum is handed its input in an array where NumPy's allocation puts it"),
        "{err}"
    );
    let out = run_in(
        dir.path(),
        &["reveal", "numpy:sum", "-n", "64", "--offset", "1B"],
    );
    assert_code(&out, 0);
    let err = common::stderr(&out);
    assert!(
        err.contains("starting 1 byte past a 64-byte boundary"),
        "{err}"
    );
    for args in [
        &["reveal", "native:pairwise", "--offset", "1B"][..],
        &["invariance", "native:pairwise", "--offset", "0,1"][..],
    ] {
        assert_error(&run_in(dir.path(), args), 2);
    }
}

/// A tree found at an offset records it: the tree file holds `"offset"`,
/// its text says the alignment, and `check` of the file checks at that
/// offset (one given instead, NumPy's own alignment, refutes the tree at
/// n = 20,000). Before, the file held no offset and its check mismatched
/// (exit 1). `sweep`, `explain`, `emit` and `check` take `--offset`, with
/// reveal's bound.
#[cfg(feature = "python")]
#[test]
fn a_tree_found_at_an_offset_is_recorded_and_checked_there() {
    let dir = TempDir::new().unwrap();
    let reveal = ["reveal", "numpy:sum", "-n", "20000", "--offset", "1B"];
    let out = run_in(dir.path(), &[&reveal[..], &["-o", "u.json"]].concat());
    assert_code(&out, 0);
    let doc = fprev::document::TreeDocument::read(&dir.path().join("u.json")).unwrap();
    assert_eq!(doc.offset, Some(fprev::probe::Offset::Bytes(1)));
    let text = assert_code(&run_in(dir.path(), &reveal), 0);
    assert!(
        text.contains("# alignment: found on its input in an array starting 1 byte past"),
        "{text}"
    );
    let check = ["check", "u.json", "numpy:sum", "--trials", "20"];
    let out = run_in(dir.path(), &check);
    assert_code(&out, 0);
    assert!(common::stderr(&out).contains("as the tree file was found"));
    let out = run_in(dir.path(), &[&check[..], &["--offset", "0"]].concat());
    assert_code(&out, 1);
    let sweep = [
        "sweep",
        "numpy:sum",
        "-n",
        "100",
        "--offset",
        "1",
        "--format",
        "json",
    ];
    let json = assert_code(&run_in(dir.path(), &sweep), 0);
    assert!(json.contains("\"offset\": \"1\""), "{json}");
    let explain = [
        "explain",
        "numpy:sum",
        "-n",
        "1..24",
        "--no-verify",
        "--no-cache",
    ];
    let out = run_in(dir.path(), &[&explain[..], &["--offset", "3B"]].concat());
    assert_code(&out, 0);
    assert!(common::stderr(&out).contains("starting 3 bytes past a 64-byte boundary"));
    for args in [&explain[..], &check, &sweep[..4], &["emit", "numpy:sum"]] {
        let out = run_in(dir.path(), &[args, &["--offset", "4097B"]].concat());
        assert_code(&out, 2);
        assert!(common::stderr(&out).contains("from 0 to 4096"));
    }
}

#[test]
fn bad_knobs_are_refused_before_any_reveal() {
    let dir = TempDir::new().unwrap();
    for args in [
        vec!["invariance", "native:pairwise"],
        vec!["invariance", "native:pairwise", "--env", "NOVALUES"],
        vec!["invariance", "native:pairwise", "--env", "A=1,1"],
        vec!["invariance", "native:pairwise", "--env", "BAD NAME=1,2"],
        vec![
            "invariance",
            "native:pairwise",
            "--env",
            "A=1,2,3,4,5,6,7,8",
            "--env",
            "B=1,2,3,4,5,6,7,8,9",
        ],
        vec!["invariance", "native:pairwise", "--env", "threads=1,2"],
        vec![
            "invariance",
            "blas:gemm@openblas",
            "--shape",
            "4,4,64",
            "--batch",
            "1..5000",
        ],
        vec![
            "invariance",
            "blas:gemm@openblas",
            "--shape",
            "4,4,64",
            "--rows",
            "9",
        ],
        vec![
            "invariance",
            "blas:gemm@openblas",
            "--shape",
            "4,4,64",
            "--columns",
            "4",
        ],
    ] {
        let out = run_in(dir.path(), &args);
        assert_error(&out, 2);
    }
    // Refused by the argument parser: a row with its usage, a number out
    // of the library's bound in one line.
    for (flag, value) in [("--batch", "0,1"), ("--columns", "99999999999999999999")] {
        let args = [
            "invariance",
            "blas:gemm@openblas",
            "--shape",
            "4,4,64",
            flag,
            value,
        ];
        assert_error(&run_in(dir.path(), &args), 2);
    }
    for (flag, value) in [("--rows", "top"), ("--columns", "-1")] {
        let args = [
            "invariance",
            "blas:gemm@openblas",
            "--shape",
            "4,4,64",
            flag,
            value,
        ];
        let out = run_in(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2));
        assert!(common::stderr(&out).starts_with("error: "));
    }
}

/// BLIS's SGEMM computes the last column of a product of 65 columns (an
/// edge tile) with products rounded to f32, the others with exact
/// (fused) products: `--column` reveals each, and the study names the
/// column as what changes the result. The trees are checked by revealing
/// each column alone and comparing with diff.
#[test]
fn blis_computes_an_edge_column_otherwise() {
    let dir = TempDir::new().unwrap();
    let shape = ["-n", "1000", "--shape", "16,65,1000"];
    let out = run_in(
        dir.path(),
        &[
            &["invariance", "blas:gemm@blis"][..],
            &shape,
            &["--columns", "0,63,64"],
        ]
        .concat(),
    );
    let text = assert_code(&out, 1);
    for row in ["first", "middle", "last"] {
        for (column, group) in [("0", 'A'), ("63", 'A'), ("64", 'B')] {
            let line = format!("  [{group}] row={row} column={column}\n");
            assert!(text.contains(&line), "{line} in {text}");
        }
    }
    assert!(text.contains("its column"), "{text}");
    for j in ["0", "64"] {
        let file = format!("c{j}.json");
        let args = [
            &["reveal", "blas:gemm@blis"][..],
            &shape,
            &["--column", j, "-o", &file],
        ]
        .concat();
        assert_code(&run_in(dir.path(), &args), 0);
    }
    let out = run_in(dir.path(), &["diff", "c0.json", "c64.json"]);
    assert!(assert_code(&out, 1).starts_with("same order, different arithmetic"));
    let out = run_in(
        dir.path(),
        &[
            "reveal",
            "blas:gemm@blis",
            "-n",
            "100",
            "--shape",
            "4,8,100",
            "--column",
            "8",
        ],
    );
    assert!(assert_error(&out, 2).contains("give a column below 8"));
    let out = run_in(dir.path(), &["reveal", "native:pairwise", "--column", "1"]);
    assert!(assert_error(&out, 2).contains("only a GEMM has output columns"));
}

/// The regimes of one output along the batch: the letter of each M, read
/// from the line of the report that names `output`.
#[cfg(feature = "python")]
fn regimes_of(text: &str, output: &str) -> Vec<(usize, char)> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(output))
        .unwrap_or_else(|| panic!("no regimes of {output} in {text}"));
    let (_, runs) = line.split_once(": ").unwrap();
    let mut out = Vec::new();
    for run in runs.split(" · ") {
        let (letter, ms) = run.split_once(" at M = ").unwrap();
        for part in ms.split(',') {
            let (a, b) = part.split_once("..").unwrap_or((part, part));
            let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
            out.extend((a..=b).map(|m| (m, letter.chars().next().unwrap())));
        }
    }
    out
}

/// NumPy's float32 GEMM (K = 1,000, N = 64): row 0's order depends on the
/// batch size M. The regimes the study reports for each column are
/// checked against NumPy itself: two batch sizes of one regime give row 0
/// the same bits there on random operands, and two of different regimes
/// differ on some of 20 (regimes that part only in a few of the last
/// additions give the same bits on about a third of them).
#[cfg(feature = "python")]
#[test]
fn numpy_gemm_batch_regimes_are_those_of_its_bits() {
    let dir = TempDir::new().unwrap();
    let batch = "1,2,3,8,15,16,17,32,64";
    let args = [
        "invariance",
        "numpy:gemm",
        "-n",
        "1000",
        "--shape",
        "64,64,1000",
        "--batch",
        batch,
        "--rows",
        "first",
        "--columns",
        "0,63",
    ];
    let text = assert_code(&run_in(dir.path(), &args), 1);
    assert!(text.contains("not batch-invariant"), "{text}");
    assert!(text.contains("where neighbouring outcomes part:"), "{text}");
    // Each column's regimes: one line where both columns share them (as on
    // a CPU with AVX-512), a line each where they part.
    let columns: Vec<(usize, Vec<(usize, char)>)> = match text.contains("row=first column=0,63:") {
        true => {
            let both = regimes_of(&text, "row=first column=0,63:");
            vec![(0, both.clone()), (1, both)]
        }
        false => vec![
            (0, regimes_of(&text, "row=first column=0:")),
            (1, regimes_of(&text, "row=first column=63:")),
        ],
    };
    std::fs::write(
        dir.path().join("bits.py"),
        format!(
            "import numpy as np\nrng = np.random.default_rng(7)\n\
             draws = [(rng.standard_normal((64, 1000)).astype(np.float32), \
             rng.standard_normal((1000, 64)).astype(np.float32)) for _ in range(20)]\n\
             for m in [{batch}]:\n    \
             print(m, *(b''.join((x[:m] @ w)[0, [j]].tobytes() for x, w in draws).hex() \
             for j in (0, 63)))\n"
        ),
    )
    .unwrap();
    // The python3 whose NumPy the command line's embedded interpreter uses.
    let out = std::process::Command::new("python3")
        .arg(dir.path().join("bits.py"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Per batch size: row 0's bits in column 0, then in column 63.
    let bits: Vec<Vec<String>> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split(' ').skip(1).map(str::to_string).collect())
        .collect();
    for (column, regimes) in &columns {
        assert_eq!(regimes.len(), 9, "{text}");
        for (a, (ma, ga)) in regimes.iter().enumerate() {
            for (b, (mb, gb)) in regimes.iter().enumerate() {
                assert_eq!(
                    ga == gb,
                    bits[a][*column] == bits[b][*column],
                    "column {}: M = {ma} ({ga}) and M = {mb} ({gb}) against NumPy's bits; {text}",
                    [0, 63][*column]
                );
            }
        }
    }
    let no_shape = ["invariance", "numpy:gemm", "-n", "1000", "--batch", "1,2"];
    assert!(assert_error(&run_in(dir.path(), &no_shape), 2).contains("give --shape"));
}

/// A Python function summing each row of its batch left to right is batch
/// invariant; one that sums right to left from five rows on has two
/// regimes, each with its formula.
#[cfg(feature = "python")]
#[test]
fn python_batches_are_invariant_when_each_row_is_summed_alike() {
    let dir = TempDir::new().unwrap();
    std::fs::write(
        dir.path().join("rows.py"),
        "import numpy as np\n\ndef rows(X, backwards=False):\n    \
         out = np.zeros(X.shape[0], dtype=X.dtype)\n    \
         for i, row in enumerate(X):\n        \
         t = X.dtype.type(0)\n        \
         for v in (row[::-1] if backwards else row):\n            \
         t = X.dtype.type(t + v)\n        \
         out[i] = t\n    return out\n\n\
         def alike(X):\n    return rows(X)\n\n\
         def by_batch(X):\n    return rows(X, backwards=X.shape[0] >= 5)\n",
    )
    .unwrap();
    let spec = |f: &str| format!("python:{}:{f}", dir.path().join("rows.py").display());
    let args = |s: &str| {
        [
            "invariance",
            s,
            "-n",
            "48",
            "--shape",
            "8,1,48",
            "--batch",
            "1..8",
        ]
        .map(str::to_string)
        .to_vec()
    };
    let alike = spec("alike");
    let argv = args(&alike);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let text = assert_code(&run_in(dir.path(), &argv), 0);
    assert!(text.contains("[A] native:sequential;"), "{text}");
    assert!(text.contains(": A at M = 1..8"), "{text}");
    let by_batch = spec("by_batch");
    let argv = args(&by_batch);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let text = assert_code(&run_in(dir.path(), &argv), 1);
    assert!(text.contains("[A] native:sequential;"), "{text}");
    assert!(text.contains("[B] native:reverse;"), "{text}");
    assert!(
        text.contains("row=first; row=middle; row=last: A at M = 1..4 · B at M = 5..8"),
        "{text}"
    );
    assert!(
        text.contains("not batch-invariant: 3 of 3 outputs"),
        "{text}"
    );
}

/// OpenBLAS's SGEMM (K = 1,000) blocks K otherwise on 2 threads than on
/// 1 once M reaches 16: a batch study over both thread counts says where
/// the two outcomes part along the thread count, not only along M; the
/// difference is checked by revealing each alone and comparing with diff.
#[test]
fn a_batch_study_says_where_outcomes_part_along_the_thread_count() {
    let dir = TempDir::new().unwrap();
    let shape = ["-n", "1000", "--shape", "16,64,1000"];
    let args = [
        &["invariance", "blas:gemm@openblas"][..],
        &shape,
        &[
            "--batch",
            "8,16",
            "--rows",
            "first",
            "--columns",
            "0",
            "--threads",
            "1,2",
        ],
    ]
    .concat();
    let text = assert_code(&run_in(dir.path(), &args), 1);
    assert!(
        text.contains("(threads: 1 → 2, at batch=16 row=first column=0): the trees part:"),
        "{text}"
    );
    for t in ["1", "2"] {
        let file = format!("t{t}.json");
        let reveal = [
            &["reveal", "blas:gemm@openblas"][..],
            &shape,
            &["--threads", t, "-o", &file],
        ]
        .concat();
        assert_code(&run_in(dir.path(), &reveal), 0);
    }
    assert_code(&run_in(dir.path(), &["diff", "t1.json", "t2.json"]), 1);
}

/// A setting's process that refuses its input (a missing file) ends the
/// study with bad input's status, as the same study without `--env` does.
#[test]
fn bad_input_under_env_is_bad_input() {
    let dir = TempDir::new().unwrap();
    let spec = "python:missing.py:f";
    for knob in [["--threads", "1,2"], ["--env", "FPREV_TEST_KNOB=1,2"]] {
        let out = run_in(
            dir.path(),
            &["invariance", spec, "-n", "8", knob[0], knob[1]],
        );
        assert_eq!(
            out.status.code(),
            Some(2),
            "{knob:?}: {}",
            common::stderr(&out)
        );
        assert!(common::stderr(&out).contains("no such file"), "{knob:?}");
        assert!(out.stdout.is_empty(), "{knob:?}");
    }
}
