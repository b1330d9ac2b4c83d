//! MPI black boxes and the reproducible allreduce, with the real `mpirun`
//! (Open MPI; scripts/test.sh installs it). Ranks beyond the cores run
//! oversubscribed.
#![cfg(feature = "mpi")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use fprev::mpi::Blocks;
use fprev::reduce::binary_tree_sum;
use fprev::{Order, SummationTree};

fn fprev(args: &[&str]) -> Output {
    common::fprev().args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Reveals `spec` on `ranks` ranks as JSON and returns the tree.
fn reveal(spec: &str, n: usize, ranks: usize, dtype: &str, file: &Path) -> SummationTree {
    let (n, ranks) = (n.to_string(), ranks.to_string());
    let args = [
        "reveal", spec, "-n", &n, "--ranks", &ranks, "--dtype", dtype,
    ];
    common::reveal_tree(common::fprev(), &args, file).0
}

/// `fprev check` of `file` against `spec` on `ranks` ranks passes.
fn assert_checks(spec: &str, ranks: usize, dtype: &str, file: &Path) {
    let o = fprev(&[
        "check",
        file.to_str().unwrap(),
        spec,
        "--ranks",
        &ranks.to_string(),
        "--dtype",
        dtype,
        "--trials",
        "30",
    ]);
    assert!(
        o.status.success(),
        "check {spec} on {ranks}: {}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
}

#[test]
fn the_binary_tree_reduction_reveals_one_tree_on_every_rank_count() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.json");
    // n < P, blocks of unequal sizes, powers of two and not.
    for n in [1, 3, 10, 64, 100] {
        let want = Order::BinaryTree.tree(n);
        for ranks in 1..=4 {
            for dtype in ["f64", "f32"] {
                let got = reveal("mpi:binary-tree", n, ranks, dtype, &file);
                assert_eq!(got, want, "n = {n} on {ranks} ranks, {dtype}");
                // Its sums of random data replay bit for bit, the same tree
                // for every rank count: the same bits.
                assert_checks("mpi:binary-tree", ranks, dtype, &file);
            }
        }
    }
}

/// The example's summands (crates/fprev/examples/mpi_allreduce.rs).
fn summand(i: usize) -> f64 {
    let x = (i as f64 * 0.618_033_988_749_894_9).fract();
    (x - 0.5) * 2f64.powi((i % 40) as i32 - 20)
}

/// The examples this test binary was built with.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap().join("examples");
    let path = dir.join(name);
    assert!(
        path.is_file(),
        "{} is not built: `cargo test --all-features` builds the examples (or \
         cargo build --features mpi --example {name})",
        path.display()
    );
    path
}

#[test]
fn binary_tree_allreduce_gives_the_same_bits_on_every_rank_count() {
    let n = 100_001;
    let whole: Vec<f64> = (0..n).map(summand).collect();
    let want = format!("({:016x})", binary_tree_sum(&whole).to_bits());
    let mut plain = Vec::new();
    for ranks in 1..=5 {
        let o = Command::new("mpirun")
            .args(["--oversubscribe", "-np", &ranks.to_string()])
            .arg(example("mpi_allreduce"))
            .arg(n.to_string())
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .output()
            .expect("mpirun runs (apt-get install openmpi-bin)");
        let out = text(&o.stdout);
        assert!(
            o.status.success(),
            "{ranks} ranks: {out}{}",
            text(&o.stderr)
        );
        let (tree, allreduce) = out.split_once(", MPI_Allreduce").unwrap();
        assert!(tree.ends_with(&want), "{ranks} ranks: {out} (want {want})");
        plain.push(allreduce.to_string());
    }
    // The plain allreduce is no such thing: it changes with the ranks.
    plain.dedup();
    assert!(plain.len() > 1, "{plain:?}");
}

#[test]
fn mpi_allreduce_reveals_a_tree_that_real_mpi_confirms() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.json");
    for ranks in 1..=4 {
        // One value per rank, several (unequal blocks), fewer than ranks.
        for n in [ranks, 3 * ranks + 1, 2] {
            for dtype in ["f64", "f32"] {
                let tree = reveal("mpi:allreduce", n, ranks, dtype, &file);
                assert_eq!(tree.n(), n);
                assert_checks("mpi:allreduce", ranks, dtype, &file);
            }
        }
    }
    // A rank's block summed in another local order shows in the tree.
    let tree = reveal("mpi:allreduce:reverse", 8, 2, "f64", &file);
    assert_eq!(tree.to_text(), "((0+(1+(2+3)))+(4+(5+(6+7))))");
}

