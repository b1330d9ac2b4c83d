//! `--ranks P`: starting an MPI job from the command line. `mpirun -np P
//! fprev ARGS` runs every rank; rank 0's output is passed on as if fprev had
//! run alone, its exit status returned (through the file that
//! [`fprev::mpi::STATUS_VAR`] names), and the whole job killed if it outlives
//! its time. What the ranks do inside the job is the library's
//! [`fprev::mpi`].

#[cfg(feature = "mpi")]
use std::ffi::OsString;
#[cfg(feature = "mpi")]
use std::io::Write;
#[cfg(feature = "mpi")]
use std::path::Path;
#[cfg(feature = "mpi")]
use std::process::{Command, Stdio};
#[cfg(feature = "mpi")]
use std::time::{Duration, Instant};

#[cfg(feature = "mpi")]
use fprev::mpi::STATUS_VAR;
use fprev::{Error, Result};

/// `--ranks P`: outside an MPI job, runs this command line under `mpirun
/// -np P` and returns its exit status; inside one, `None`: the command runs
/// here (its black box checks the job's size).
#[cfg(feature = "mpi")]
pub(crate) fn run(ranks: usize, timeout: u64) -> Result<Option<i32>> {
    if fprev::mpi::in_job() {
        return Ok(None);
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    relaunch(ranks, &args, std::time::Duration::from_secs(timeout)).map(Some)
}

#[cfg(not(feature = "mpi"))]
pub(crate) fn run(_: usize, _: u64) -> Result<Option<i32>> {
    Err(Error::Input(
        "--ranks runs an MPI job, but this fprev was built without the 'mpi' feature: rebuild \
         with `cargo build --features mpi` (needs libopenmpi-dev)"
            .into(),
    ))
}

/// Runs this fprev command line under `mpirun -np ranks`, passes rank 0's
/// output on, and returns its exit status. The job is killed (all its
/// processes) if it runs longer than `timeout`.
#[cfg(feature = "mpi")]
fn relaunch(ranks: usize, args: &[OsString], timeout: Duration) -> Result<i32> {
    let system = |what: &str| {
        let what = what.to_string();
        move |e: std::io::Error| Error::System {
            what,
            source: e.into(),
        }
    };
    let exe = std::env::current_exe()
        .map_err(system("cannot find the fprev binary to run under mpirun"))?;
    let dir = tempfile::tempdir().map_err(system("cannot make a directory for the MPI job"))?;
    let status = dir.path().join("status");
    let output = dir.path().join("output");
    let mpirun_log = std::fs::File::create(dir.path().join("mpirun.log"))
        .map_err(system("cannot make the MPI job's log"))?;
    let mut command = Command::new("mpirun");
    command
        .args([
            "-np",
            &ranks.to_string(),
            "--oversubscribe",
            "--output-filename",
        ])
        .arg(&output)
        .arg(exe)
        .args(args)
        .env(STATUS_VAR, &status)
        // Open MPI refuses to run as root unless told.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // A file, not a pipe: a pipe nobody reads while waiting could fill
        // and stall mpirun.
        .stderr(mpirun_log);
    // An algorithm the spec names is Open MPI's to read as the job starts.
    let spec = args
        .iter()
        .filter_map(|a| a.to_str())
        .find_map(|a| a.strip_prefix("mpi:"));
    if let Some((_, Some(algorithm))) = spec.map(fprev::mpi::algorithm::split).transpose()? {
        command.envs(algorithm.env());
    }
    {
        use std::os::unix::process::CommandExt;
        // A process group of its own, to stop every process of the job.
        command.process_group(0);
    }
    let mut child = command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::Input(
            "mpirun is not installed: --ranks starts an MPI job with it (Debian: apt-get install \
             openmpi-bin), or run fprev under your own mpirun"
                .into(),
        ),
        _ => Error::Input(format!("cannot start mpirun: {e}")),
    })?;
    let started = Instant::now();
    let exit = loop {
        if let Some(exit) = child.try_wait().map_err(system("cannot wait for mpirun"))? {
            break exit;
        }
        if started.elapsed() > timeout {
            // SAFETY: kill(2) on the job's own process group.
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
            let _ = child.wait();
            return Err(Error::BlackBox(format!(
                "the MPI job ran longer than {} s and was stopped, all its processes with it \
                 (--mpi-timeout sets the limit)",
                timeout.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mpirun_said = std::fs::read_to_string(dir.path().join("mpirun.log")).unwrap_or_default();
    // Rank 0's own output, as if it had run alone.
    let rank0 = rank_zero(&output.join("1"));
    if let Some(rank0) = &rank0 {
        pass_on(&rank0.join("stdout"), &mut std::io::stdout());
        pass_on(&rank0.join("stderr"), &mut std::io::stderr());
    }
    match std::fs::read_to_string(&status)
        .ok()
        .and_then(|s| s.trim().parse().ok())
    {
        Some(_) if rank0.is_none() => Err(Error::BlackBox(format!(
            "the MPI job finished, but rank 0's output is not in {} where mpirun \
             --output-filename was to put it",
            output.display()
        ))),
        Some(code) => Ok(code),
        None => Err(Error::BlackBox(format!(
            "the MPI job failed before rank 0 finished (mpirun {}){}",
            exit,
            mpirun_said
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('-'))
                .map(|l| format!(": {l}"))
                .unwrap_or_default()
        ))),
    }
}

/// Rank 0's folder of an `--output-filename` job: `rank.0`, or `rank.00`
/// and so on, as Open MPI pads rank numbers to the job's widest.
#[cfg(feature = "mpi")]
fn rank_zero(job: &Path) -> Option<std::path::PathBuf> {
    std::fs::read_dir(job)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|path| {
            path.file_name()
                .and_then(|name| name.to_str()?.strip_prefix("rank."))
                .is_some_and(|rank| !rank.is_empty() && rank.bytes().all(|b| b == b'0'))
        })
}

#[cfg(feature = "mpi")]
fn pass_on(path: &Path, to: &mut dyn Write) {
    if let Ok(text) = std::fs::read(path) {
        let _ = to.write_all(&text);
        let _ = to.flush();
    }
}
