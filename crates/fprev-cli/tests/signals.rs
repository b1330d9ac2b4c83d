//! Every process and temporary file a command starts ends with it, on
//! SIGINT, SIGTERM and SIGHUP, sent to fprev alone or to its process group
//! (as a terminal sends Ctrl-C): an MPI job's launcher, proxies and ranks
//! (Open MPI, MPICH) and its directory, and the fresh fprev of each
//! `invariance --env` setting. The processes are found by an environment
//! variable this test sets, which every process under fprev inherits
//! (Hydra's proxies and ranks, in sessions of their own, too).

mod common;

use std::ffi::c_int;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The variable that marks the processes of one run.
const MARK: &str = "FPREV_TEST_SIGNALS";

/// Where a signal is sent.
#[derive(Clone, Copy, Debug)]
enum To {
    /// The `fprev` process alone (`kill PID`).
    Fprev,
    /// Its process group (Ctrl-C at a terminal; `timeout` sends to its
    /// own group too).
    Group,
}

/// How long a command is left at work before the signal: an MPI job's
/// ranks past their start.
const SETTLE: Duration = Duration::from_millis(300);

/// Each ending signal, to fprev alone and to its group between them.
const SIGNALS: [(c_int, To); 4] = [
    (libc::SIGINT, To::Group),
    (libc::SIGTERM, To::Fprev),
    (libc::SIGHUP, To::Group),
    (libc::SIGINT, To::Fprev),
];

/// The processes (id and name) whose environment holds `MARK=mark`, but
/// for zombies, whose environment reads empty.
fn marked(mark: &str) -> Vec<(i32, String)> {
    let wanted = format!("{MARK}={mark}");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == wanted.as_bytes()))
        })
        .map(|pid| {
            let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            (pid, name.trim().to_string())
        })
        .collect()
}

/// Kills what is left of a run when the test ends, passed or failed.
struct Sweep(String);

