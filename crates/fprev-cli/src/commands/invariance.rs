//! `fprev invariance`: reveal one black box under each batch size, output
//! position, thread count and environment, and say what changes its order
//! and what to pin. The library's study runs the cases one process can
//! turn; each combination of environment variables (which a library reads
//! when it loads) is a fresh `fprev invariance` process of its own, whose
//! study this one reads back.

use std::process::{Command, Stdio};
use std::time::Duration;

use fprev::Format;
use fprev::Spec;
use fprev::error::{Error, Fault, Kind, Result};
use fprev::invariance::{Knob, Setting, Study};
use fprev::probe::ProbeOptions;
use fprev::workflow::{self, Confirm, Request, Turned, Varied};

use super::open_guarded;
use crate::args::{InvarianceArgs, StudyFormat};
use crate::progress::StudyBar;
use crate::{children, guard, write};

/// How the fresh `fprev` of a setting is stopped: with the signal this one
/// got, so that it ends as this one does, and 5 s to stop the processes
/// and remove the files it started in turn (an MPI job's).
const STOPPING: children::Stopping = children::Stopping {
    signal: None,
    grace: Duration::from_secs(5),
};

/// Runs `fprev invariance`: 0 when every case gave the same confirmed
/// order, 1 when a knob changed it (or a case gave no confirmed order),
/// 3 when a reveal failed.
pub(super) fn run(a: InvarianceArgs) -> Result<i32> {
    let (environment, inside) = knobs(&a)?;
    if environment.is_empty() && inside.is_empty() && !a.one_process && a.processes() == 1 {
        return Err(Error::Input(
            "nothing varies: give --batch, --rows, --columns, --threads, --env NAME=V1,V2,… or \
             --processes P"
                .into(),
        ));
    }
    a.guard.start();
    let study = study(&subject(&a), &inside, &environment)?;
    let text = match a.format {
        StudyFormat::Text => fprev_present::invariance::text(
            &study,
            &fprev_present::invariance::title(a.spec.as_str(), a.n, a.shape()),
        ),
        StudyFormat::Json => fprev_present::invariance::json(&study) + "\n",
    };
    write::print(text.as_bytes())?;
    Ok(exit_code(&study))
}

/// A study's exit status: 3 when a case failed, else 0 when one order
/// held in every case, 1 when not.
pub(super) fn exit_code(study: &Study) -> i32 {
    let v = study.verdict();
    match (v.failed > 0, v.invariant) {
        (true, _) => 3,
        (false, true) => 0,
        (false, false) => 1,
    }
}

impl InvarianceArgs {
    /// `--processes`, or its default: 2 with `--env`, else 1 (a process
    /// studying one environment is 1).
    pub(crate) fn processes(&self) -> usize {
        match self.processes {
            _ if self.one_process => 1,
            Some(p) => p.into(),
            None if self.env.is_empty() => 1,
            None => 2,
        }
    }

    /// `--shape`, or the shape the black box opens with by default (an
    /// `mpi:` vector's elements, which `--rows` and `--batch` turn).
    fn shape(&self) -> Option<[usize; 3]> {
        self.shape.or_else(|| self.spec.default_shape(self.n))
    }
}

/// What `a` studies.
fn subject(a: &InvarianceArgs) -> Subject<'_> {
    Subject {
        spec: &a.spec,
        n: a.n,
        shape: a.shape(),
        dtype: a.number.dtype,
        acc: a.number.acc,
        confirm: a.confirm,
        timeout: a.guard.timeout,
        mpi: a.mpi.ranks.map(|p| (p, a.mpi.mpi_timeout)),
        processes: a.processes(),
    }
}

/// The black box of a study and how it is revealed: what `fprev
/// invariance` and `fprev survey --knobs` ask.
pub(super) struct Subject<'a> {
    /// The black box.
    pub(super) spec: &'a Spec,
    /// Summands (`K` of a shape).
    pub(super) n: usize,
    /// A GEMV's or GEMM's `M,N,K`.
    pub(super) shape: Option<[usize; 3]>,
    /// Its input format, where not the default.
    pub(super) dtype: Option<Format>,
    /// Its accumulator format, where given.
    pub(super) acc: Option<Format>,
    /// Random inputs each tree is replayed on.
    pub(super) confirm: usize,
    /// Seconds a call may run.
    pub(super) timeout: Option<f64>,
    /// The MPI ranks of an `mpi:` black box's job (`--ranks`) and the
    /// seconds it may run (`--mpi-timeout`).
    pub(super) mpi: Option<(u16, u64)>,
    /// Fresh processes each setting of the environment runs in: with
    /// more than one, an order that changes between processes is told
    /// from one a knob changes (1, without an environment: this process).
    pub(super) processes: usize,
}

/// The study of `s`: `inside` turned in this process, or, with an
/// environment or more than one process, in fresh processes of this
/// `fprev` ([`in_child`]) under each combination of `environment`'s
/// values, whose studies this one reads back.
pub(super) fn study(s: &Subject, inside: &[Knob], environment: &[Knob]) -> Result<Study> {
    let varied = Varied {
        inside: inside.to_vec(),
        environment: environment.to_vec(),
        processes: s.processes,
    };
    let mut open = |o: &ProbeOptions| open_guarded(s.spec, o);
    let mut fresh = |environ: &Setting| in_child(s, inside, environ);
    let mut bar = StudyBar::default();
    workflow::study(
        s.spec.as_str(),
        &varied,
        &request(s),
        &mut open,
        &mut fresh,
        &mut bar,
    )
}

