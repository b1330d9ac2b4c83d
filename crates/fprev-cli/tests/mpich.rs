//! MPICH, the second MPI implementation: an fprev built against it
//! (`MPICC=mpicc.mpich cargo build --features mpi`, which scripts/test.sh
//! does and names in `FPREV_MPICH_BIN`) starts real Hydra jobs
//! (`mpiexec.mpich`). Each of MPICH 4.0's allreduce algorithms is checked
//! against a tree written here from the algorithm's description, at sizes
//! no output script reveals. Without `FPREV_MPICH_BIN` each test says why
//! it skips.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use fprev::SummationTree;

/// The MPICH build of fprev, or `None` (said on stderr) without one.
fn mpich_fprev(test: &str) -> Option<PathBuf> {
    match std::env::var_os("FPREV_MPICH_BIN") {
        Some(bin) => Some(PathBuf::from(bin)),
        None => {
            eprintln!(
                "SKIPPED {test}: FPREV_MPICH_BIN names no MPICH build of fprev \
                 (scripts/test.sh builds one with MPICC=mpicc.mpich)"
            );
            None
        }
    }
}

fn run(bin: &Path, args: &[&str]) -> Output {
    common::fprev_at(bin).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Reveals element `row` of a 64-element vector of `spec` at `n` summands
/// on `ranks` ranks (f64) and returns its tree.
fn reveal(bin: &Path, spec: &str, n: usize, ranks: usize, row: usize) -> SummationTree {
    let dir = tempfile::tempdir().unwrap();
    let command = common::fprev_at(bin);
    let (n, ranks, shape, row) = (
        n.to_string(),
        ranks.to_string(),
        format!("64,1,{n}"),
        row.to_string(),
    );
    let args = [
        "reveal", spec, "-n", &n, "--ranks", &ranks, "--dtype", "f64", "--shape", &shape, "--row",
        &row, "--mpi", "mpich",
    ];
    common::reveal_tree(command, &args, &dir.path().join("t.json")).0
}

fn add(a: &str, b: &str) -> String {
    format!("({a}+{b})")
}

/// MPICH's recursive doubling (`MPIR_Allreduce_intra_recursive_doubling`):
/// with `rem = P - 2^k` ranks too many, each of the first `rem` even ranks
/// sends its value to the odd rank after it, which adds it; then the
/// `2^k` ranks left exchange with the rank at distance 1, 2, 4, …, adding
/// what they receive.
fn recursive_doubling(sums: &[String]) -> String {
    let pof2 = 1 << sums.len().ilog2();
    let rem = sums.len() - pof2;
    let mut values: Vec<String> = (0..rem)
        .map(|i| add(&sums[2 * i], &sums[2 * i + 1]))
        .chain(sums[2 * rem..].iter().cloned())
        .collect();
    while values.len() > 1 {
        values = values.chunks(2).map(|c| add(&c[0], &c[1])).collect();
    }
    values.pop().unwrap()
}

/// A binomial reduce to rank 0 (`MPIR_Reduce_intra_binomial`): at mask 1,
/// 2, 4, …, each rank `r` with that bit its lowest set one sends its
/// partial sum to `r - mask`, which adds it.
fn binomial(sums: &[String]) -> String {
    let mut partial = sums.to_vec();
    let mut mask = 1;
    while mask < sums.len() {
        for r in (0..sums.len()).step_by(2 * mask) {
            if r + mask < sums.len() {
                partial[r] = add(&partial[r], &partial[r + mask]);
            }
        }
        mask *= 2;
    }
    partial.swap_remove(0)
}

fn tree(text: &str) -> SummationTree {
    text.parse().unwrap()
}

/// MPICH 4.0's allreduce algorithms against their descriptions:
/// recursive doubling; Rabenseifner's reduce-scatter (recursive halving of
/// the vector, partners at distance 1, 2, 4, …) then allgather, which
/// gives every element the recursive-doubling tree; `smp`, on one node a
/// binomial reduce to rank 0 and a broadcast. Element 0 and the last of the
/// vector, and the names both libraries know mapped to MPICH's own.
#[test]
fn each_mpich_algorithm_is_its_description() {
    let Some(bin) = mpich_fprev("each_mpich_algorithm_is_its_description") else {
        return;
    };
    // On 5 ranks (of 2 to 8 the only count) a binomial reduce is not
    // recursive doubling's fold and halves.
    let five = common::block_sums(7, 5);
    assert_ne!(recursive_doubling(&five), binomial(&five));
    for (ranks, n) in [(3, 10), (5, 7), (6, 13)] {
        let sums = common::block_sums(n, ranks);
        let doubling = tree(&recursive_doubling(&sums));
        let formula: fprev::formula::Formula = format!("split({ranks}, sequential, doubling)")
            .parse()
            .unwrap();
        assert_eq!(formula.tree(n), doubling, "the order language agrees");
        for row in [0, 63] {
            for spec in [
                "mpi:allreduce@recursive-doubling",
                "mpi:allreduce@reduce-scatter-allgather",
                "mpi:allreduce@rabenseifner",
            ] {
                assert_eq!(
                    reveal(&bin, spec, n, ranks, row),
                    doubling,
                    "{spec} on {ranks} ranks, n = {n}, element {row}"
                );
            }
        }
        let smp: fprev::formula::Formula = format!("split({ranks}, sequential, binary-tree)")
            .parse()
            .unwrap();
        assert_eq!(
            smp.tree(n),
            tree(&binomial(&sums)),
            "the order language agrees"
        );
        assert_eq!(
            reveal(&bin, "mpi:allreduce@smp", n, ranks, 0),
            tree(&binomial(&sums)),
            "smp on {ranks} ranks, n = {n}"
        );
    }
}

/// One `fprev: error:` line with every needle, exit status `code`.
fn assert_fails(o: &Output, code: i32, needles: &[&str]) {
    let err = common::assert_error(o, code);
    for needle in needles {
        assert!(err.contains(needle), "{needle}: {err}");
    }
}

/// The MPICH build says what it links, refuses Open MPI's algorithms and
/// `--mpi openmpi` (saying how to build for each), and runs 10 ranks or
/// more (Hydra names rank files unpadded) with rank 0's output passed on.
#[test]
fn an_mpich_build_says_so_and_refuses_what_is_open_mpis() {
    let Some(bin) = mpich_fprev("an_mpich_build_says_so_and_refuses_what_is_open_mpis") else {
        return;
    };
    let probes = text(&run(&bin, &["probes"]).stdout);
    let mpi = probes.lines().find(|l| l.starts_with("mpi:")).unwrap();
    assert!(
        mpi.contains("available (links MPICH 4.") && mpi.ends_with("--mpi mpich)"),
        "{mpi}"
    );
    assert_fails(
        &run(
            &bin,
            &[
                "reveal",
                "mpi:allreduce",
                "-n",
                "4",
                "--ranks",
                "2",
                "--mpi",
                "openmpi",
            ],
        ),
        2,
        &["this fprev links MPICH", "for Open MPI is built with"],
    );
    assert_fails(
        &run(
            &bin,
            &["reveal", "mpi:allreduce@ring", "-n", "4", "--ranks", "2"],
        ),
        2,
        &[
            "no such allreduce algorithm in MPICH",
            "recursive-doubling, reduce-scatter-allgather, smp, nb",
            "ring is Open MPI's",
        ],
    );
    let o = run(
        &bin,
        &[
            "reveal",
            "mpi:binary-tree",
            "-n",
            "10",
            "--ranks",
            "10",
            "--mpi",
            "mpich",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The Binary Tree Reduction: neighbours added level by level, as a
    // binomial reduce of one summand per rank adds them.
    let leaves: Vec<String> = (0..10).map(|i| i.to_string()).collect();
    let first = text(&o.stdout).lines().next().map(tree);
    assert_eq!(first, Some(tree(&binomial(&leaves))), "{}", text(&o.stdout));
}

/// A Hydra job past its `--mpi-timeout` is stopped, every rank with it
/// (each rank runs in a session of its own under Hydra's proxy).
#[test]
fn an_mpich_job_past_its_time_is_stopped_with_every_process() {
    let Some(bin) = mpich_fprev("an_mpich_job_past_its_time_is_stopped_with_every_process") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("slow-mpich-job-marker.json");
    let o = run(&bin, &common::long_mpi_reveal(&marker, "3", "1"));
    assert_fails(&o, 3, &["ran longer than 1 s and was stopped"]);
    assert!(!marker.exists(), "nothing written half-way");
    common::wait_until_gone(marker.to_str().unwrap());
}

/// The entry of `spec` in the survey.json of `dir`, as JSON.
fn survey_entry(dir: &Path, spec: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("survey.json")).unwrap();
    let survey: serde_json::Value = serde_json::from_str(&text).unwrap();
    survey["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["spec"] == spec)
        .unwrap_or_else(|| panic!("{spec} is surveyed: {text}"))
        .clone()
}

/// The porting question across MPI implementations: a survey of MPI on 3
/// ranks with the Open MPI build and one with the MPICH build, compared.
/// Each survey's allreduce trees are recursive doubling's, written here;
/// the Binary Tree Reduction's are the one-rank tree; the comparison says
/// the same bits and names the implementations as the machines'
/// difference.
#[test]
fn open_mpi_and_mpich_surveys_compare() {
    let Some(mpich) = mpich_fprev("open_mpi_and_mpich_surveys_compare") else {
        return;
    };
    let open_mpi = assert_cmd::cargo::cargo_bin!("fprev").to_path_buf();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("openmpi"), dir.path().join("mpich"));
    for (bin, out, name) in [(&open_mpi, &a, "openmpi"), (&mpich, &b, "mpich")] {
        let o = run(
            bin,
            &[
                "survey",
                "--only",
                "mpi",
                "--ranks",
                "3",
                "--mpi",
                name,
                "--dtypes",
                "f64",
                "-n",
                "1..14",
                "--no-large",
                "--runs",
                "5",
                "--no-draw",
                "-o",
                out.to_str().unwrap(),
            ],
        );
        assert!(o.status.success(), "{name}: {}", text(&o.stderr));
        let allreduce = survey_entry(out, "mpi:allreduce");
        let binary = survey_entry(out, "mpi:binary-tree");
        // Explained: each formula gives every tree the survey revealed.
        let formula = |e: &serde_json::Value| -> fprev::formula::Formula {
            assert_eq!(e["status"], "explained", "{name}: {e}");
            e["formula"].as_str().unwrap().parse().unwrap()
        };
        let one_rank: fprev::formula::Formula = "binary-tree".parse().unwrap();
        for n in [3, 7, 14] {
            assert_eq!(
                formula(&allreduce).tree(n),
                tree(&recursive_doubling(&common::block_sums(n, 3))),
                "{name}: MPI_Allreduce at n = {n}"
            );
            assert_eq!(
                formula(&binary).tree(n),
                one_rank.tree(n),
                "{name}: at n = {n}"
            );
        }
        let facts = text(&std::fs::read(out.join("survey.json")).unwrap());
        assert!(facts.contains("\"ranks\": \"3\""), "{name}: {facts}");
    }
    let o = run(
        &open_mpi,
        &["compare", a.to_str().unwrap(), b.to_str().unwrap()],
    );
    let said = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{said}{}", text(&o.stderr));
    for needle in [
        "mpi implementation: Open MPI -> MPICH",
        "mpi:allreduce f64: same",
        "mpi:binary-tree f64: same",
        "2 same, 0 different",
    ] {
        assert!(said.contains(needle), "{needle:?} in {said}");
    }
}