/// Open MPI's allreduce is `split(P, sequential, doubling)`: each rank's
/// block left to right, then recursive doubling after folding to a power
/// of two. `fprev explain` finds it at P = 3, and the formula, written here
/// from that rule, gives the tree real MPI reveals at sizes explain never
/// saw, empty ranks included (n < P).
#[test]
fn mpi_allreduce_is_blocks_combined_by_recursive_doubling() {
    let out = fprev(&[
        "explain",
        "mpi:allreduce",
        "--ranks",
        "3",
        "--dtype",
        "f64",
        "-n",
        "1..12,31,32,33",
    ]);
    let said = text(&out.stdout);
    assert!(
        said.starts_with("native:split(3, sequential, doubling)\n"),
        "{said}{}",
        text(&out.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.json");
    for ranks in [2, 5, 6] {
        let formula: fprev::formula::Formula = format!("split({ranks}, sequential, doubling)")
            .parse()
            .unwrap();
        for n in [3, 17, 50] {
            let tree = reveal("mpi:allreduce", n, ranks, "f64", &file);
            assert_eq!(tree, formula.tree(n), "{formula} at n = {n}");
        }
    }
}

/// One `fprev: error:` line with `needle`, exit status `code`, no panic.
fn assert_fails(o: &Output, code: i32, needle: &str) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("fprev: error: ") && err.contains(needle),
        "{err}"
    );
}