/// The environment's knobs, and the knobs one process turns (threads,
/// batch, row, column, in that order, the last changing fastest).
fn knobs(a: &InvarianceArgs) -> Result<(Vec<Knob>, Vec<Knob>)> {
    let turned = Turned {
        threads: a.threads.iter().map(|&t| t.into()).collect(),
        batch: a.batch.as_ref().map(|b| b.0.clone()),
        rows: a.rows.clone(),
        columns: a.columns.clone(),
        offsets: a.offset.clone(),
    };
    let inside = turned.knobs(a.spec.op(), a.shape())?;
    let mut environment = Vec::new();
    for given in &a.env {
        let Some((name, values)) = given.split_once('=') else {
            return Err(Error::Input(format!(
                "--env {given}: give NAME=V1,V2,… (unset for not set)"
            )));
        };
        let values: Vec<&str> = values.split(',').map(str::trim).collect();
        environment.push(Knob::environment(name.trim(), &values)?);
    }
    Ok((environment, inside))
}

/// How each case of a study of `s` is revealed.
pub(super) fn request(s: &Subject) -> Request {
    Request {
        probe: ProbeOptions {
            n: Some(s.n),
            shape: s.shape,
            format: s.dtype.unwrap_or_default(),
            accumulator: s.acc,
            ranks: s.mpi.map(|(p, _)| usize::from(p)),
            ..ProbeOptions::default()
        },
        confirm: Confirm {
            trials: s.confirm,
            ..Confirm::default()
        },
        ..Request::default()
    }
}

/// The study of the knobs one process turns (`inside`), in a fresh
/// process under the environment `setting`.
fn in_child(s: &Subject, inside: &[Knob], setting: &Setting) -> Result<Study> {
    let mut cmd = rerun()?;
    cmd.arg("invariance")
        .arg(s.spec.as_str())
        .args(["-n", &s.n.to_string(), "--format", "json", "--one-process"])
        .args(["--confirm", &s.confirm.to_string()]);
    if let Some(d) = s.dtype {
        cmd.args(["--dtype", &d.to_string()]);
    }
    if let Some(acc) = s.acc {
        cmd.args(["--acc", &acc.to_string()]);
    }
    if let Some([m, n, k]) = s.shape {
        cmd.args(["--shape", &format!("{m},{n},{k}")]);
    }
    for knob in inside {
        let flag = match knob.name.as_str() {
            "threads" => "--threads",
            "batch" => "--batch",
            "row" => "--rows",
            "offset" => "--offset",
            _ => "--columns",
        };
        cmd.args([flag, &knob.values.join(",")]);
    }
    if let Some(t) = s.timeout {
        cmd.args(["--timeout", &t.to_string()]);
    }
    if let Some((ranks, timeout)) = s.mpi {
        cmd.args(["--ranks", &ranks.to_string()])
            .args(["--mpi-timeout", &timeout.to_string()]);
    }
    for (var, value) in &setting.0 {
        match value.as_str() {
            "unset" => cmd.env_remove(var),
            v => cmd.env(var, v),
        };
    }
    // Held first, so that the child is stopped before a signal ends fprev.
    let held = guard::hold();
    let mut child = children::spawn(
        cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()),
        STOPPING,
    )
    .map_err(|e| Error::Input(format!("cannot run fprev again for {setting}: {e}")))?;
    // Read as it comes, so that a full pipe never stalls the child.
    let mut stdout = child.stdout().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut out).map(|_| out)
    });
    let cannot_wait = |e: std::io::Error| Error::System {
        what: format!("cannot wait for the study under {setting}"),
        source: e.into(),
    };
    let Some(status) = child.wait(&held).map_err(cannot_wait)? else {
        drop(child);
        held.end();
    };
    let out = reader
        .join()
        .expect("the reader does not panic")
        .map_err(cannot_wait)?;
    match status.code() {
        Some(0 | 1 | 3) if !out.is_empty() => Study::parse(&String::from_utf8_lossy(&out)),
        code => {
            let ended = Fault::Process {
                what: format!("the study under {setting}"),
                status: code,
            };
            // Its error's kind carries through: bad input stays bad input.
            Err(match code.and_then(crate::errors::kind_of) {
                Some(Kind::Input) => Error::Input(ended.to_string()),
                Some(Kind::Disagree) => Error::Disagree(ended.to_string()),
                _ => Error::BlackBox(ended),
            })
        }
    }
}

/// The command that runs this `fprev` again: the binary, or where the
/// command line runs inside a Python interpreter (the package's `fprev`
/// console script), that interpreter (as `sys.executable` names it, so
/// that a virtual environment's packages come too) running it.
pub(super) fn rerun() -> Result<Command> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::Input(format!("cannot find the fprev binary to rerun: {e}")))?;
    let ours = exe
        .file_name()
        .is_some_and(|f| f.to_string_lossy().starts_with("fprev"));
    if ours {
        return Ok(Command::new(&exe));
    }
    #[cfg(feature = "python")]
    let exe = fprev::probe::python::host_interpreter().unwrap_or(exe);
    let mut cmd = Command::new(&exe);
    cmd.args([
        "-c",
        "import sys; from fprev._cli import main; sys.argv[0] = 'fprev'; main()",
    ]);
    Ok(cmd)
}
