//! `fprev invariance`: reveal one black box under each batch size, output
//! position, thread count and environment, and say what changes its order
//! and what to pin. The library's study runs the cases one process can
//! turn; each combination of environment variables (which a library reads
//! when it loads) is a fresh `fprev invariance` process of its own, whose
//! study this one reads back.

use std::process::Command;

use fprev::error::{Error, Result};
use fprev::invariance::{Knob, MAX_PROCESSES, Setting, Study, settings};
use fprev::probe::ProbeOptions;
use fprev::workflow::{self, Confirm, Request, default_columns};

use super::open_guarded;
use crate::args::{InvarianceArgs, StudyFormat};
use crate::progress::StudyBar;
use crate::write;

/// Runs `fprev invariance`: 0 when every case gave the same confirmed
/// order, 1 when a knob changed it (or a case gave no confirmed order),
/// 3 when a reveal failed.
pub(super) fn run(a: InvarianceArgs) -> Result<i32> {
    let (environment, inside) = knobs(&a)?;
    if environment.is_empty() && inside.is_empty() && !a.one_process {
        return Err(Error::Input(
            "nothing varies: give --batch, --rows, --columns, --threads or --env NAME=V1,V2,…"
                .into(),
        ));
    }
    a.guard.start();
    let study = match environment.is_empty() {
        true => in_process(&a, &inside)?,
        false => {
            let outer = settings(&environment, MAX_PROCESSES)?;
            let mut study = Study::default();
            for (k, s) in outer.iter().enumerate() {
                eprintln!("fprev: [{}/{}] {s}", k + 1, outer.len());
                study.cases.extend(in_child(&a, s)?.nested(s).cases);
            }
            study
        }
    };
    let text = match a.format {
        StudyFormat::Text => fprev_present::invariance::text(&study, &title(&a)),
        StudyFormat::Json => study.to_json() + "\n",
    };
    write::print(text.as_bytes())?;
    let v = study.verdict();
    Ok(match (v.failed > 0, v.invariant) {
        (true, _) => 3,
        (false, true) => 0,
        (false, false) => 1,
    })
}

/// The black box and its size, as the report's heading.
fn title(a: &InvarianceArgs) -> String {
    match a.shape {
        Some([_, n, k]) => format!("{}, K = {k}, N = {n}", a.spec),
        None => format!("{}, n = {}", a.spec, a.n),
    }
}

/// The environment's knobs, and the knobs one process turns (threads,
/// batch, row, column, in that order, the last changing fastest).
fn knobs(a: &InvarianceArgs) -> Result<(Vec<Knob>, Vec<Knob>)> {
    if a.batch.is_some() && a.shape.is_none() {
        return Err(Error::Input(
            "--batch varies M of --shape M,N,K: give --shape (N and K stay)".into(),
        ));
    }
    let mut inside = Vec::new();
    listed(&mut inside, "threads", &a.threads)?;
    if let Some(batch) = &a.batch {
        listed(&mut inside, "batch", &batch.0)?;
    }
    let many_rows = a.batch.is_some() || a.shape.is_some_and(|[m, _, _]| m > 1);
    let rows: Vec<&str> = match (a.rows.is_empty(), many_rows) {
        (false, _) => a.rows.iter().map(String::as_str).collect(),
        (true, true) => vec!["first", "middle", "last"],
        (true, false) => Vec::new(),
    };
    listed(&mut inside, "row", &rows)?;
    let columns = match (&a.shape, a.spec.op()) {
        (_, _) if !a.columns.is_empty() => a.columns.clone(),
        (Some([_, n, _]), Some("gemm")) if *n > 1 => default_columns(*n),
        _ => Vec::new(),
    };
    listed(&mut inside, "column", &columns)?;
    let mut environment = Vec::new();
    for given in &a.env {
        let Some((name, values)) = given.split_once('=') else {
            return Err(Error::Input(format!(
                "--env {given}: give NAME=V1,V2,… (unset for not set)"
            )));
        };
        let values: Vec<&str> = values.split(',').map(str::trim).collect();
        let knob = Knob::new(name.trim(), &values)?;
        if knob.in_process() {
            return Err(Error::Input(format!(
                "--env {}: that name is a knob of its own: give --{} instead",
                knob.name,
                if knob.name == "batch" {
                    "batch"
                } else {
                    "threads, --rows or --columns"
                }
            )));
        }
        environment.push(knob);
    }
    Ok((environment, inside))
}

