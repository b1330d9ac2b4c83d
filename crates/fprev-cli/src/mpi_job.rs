//! `--ranks P`: starting an MPI job from the command line with the launcher
//! of the MPI this fprev links ([`fprev::mpi::Implementation`]): Open MPI's
//! `mpirun -np P`, or MPICH's Hydra `mpiexec.mpich -n P`, runs every rank;
//! rank 0's output is passed on as if fprev had run alone, its exit status
//! returned (through the file that [`fprev::mpi::STATUS_VAR`] names), and
//! the whole job killed if it outlives its time. `--mpi` asserts which MPI
//! that is. What the ranks do inside the job is the library's
//! [`fprev::mpi`].

#[cfg(feature = "mpi")]
use std::ffi::OsString;
#[cfg(feature = "mpi")]
use std::io::Write;
#[cfg(feature = "mpi")]
use std::path::{Path, PathBuf};
#[cfg(feature = "mpi")]
use std::process::{Command, Stdio};
#[cfg(feature = "mpi")]
use std::time::{Duration, Instant};

#[cfg(feature = "mpi")]
use fprev::error::Fault;
#[cfg(feature = "mpi")]
use fprev::mpi::{Implementation, STATUS_VAR};
use fprev::{Error, Result};

use crate::args::MpiArgs;

/// `--mpi` and `--ranks P`: checks that the MPI asked for is the linked
/// one; then, outside an MPI job, runs this command line under the
/// launcher with P ranks and returns its exit status; otherwise `None`:
/// the command runs here (its black box checks the job's size).
#[cfg(feature = "mpi")]
pub(crate) fn run(mpi: &MpiArgs) -> Result<Option<i32>> {
    if let Some(asked) = &mpi.mpi {
        Implementation::require(asked.parse()?)?;
    }
    let Some(ranks) = mpi.ranks else {
        return Ok(None);
    };
    if fprev::mpi::in_job() {
        return Ok(None);
    }
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    relaunch(
        usize::from(ranks),
        &args,
        Duration::from_secs(mpi.mpi_timeout),
    )
    .map(Some)
}

#[cfg(not(feature = "mpi"))]
pub(crate) fn run(mpi: &MpiArgs) -> Result<Option<i32>> {
    if mpi.ranks.is_none() && mpi.mpi.is_none() {
        return Ok(None);
    }
    Err(Error::Input(
        "--ranks and --mpi are for MPI jobs, but this fprev was built without the 'mpi' feature: rebuild \
         with `cargo build --features mpi` (needs libopenmpi-dev), or for MPICH with \
         `MPICC=mpicc.mpich cargo build --features mpi` (needs libmpich-dev)"
            .into(),
    ))
}

/// How the launcher is stopped: SIGTERM, the signal every launcher ends its
/// job on, and 2 s to end its ranks.
#[cfg(feature = "mpi")]
const STOPPING: crate::children::Stopping = crate::children::Stopping {
    signal: Some(libc::SIGTERM),
    grace: Duration::from_secs(2),
};