/// `--mpi` asserts the MPI this build links (Open MPI): MPICH is one
/// line, exit 2, saying how to build for it; `fprev probes` says which.
#[test]
fn mpi_names_the_linked_implementation() {
    assert_fails(
        &fprev(&[
            "reveal",
            "mpi:allreduce",
            "-n",
            "8",
            "--ranks",
            "2",
            "--mpi",
            "mpich",
        ]),
        2,
        "an fprev for MPICH is built with `MPICC=mpicc.mpich cargo build --features mpi`",
    );
    assert_fails(
        &fprev(&["reveal", "mpi:allreduce", "-n", "8", "--mpi", "lam"]),
        2,
        "no such MPI implementation; fprev knows openmpi and mpich",
    );
    let o = fprev(&[
        "reveal",
        "mpi:allreduce",
        "-n",
        "4",
        "--ranks",
        "2",
        "--mpi",
        "openmpi",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let probes = text(&fprev(&["probes"]).stdout);
    assert!(
        probes.contains("available (links Open MPI v") && probes.contains("--mpi openmpi)"),
        "{probes}"
    );
}

#[test]
fn mpi_black_boxes_need_a_job_and_say_how_to_get_one() {
    assert_fails(
        &fprev(&["reveal", "mpi:allreduce", "-n", "8"]),
        2,
        "give --ranks P",
    );
    assert_fails(
        &fprev(&["reveal", "native:pairwise", "-n", "8", "--ranks", "2"]),
        2,
        "--ranks applies to mpi:",
    );
    assert_fails(
        &fprev(&["reveal", "mpi:allreduce:fused:4", "-n", "8", "--ranks", "2"]),
        2,
        "IEEE order",
    );
    // Without mpirun on the PATH.
    let o = Command::cargo_bin("fprev")
        .unwrap()
        .args(["reveal", "mpi:binary-tree", "-n", "8", "--ranks", "2"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_fails(&o, 2, "mpirun is not installed");
}

/// A reveal long enough to interrupt (see [`common::long_mpi_reveal`]).
fn long_reveal(marker: &Path, ranks: &str, timeout: &str) -> Command {
    let mut cmd = Command::cargo_bin("fprev").unwrap();
    cmd.args(common::long_mpi_reveal(marker, ranks, timeout));
    cmd
}

#[test]
fn a_job_past_its_time_is_stopped_with_every_process() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("slow-job-marker.json");
    let o = long_reveal(&marker, "3", "1").output().unwrap();
    assert_fails(&o, 3, "ran longer than 1 s and was stopped");
    assert!(!marker.exists(), "nothing written half-way");
    common::wait_until_gone(marker.to_str().unwrap());
}

#[test]
fn a_rank_that_dies_ends_the_job_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("dying-rank-marker.json");
    let child = long_reveal(&marker, "3", "600")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Kill rank 2 once it runs.
    let started = Instant::now();
    let killed = loop {
        let rank2 = common::processes_with(marker.to_str().unwrap())
            .into_iter()
            .find(|pid| {
                std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| text(&env).contains("OMPI_COMM_WORLD_RANK=2"))
            });
        if let Some(pid) = rank2 {
            std::thread::sleep(Duration::from_millis(300));
            Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status()
                .unwrap();
            break pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "rank 2 never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let o = child.wait_with_output().unwrap();
    assert_fails(&o, 3, "the MPI job failed before rank 0 finished");
    assert!(killed > 0 && !marker.exists());
    common::wait_until_gone(marker.to_str().unwrap());
}

#[test]
fn blocks_split_every_summand_once() {
    for (n, ranks) in [(0, 3), (2, 4), (10, 3), (1000, 7), ((1 << 20) + 1, 4)] {
        for blocks in [Blocks::even(n, ranks), Blocks::aligned(n, ranks, 0.2)] {
            let mut next = 0;
            for r in 0..ranks {
                let range = blocks.range(r);
                assert_eq!(range.start, next, "{blocks:?}");
                next = range.end;
                for x in range {
                    assert_eq!(blocks.owner(x), r);
                }
            }
            assert_eq!(next, n);
        }
    }
}

/// The tree of `n` summands in `ranks` even blocks (the first `n mod P` one
/// longer), each summed left to right, the block sums added left to right
/// from rank `first` round the ring, past ranks that hold none: an
/// allreduce's order written from its algorithm's description, not from a
/// reveal.
fn ring_tree(n: usize, ranks: usize, first: usize) -> SummationTree {
    let sums = common::block_sums(n, ranks);
    let order = (0..ranks)
        .map(|k| (first + k) % ranks)
        .filter(|&r| r < n)
        .map(|r| &sums[r]);
    let text = order
        .clone()
        .skip(1)
        .fold(order.clone().next().unwrap().clone(), |s, b| {
            format!("({s}+{b})")
        });
    text.parse().unwrap()
}

/// Open MPI's allreduce algorithms, chosen in the spec and set for the job
/// by `--ranks`, against formulas written from their descriptions: the
/// linear reduce adds the ranks' sums from the last rank down, recursive
/// doubling folds and halves (`doubling`), and the ring gives each element
/// of the vector the order of its chunk, which starts at the rank of that
/// chunk and goes round (`split(P, sequential, rotate(K, sequential))`).
#[test]
fn each_allreduce_algorithm_is_its_own_order() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.json");
    for ranks in [2, 3, 5] {
        for n in [7, 10] {
            for (algorithm, outer) in [("linear", "reverse"), ("recursive-doubling", "doubling")] {
                let spec = format!("mpi:allreduce@{algorithm}");
                let formula: fprev::formula::Formula =
                    format!("split({ranks}, sequential, {outer})")
                        .parse()
                        .unwrap();
                let tree = reveal(&spec, n, ranks, "f64", &file);
                assert_eq!(tree, formula.tree(n), "{spec} on {ranks} ranks, n = {n}");
            }
        }
    }
    // The ring, element by element: 64 elements in 4 chunks of 16 (and in
    // 5 chunks, the last of 12, on 5 ranks, where n = 3 leaves ranks 3 and
    // 4 without summands: the chunk of rank 4 starts at rank 0's).
    for (ranks, n, row, first) in [
        (4, 9, 0, 0),
        (4, 9, 20, 1),
        (4, 9, 40, 2),
        (4, 9, 63, 3),
        (5, 3, 14, 1),
        (5, 3, 63, 4),
        (5, 4, 40, 3),
    ] {
        let o = fprev(&[
            "reveal",
            "mpi:allreduce@ring",
            "-n",
            &n.to_string(),
            "--ranks",
            &ranks.to_string(),
            "--dtype",
            "f64",
            "--row",
            &row.to_string(),
            "-o",
            file.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let tree = fprev::document::TreeDocument::read(&file)
            .unwrap()
            .into_tree();
        assert_eq!(
            tree,
            ring_tree(n, ranks, first),
            "ring on {ranks} ranks, n = {n}, element {row}"
        );
        // The order language says it too.
        let formula: fprev::formula::Formula =
            format!("split({ranks}, sequential, rotate({first}, sequential))")
                .parse()
                .unwrap();
        assert_eq!(tree, formula.tree(n), "{formula}");
    }
    // An allreduce written by hand (gather every rank's sum, add from your
    // own rank round the ring) leaves the ranks with different bits: said,
    // with which ranks, never hidden behind rank 0's answer.
    assert_fails(
        &fprev(&["reveal", "mpi:allgather", "-n", "8", "--ranks", "3"]),
        7,
        "the ranks end with different bits: ranks 1, 2 differ from rank 0",
    );
    assert_fails(
        &fprev(&["reveal", "mpi:allreduce@fastest", "-n", "8", "--ranks", "2"]),
        2,
        "no such allreduce algorithm",
    );
    // MPICH's algorithms are MPICH's: this build links Open MPI.
    assert_fails(
        &fprev(&["reveal", "mpi:allreduce@smp", "-n", "8", "--ranks", "2"]),
        2,
        "smp is MPICH's (an fprev for it is built with `MPICC=mpicc.mpich cargo build",
    );
    assert_fails(
        &fprev(&["reveal", "mpi:binary-tree@ring", "-n", "8", "--ranks", "2"]),
        2,
        "MPI_Allreduce's to choose",
    );
}

/// Reveals element `row` of a vector of `count` elements of `spec` on
/// `ranks` ranks: the tree and what fprev noted on stderr.
fn reveal_element(
    spec: &str,
    n: usize,
    ranks: usize,
    count: usize,
    row: usize,
    file: &Path,
) -> (SummationTree, String) {
    let (shape, row) = (format!("{count},1,{n}"), row.to_string());
    let (n, ranks) = (n.to_string(), ranks.to_string());
    let args = [
        "reveal", spec, "-n", &n, "--ranks", &ranks, "--dtype", "f64", "--shape", &shape, "--row",
        &row,
    ];
    common::reveal_tree(common::fprev(), &args, file)
}

/// The tree of Open MPI's reduce over its binary tree (the tuned
/// component's tree of fanout 2 rooted at rank 0), written from its
/// description: levels of 1, 2, 4, … ranks; rank `r` on level `L` has
/// children `r + 2^L` and `r + 2^(L+1)`, and adds each child's result to
/// its own in that order.
fn binary_tree_reduce(n: usize, ranks: usize) -> SummationTree {
    fn below(r: usize, sums: &[String]) -> String {
        let step = 1 << (r + 1).ilog2();
        [r + step, r + 2 * step]
            .into_iter()
            .filter(|&c| c < sums.len())
            .fold(sums[r].clone(), |s, c| format!("({s}+{})", below(c, sums)))
    }
    below(0, &common::block_sums(n, ranks)).parse().unwrap()
}

/// Every Open MPI algorithm on 7 and 16 ranks (oversubscribed), at sizes
/// no output script reveals (n = 2P + 1, a vector of 50 elements), keeps
/// to the order written here from its description, element by element,
/// and the reveal says so.
#[test]
fn open_mpi_algorithms_on_up_to_16_ranks_keep_to_their_descriptions() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.json");
    for ranks in [7, 16] {
        let n = 2 * ranks + 1;
        let doubling: fprev::formula::Formula = format!("split({ranks}, sequential, doubling)")
            .parse()
            .unwrap();
        let reverse: SummationTree = {
            let sums = common::block_sums(n, ranks);
            let last = sums[ranks - 1].clone();
            let text = sums[..ranks - 1]
                .iter()
                .rev()
                .fold(last, |s, b| format!("({b}+{s})"));
            text.parse().unwrap()
        };
        // 50 elements in chunks as even as can be: element 49 is in the last.
        for row in [0, 49] {
            let first = if row == 0 { 0 } else { ranks - 1 };
            for (algorithm, expected) in [
                ("linear", reverse.clone()),
                ("recursive-doubling", doubling.tree(n)),
                ("rabenseifner", doubling.tree(n)),
                ("ring", ring_tree(n, ranks, first)),
                ("segmented-ring", ring_tree(n, ranks, first)),
            ] {
                let spec = format!("mpi:allreduce@{algorithm}");
                let (tree, said) = reveal_element(&spec, n, ranks, 50, row, &file);
                assert_eq!(tree, expected, "{spec} on {ranks} ranks, element {row}");
                assert!(said.contains("the revealed tree is it"), "{said}");
            }
        }
        // Fewer elements than the largest power of two of ranks: Open MPI's
        // Rabenseifner is its linear algorithm.
        let (tree, said) = reveal_element("mpi:allreduce@rabenseifner", n, ranks, 3, 2, &file);
        assert_eq!(tree, reverse, "rabenseifner of 3 elements on {ranks} ranks");
        assert!(said.contains("the revealed tree is it"), "{said}");
        // A small message's reduce runs over Open MPI's binary tree.
        let (tree, _) = reveal_element("mpi:allreduce@nonoverlapping", n, ranks, 50, 0, &file);
        assert_eq!(
            tree,
            binary_tree_reduce(n, ranks),
            "nonoverlapping on {ranks}"
        );
    }
}

/// `sweep --count` bisects to the exact message size where Open MPI's
/// ring falls back to recursive doubling: below one element a rank.
#[test]
fn a_count_sweep_finds_where_the_ring_falls_back_exactly() {
    let ranks = 5;
    let o = fprev(&[
        "sweep",
        "mpi:allreduce@ring",
        "--ranks",
        "5",
        "-n",
        "5",
        "--dtype",
        "f64",
        "--count",
        "1,3,200",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let study = fprev::invariance::Study::parse(&text(&o.stdout)).unwrap();
    let doubling: fprev::formula::Formula = "split(5, sequential, doubling)".parse().unwrap();
    let (mut doubled, mut rang) = (Vec::new(), Vec::new());
    for case in &study.cases {
        let count: usize = case.setting.value("batch").unwrap().parse().unwrap();
        let tree = case.observed.confirmed().expect("confirmed").tree();
        if case.setting.value("row") == Some("last") {
            match *tree == doubling.tree(5) {
                true => doubled.push(count),
                false => {
                    assert_eq!(*tree, ring_tree(5, ranks, ranks - 1), "count {count}");
                    rang.push(count);
                }
            }
        }
    }
    assert_eq!(doubled.iter().max(), Some(&4), "{doubled:?}");
    assert_eq!(rang.iter().min(), Some(&5), "{rang:?}");
}

/// `invariance --env` with `--ranks` runs each environment as an MPI job
/// of its own (Open MPI reads its algorithm as a job starts): the linear
/// algorithm and recursive doubling give 3 ranks two orders, and the study
/// says to pin the variable.
#[test]
fn an_invariance_study_runs_each_mpi_environment_as_a_job() {
    let o = fprev(&[
        "invariance",
        "mpi:allreduce",
        "--ranks",
        "3",
        "-n",
        "6",
        "--dtype",
        "f64",
        "--env",
        "OMPI_MCA_coll_tuned_use_dynamic_rules=1",
        "--env",
        "OMPI_MCA_coll_tuned_allreduce_algorithm=1,3",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let said = text(&o.stdout);
    assert!(
        said.contains("pin OMPI_MCA_coll_tuned_allreduce_algorithm"),
        "{said}"
    );
    assert!(said.contains("2 distinct outcomes"), "{said}");
}

/// `fprev survey --ranks P` surveys MPI as a library of the machine: an
/// algorithm chosen in the spec is set for the job and recorded with the
/// survey, and its trees are those written from its description (Open
/// MPI's linear reduce adds the ranks' sums from the last rank down). What
/// one job cannot run is refused before anything is written: two
/// algorithms in one survey (a job runs the one chosen as it starts),
/// `--knobs` (a process per setting), MPI without `--ranks`.
#[test]
fn a_survey_on_mpi_ranks_records_its_algorithm_and_refuses_what_one_job_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("linear");
    let o = fprev(&[
        "survey",
        "--spec",
        "mpi:allreduce@linear",
        "--ranks",
        "4",
        "--dtypes",
        "f64",
        "-n",
        "1..13",
        "--no-large",
        "--runs",
        "3",
        "--no-draw",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("survey.json")).unwrap()).unwrap();
    let entry = &json["entries"][0];
    assert_eq!(entry["status"], "explained", "{entry}");
    // Explained: the formula gives every tree the survey revealed.
    let formula: fprev::formula::Formula = entry["formula"].as_str().unwrap().parse().unwrap();
    for n in [4, 9, 13] {
        let sums = common::block_sums(n, 4);
        let linear = sums[..3]
            .iter()
            .rev()
            .fold(sums[3].clone(), |s, b| format!("({s}+{b})"));
        assert_eq!(
            formula.tree(n),
            linear.parse::<SummationTree>().unwrap(),
            "n = {n}"
        );
    }
    let machine = &json["machine"];
    assert_eq!(
        machine["environment"]["OMPI_MCA_coll_tuned_allreduce_algorithm"],
        "1"
    );
    assert_eq!(machine["libraries"]["mpi"]["ranks"], "4", "{machine}");
    assert_eq!(machine["libraries"]["mpi"]["implementation"], "Open MPI");

    let refused = dir.path().join("refused");
    let target = refused.to_str().unwrap();
    for (args, needle) in [
        (
            &[
                "--spec",
                "mpi:allreduce@ring",
                "--spec",
                "mpi:allreduce",
                "--ranks",
                "3",
            ][..],
            "more than one algorithm",
        ),
        (&["--only", "mpi", "--knobs", "--ranks", "3"][..], "--knobs"),
        (&["--only", "mpi"][..], "give --ranks P"),
    ] {
        let o = fprev(&[&["survey", "-o", target][..], args].concat());
        assert_fails(&o, 2, needle);
        assert!(!refused.join("survey.json").exists(), "{args:?}");
    }
}

/// `fprev explain` of a real ring allreduce names a formula whose trees are
/// the ring's as written from its description, at sizes the inference never
/// saw too, and at sizes with ranks left empty (n < P), where the chunk's
/// rank holds nothing and the ring meets rank 0's first.
#[test]
fn explain_names_the_ring_of_an_element_at_every_size() {
    let o = fprev(&[
        "explain",
        "mpi:allreduce@ring",
        "--ranks",
        "5",
        "--dtype",
        "f64",
        "--shape",
        "64,1,1",
        "--row",
        "63",
        "-n",
        "1..16",
        "--verify",
        "23",
        "--no-cache",
    ]);
    let said = text(&o.stdout);
    assert!(o.status.success(), "{said}{}", text(&o.stderr));
    let formula: fprev::formula::Formula = said
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("native:"))
        .unwrap_or_else(|| panic!("a formula: {said}"))
        .parse()
        .unwrap();
    assert!(
        said.contains("its tree is the black box's at n = 23"),
        "{said}"
    );
    // Element 63 is in the last chunk, rank 4's.
    for n in [2, 3, 4, 9, 23, 41] {
        assert_eq!(formula.tree(n), ring_tree(n, 5, 4), "{formula} at n = {n}");
    }
}

/// How the order depends on the element: `fprev invariance` over the rows
/// of an MPI vector (64 elements unless `--shape` says otherwise) finds
/// each ring chunk's own start, each element's formula giving the ring's
/// tree written from its description, and says the element decides it.
#[test]
fn an_invariance_study_over_elements_finds_each_ring_chunk_s_start() {
    let o = fprev(&[
        "invariance",
        "mpi:allreduce@ring",
        "--ranks",
        "4",
        "-n",
        "9",
        "--dtype",
        "f64",
        "--rows",
        "0,20,40,63",
    ]);
    let said = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{said}{}", text(&o.stderr));
    assert!(
        said.contains("depends on the element of the vector"),
        "{said}"
    );
    for (row, first) in [(0, 0), (20, 1), (40, 2), (63, 3)] {
        // `  [B] native:FORMULA; …` for the group `  [B] row=20` names.
        let group = said
            .lines()
            .find_map(|l| l.trim().strip_suffix(&format!(" row={row}")))
            .unwrap_or_else(|| panic!("row {row} in {said}"));
        let formula: fprev::formula::Formula = said
            .lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{group} native:")))
            .and_then(|rest| rest.split(';').next())
            .unwrap_or_else(|| panic!("{group}'s formula in {said}"))
            .parse()
            .unwrap();
        assert_eq!(formula.tree(9), ring_tree(9, 4, first), "element {row}");
    }
}