/// Adds knob `name` of `values`, where a flag gave any.
fn listed<T: ToString>(knobs: &mut Vec<Knob>, name: &str, values: &[T]) -> Result<()> {
    if values.is_empty() {
        return Ok(());
    }
    let values: Vec<String> = values.iter().map(T::to_string).collect();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    knobs.push(Knob::new(name, &values)?);
    Ok(())
}

/// The study of the knobs one process turns, in this process.
fn in_process(a: &InvarianceArgs, knobs: &[Knob]) -> Result<Study> {
    let request = Request {
        probe: ProbeOptions {
            n: Some(a.n),
            shape: a.shape,
            ..a.number.options(None)
        },
        confirm: Confirm {
            trials: a.confirm,
            ..Confirm::default()
        },
        ..Request::default()
    };
    let mut open = |o: &ProbeOptions| open_guarded(&a.spec, o);
    let mut bar = StudyBar::default();
    workflow::invariance(a.spec.as_str(), knobs, &request, &mut open, &mut bar)
}

/// The study of the knobs one process turns, in a fresh process under
/// the environment `s`.
fn in_child(a: &InvarianceArgs, s: &Setting) -> Result<Study> {
    let mut cmd = rerun()?;
    cmd.arg("invariance")
        .arg(a.spec.as_str())
        .args(["-n", &a.n.to_string(), "--format", "json", "--one-process"])
        .args(["--confirm", &a.confirm.to_string()]);
    if let Some(d) = a.number.dtype {
        cmd.args(["--dtype", &d.to_string()]);
    }
    if let Some(acc) = a.number.acc {
        cmd.args(["--acc", &acc.to_string()]);
    }
    if let Some([m, n, k]) = a.shape {
        cmd.args(["--shape", &format!("{m},{n},{k}")]);
    }
    let joined = |values: Vec<String>| values.join(",");
    if !a.threads.is_empty() {
        cmd.args([
            "--threads",
            &joined(a.threads.iter().map(u16::to_string).collect()),
        ]);
    }
    if let Some(batch) = &a.batch {
        cmd.args([
            "--batch",
            &joined(batch.0.iter().map(usize::to_string).collect()),
        ]);
    }
    if !a.rows.is_empty() {
        cmd.args(["--rows", &a.rows.join(",")]);
    }
    if !a.columns.is_empty() {
        cmd.args([
            "--columns",
            &joined(a.columns.iter().map(usize::to_string).collect()),
        ]);
    }
    if let Some(t) = a.guard.timeout {
        cmd.args(["--timeout", &t.to_string()]);
    }
    for (var, value) in &s.0 {
        match value.as_str() {
            "unset" => cmd.env_remove(var),
            v => cmd.env(var, v),
        };
    }
    let out = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| Error::Input(format!("cannot run fprev again for {s}: {e}")))?;
    match out.status.code() {
        Some(0 | 1 | 3) => Study::parse(&String::from_utf8_lossy(&out.stdout)),
        code => Err(Error::BlackBox(format!(
            "the study under {s} ended with exit status {}: see its message above",
            code.map_or("none (a signal)".into(), |c| c.to_string())
        ))),
    }
}

/// The command that runs this `fprev` again: the binary, or where the
/// command line runs inside a Python interpreter (the package's `fprev`
/// console script), that interpreter running it.
fn rerun() -> Result<Command> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::Input(format!("cannot find the fprev binary to rerun: {e}")))?;
    let ours = exe
        .file_name()
        .is_some_and(|f| f.to_string_lossy().starts_with("fprev"));
    let mut cmd = Command::new(&exe);
    if !ours {
        cmd.args([
            "-c",
            "import sys; from fprev._cli import main; sys.argv[0] = 'fprev'; main()",
        ]);
    }
    Ok(cmd)
}