/// Runs this fprev command line under the linked MPI's launcher with
/// `ranks` ranks, passes rank 0's output on, and returns its exit status.
/// The job is killed (all its processes) if it runs longer than `timeout`;
/// on a signal, the job is stopped and its directory removed before fprev
/// ends with the signal.
#[cfg(feature = "mpi")]
fn relaunch(ranks: usize, args: &[OsString], timeout: Duration) -> Result<i32> {
    let system = |what: &str| {
        let what = what.to_string();
        move |e: std::io::Error| Error::System {
            what,
            source: e.into(),
        }
    };
    let implementation = Implementation::linked();
    let launcher = implementation.launcher();
    let exe = std::env::current_exe().map_err(system(
        "cannot find the fprev binary to run under the MPI launcher",
    ))?;
    // Held first, so that the job and its directory go before a signal
    // ends fprev.
    let held = crate::guard::hold();
    let dir = tempfile::tempdir().map_err(system("cannot make a directory for the MPI job"))?;
    let status = dir.path().join("status");
    let output = dir.path().join("output");
    let launcher_log = std::fs::File::create(dir.path().join("launcher.log"))
        .map_err(system("cannot make the MPI job's log"))?;
    let mut command = Command::new(launcher);
    match implementation {
        Implementation::OpenMpi => {
            command
                .args([
                    "-np",
                    &ranks.to_string(),
                    "--oversubscribe",
                    "--output-filename",
                ])
                .arg(&output)
                // Open MPI refuses to run as root unless told.
                .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        }
        Implementation::Mpich => {
            std::fs::create_dir(&output)
                .map_err(system("cannot make the MPI job's output folder"))?;
            // Hydra passes the environment on to every rank.
            command
                .args(["-n", &ranks.to_string(), "-outfile-pattern"])
                .arg(output.join("rank.%r.stdout"))
                .arg("-errfile-pattern")
                .arg(output.join("rank.%r.stderr"));
        }
    }
    command
        .arg(exe)
        .args(args)
        .env(STATUS_VAR, &status)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // A file, not a pipe: a pipe nobody reads while waiting could fill
        // and stall the launcher.
        .stderr(launcher_log);
    // An algorithm the spec names is the library's to read as the job
    // starts.
    let spec = args
        .iter()
        .filter_map(|a| a.to_str())
        .find_map(|a| a.strip_prefix("mpi:"));
    if let Some((_, Some(algorithm))) = spec.map(fprev::mpi::algorithm::split).transpose()? {
        command.envs(algorithm.env());
    }
    let mut job = crate::children::spawn(&mut command, STOPPING).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::Input(format!(
            "{launcher} is not installed: --ranks starts an MPI job with it (this fprev links \
             {implementation}; Debian: apt-get install {}), or run fprev under your own launcher",
            implementation.package()
        )),
        _ => Error::Input(format!("cannot start {launcher}: {e}")),
    })?;
    let started = Instant::now();
    // Rank 0's output, passed on as it comes, as if it had run alone: a
    // long job shows its progress.
    let mut relay = Relay::default();
    let mut polls = 0u32;
    let exit = loop {
        if let Some(exit) = job
            .try_wait()
            .map_err(system("cannot wait for the MPI launcher"))?
        {
            break exit;
        }
        if held.signal().is_some() {
            // The job and its directory go before fprev ends with the
            // signal.
            drop(job);
            drop(dir);
            held.end();
        }
        polls += 1;
        if polls.is_multiple_of(10)
            && let Some(files) = rank_zero(implementation, &output)
        {
            relay.forward(&files);
        }
        if started.elapsed() > timeout {
            drop(job);
            return Err(Error::BlackBox(Fault::MpiTimeout {
                seconds: timeout.as_secs(),
            }));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let launcher_said =
        std::fs::read_to_string(dir.path().join("launcher.log")).unwrap_or_default();
    let rank0 = rank_zero(implementation, &output);
    if let Some(files) = &rank0 {
        relay.forward(files);
    }
    match std::fs::read_to_string(&status)
        .ok()
        .and_then(|s| s.trim().parse().ok())
    {
        Some(_) if rank0.is_none() => Err(Error::BlackBox(Fault::MpiNoOutput { output, launcher })),
        Some(code) => Ok(code),
        None => Err(Error::BlackBox(Fault::MpiFailed {
            launcher,
            exit,
            said: launcher_said
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('-') && !l.starts_with('='))
                .map(str::to_string),
        })),
    }
}

/// Rank 0's stdout and stderr files in the job's `output` folder, where
/// the launcher writes them; `None` where they cannot be found.
#[cfg(feature = "mpi")]
fn rank_zero(implementation: Implementation, output: &Path) -> Option<[PathBuf; 2]> {
    match implementation {
        Implementation::OpenMpi => {
            let rank0 = open_mpi_rank_zero(&output.join("1"))?;
            Some([rank0.join("stdout"), rank0.join("stderr")])
        }
        // Hydra makes a rank's file at its first output: none is none.
        Implementation::Mpich => {
            Some(["stdout", "stderr"].map(|f| output.join(format!("rank.0.{f}"))))
        }
    }
}

/// Rank 0's folder of an Open MPI `--output-filename` job: `rank.0`, or
/// `rank.00` and so on, as Open MPI pads rank numbers to the job's widest.
#[cfg(feature = "mpi")]
fn open_mpi_rank_zero(job: &Path) -> Option<PathBuf> {
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

/// How much of rank 0's stdout and stderr files has been passed on.
#[cfg(feature = "mpi")]
#[derive(Default)]
struct Relay {
    passed: [u64; 2],
}

#[cfg(feature = "mpi")]
impl Relay {
    /// Passes on what rank 0 wrote to `files` (its stdout and stderr)
    /// since the last call: stderr first, since a command's notes and
    /// progress come before the results it prints last.
    fn forward(&mut self, files: &[PathBuf; 2]) {
        use std::io::{Read, Seek, SeekFrom};
        let mut outs: [&mut dyn Write; 2] = [&mut std::io::stdout(), &mut std::io::stderr()];
        for k in [1, 0] {
            let (path, passed, to) = (&files[k], &mut self.passed[k], &mut outs[k]);
            let mut new = Vec::new();
            let read = std::fs::File::open(path).and_then(|mut f| {
                f.seek(SeekFrom::Start(*passed))?;
                f.read_to_end(&mut new)
            });
            if read.is_ok() && !new.is_empty() {
                *passed += new.len() as u64;
                let _ = to.write_all(&new);
                let _ = to.flush();
            }
        }
    }
}