impl Drop for Sweep {
    fn drop(&mut self) {
        for (pid, _) in marked(&self.0) {
            // SAFETY: kill(2) on a process this test started (it carries
            // the test's mark).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// Runs `command` (an fprev) in a process group of its own with a fresh
/// `TMPDIR`; once `ready` says its processes (by name) and that directory
/// show it at work, and `settle` later, sends `signal` `to` it, and asserts
/// that fprev ends with the signal (status 130 for SIGINT) and that, as it
/// ends (half a second for processes to finish ending), no process it
/// started is left and its temporary directory is empty.
fn assert_ends_with_everything(
    mut command: Command,
    signal: c_int,
    to: To,
    ready: impl Fn(&[String], &Path) -> bool,
    settle: Duration,
) {
    static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let mark = format!(
        "{}-{}",
        std::process::id(),
        RUN.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    );
    let _sweep = Sweep(mark.clone());
    let tmp = TempDir::new().unwrap();
    let logs = TempDir::new().unwrap();
    let log = logs.path().join("stderr");
    let mut fprev = command
        .env(MARK, &mark)
        .env("TMPDIR", tmp.path())
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let said = || std::fs::read_to_string(&log).unwrap_or_default();
    let names = || -> Vec<String> { marked(&mark).into_iter().map(|(_, n)| n).collect() };
    let started = Instant::now();
    while !ready(&names(), tmp.path()) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "never at work: {:?}; {}",
            names(),
            said()
        );
        assert!(
            fprev.try_wait().unwrap().is_none(),
            "ended early: {}",
            said()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(settle);
    let before = names();
    let target = match to {
        To::Fprev => fprev.id() as i32,
        To::Group => -(fprev.id() as i32),
    };
    // SAFETY: kill(2) on the process (group) this test started.
    unsafe { libc::kill(target, signal) };
    let sent = Instant::now();
    let status = loop {
        if let Some(status) = fprev.try_wait().unwrap() {
            break status;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(20),
            "signal {signal} to {to:?}: fprev still runs; {}",
            said()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    if signal == libc::SIGINT {
        assert_eq!(status.code(), Some(130), "{status:?}: {}", said());
    } else {
        assert_eq!(status.signal(), Some(signal), "{status:?}: {}", said());
    }
    let ended = Instant::now();
    while !marked(&mark).is_empty() {
        assert!(
            ended.elapsed() < Duration::from_millis(500),
            "signal {signal} to {to:?}: left running after fprev ended: {:?} (of {before:?}); {}",
            marked(&mark),
            said()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "signal {signal} to {to:?}: fprev ended in {:.2} s, the last of {before:?} {:.2} s later",
        (ended - sent).as_secs_f64(),
        ended.elapsed().as_secs_f64()
    );
    let left: Vec<PathBuf> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(
        left.is_empty(),
        "signal {signal} to {to:?}: temporary files left: {left:?}"
    );
}

/// How many of `names` are `name`.
fn count(names: &[String], name: &str) -> usize {
    names.iter().filter(|n| *n == name).count()
}

/// An MPI reveal on 4 ranks long enough to interrupt, by the fprev at
/// `bin`; its output file in `dir` (never written).
fn mpi_reveal(bin: &Path, dir: &Path) -> Command {
    let mut command = common::fprev_at(bin);
    command.args(common::long_mpi_reveal(&dir.join("t.json"), "4", "600"));
    command
}

#[cfg(feature = "mpi")]
#[test]
fn an_open_mpi_job_ends_with_fprev_on_every_signal() {
    let bin = assert_cmd::cargo::cargo_bin("fprev");
    let dir = TempDir::new().unwrap();
    for (signal, to) in SIGNALS {
        // fprev, the process running its command, and the four ranks.
        assert_ends_with_everything(
            mpi_reveal(&bin, dir.path()),
            signal,
            to,
            |names, _| count(names, "mpirun") == 1 && count(names, "fprev") == 6,
            SETTLE,
        );
        assert!(!dir.path().join("t.json").exists());
    }
}

/// The MPI job of an `invariance --env` setting's fprev, two processes
/// down, ends too.
#[cfg(feature = "mpi")]
#[test]
fn the_mpi_job_of_an_invariance_setting_ends_with_fprev() {
    for (signal, to) in &SIGNALS[..2] {
        let mut command = common::fprev();
        command.args([
            "invariance",
            "mpi:binary-tree",
            "-n",
            "16384",
            "--ranks",
            "4",
            "--env",
            "FPREV_TEST_KNOB=1,2",
        ]);
        // fprev and its command's process, the setting's two, four ranks.
        assert_ends_with_everything(
            command,
            *signal,
            *to,
            |names, _| count(names, "mpirun") == 1 && count(names, "fprev") == 8,
            SETTLE,
        );
    }
}

#[test]
fn an_mpich_job_ends_with_fprev_on_every_signal() {
    let Some(bin) = std::env::var_os("FPREV_MPICH_BIN") else {
        eprintln!(
            "SKIPPED an_mpich_job_ends_with_fprev_on_every_signal: FPREV_MPICH_BIN names no \
             MPICH build of fprev (scripts/test.sh builds one with MPICC=mpicc.mpich)"
        );
        return;
    };
    let dir = TempDir::new().unwrap();
    for (signal, to) in SIGNALS {
        assert_ends_with_everything(
            mpi_reveal(Path::new(&bin), dir.path()),
            signal,
            to,
            |names, _| count(names, "hydra_pmi_proxy") == 1 && count(names, "fprev") == 6,
            SETTLE,
        );
        assert!(!dir.path().join("t.json").exists());
    }
}

#[test]
fn the_process_of_each_invariance_setting_ends_with_fprev_on_every_signal() {
    let dir = TempDir::new().unwrap();
    let lib = common::compile_c(
        dir.path(),
        "hangs",
        "#include <stddef.h>\n#include <unistd.h>\n\
         float hang_f32(const float *x, size_t n) { (void)x; (void)n; for (;;) pause(); }\n",
    );
    let spec = format!("dylib:{}:hang_f32", lib.display());
    for (signal, to) in SIGNALS {
        let mut command = common::fprev();
        command.args([
            "invariance",
            &spec,
            "-n",
            "8",
            "--env",
            "FPREV_TEST_KNOB=1,2",
        ]);
        // fprev and its command's process; the setting's fprev and its
        // command's process.
        assert_ends_with_everything(
            command,
            signal,
            to,
            |names, _| count(names, "fprev") == 4,
            SETTLE,
        );
    }
}

/// `emit --check`'s compiler and directory of compiled code go too,
/// though the signal comes while the command runs, where nothing is held
/// back.
#[test]
fn the_compiler_and_directory_of_an_emit_check_go_with_fprev_on_every_signal() {
    for (signal, to) in SIGNALS {
        let mut command = common::fprev();
        command.args([
            "emit",
            "native:pairwise",
            "--check",
            "--trials",
            "1000",
            "--no-cache",
        ]);
        // The compiler at work on the code in fprev's directory.
        assert_ends_with_everything(
            command,
            signal,
            to,
            |names, _| count(names, "cc") == 1,
            Duration::ZERO,
        );
    }
}
