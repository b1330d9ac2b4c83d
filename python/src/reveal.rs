//! `fprev.reveal`: the order of a Python callable, its arithmetic and
//! their confirmation (the library's reveal workflow), with a progress line
//! for long reveals and the workflow's notes as Python warnings.

use std::time::{Duration, Instant};

use fprev::probe::ProbeOptions;
use fprev::reveal::{Algorithm, Options, Progress, Watcher};
use fprev::workflow::{self, Confirm, NoCache, Note, Outcome, Request, Revealing, Seek};
use pyo3::exceptions::{PyRuntimeWarning, PyValueError};
use pyo3::prelude::*;

use crate::black_box::{described, format, opener, probe};
use crate::errors::{OrderIndependentError, UnconfirmedWarning, VariesError, line, to_py};
use crate::tree::Tree;
use fprev_present::note::{Said, varies_between_processes};

/// A one-line progress report on Python's `sys.stderr` (so that Jupyter
/// shows it under the cell), redrawn in place at most ten times a second
/// once a reveal has run for a second (most end sooner), and erased at the
/// end.
struct ProgressLine {
    started: Instant,
    drawn: Option<Instant>,
    width: usize,
}

impl ProgressLine {
    const DELAY: Duration = Duration::from_secs(1);
    const EVERY: Duration = Duration::from_millis(100);

    fn draw(text: &str) {
        Python::attach(|py| {
            if let Ok(stderr) = py.import("sys").and_then(|sys| sys.getattr("stderr")) {
                let _ = stderr.call_method1("write", (text,));
                let _ = stderr.call_method0("flush");
            }
        });
    }
}

impl Watcher for ProgressLine {
    fn started(&mut self, _n: usize) {
        self.started = Instant::now();
    }

    fn placed(&mut self, p: &Progress) {
        let now = Instant::now();
        let recent = self.drawn.is_some_and(|d| now - d < Self::EVERY);
        if now - self.started < Self::DELAY || recent {
            return;
        }
        self.drawn = Some(now);
        let line = format!(
            "fprev: revealing: {}/{} summands placed, {} queries in {} calls",
            p.placed, p.n, p.queries, p.calls
        );
        self.width = self.width.max(line.len());
        Self::draw(&format!("\r{line:<w$}", w = self.width));
    }

    fn finished(&mut self) {
        if self.drawn.is_some() {
            Self::draw(&format!("\r{:w$}\r", "", w = self.width));
        }
    }
}

/// The Python side of a workflow: the progress line, and the notes kept to
/// be warned about once the workflow returns.
struct Watch {
    line: Option<ProgressLine>,
    notes: Vec<Note>,
}

impl Watcher for Watch {
    fn started(&mut self, n: usize) {
        if let Some(line) = &mut self.line {
            line.started(n);
        }
    }

    fn placed(&mut self, p: &Progress) {
        if let Some(line) = &mut self.line {
            line.placed(p);
        }
    }

    fn finished(&mut self) {
        if let Some(line) = &mut self.line {
            line.finished();
        }
    }
}

impl workflow::Observer for Watch {
    fn note(&mut self, note: Note) {
        self.notes.push(note);
    }
}

impl Watch {
    /// Warns about the notes a Python user needs: the engine's findings,
    /// and an order its replay does not confirm (with why no model of its
    /// nodes does).
    fn warn(self, py: Python<'_>, label: &str) -> PyResult<()> {
        let why_not = self.notes.iter().find_map(|n| match n {
            Note::NoArithmetic {
                why,
                worth_saying: true,
            } => Some(format!(" ({})", line(why))),
            _ => None,
        });
        for note in &self.notes {
            let (kind, message) = match note {
                Note::Engine(_) => (py.get_type::<PyRuntimeWarning>(), Said(note).to_string()),
                Note::ProcessesNotCompared => (
                    py.get_type::<PyRuntimeWarning>(),
                    format!("{label}: {}", Said(note)),
                ),
                Note::Unconfirmed { .. } => (
                    py.get_type::<UnconfirmedWarning>(),
                    format!(
                        "{}{}; tree.confirmed is False",
                        Said(note),
                        why_not.as_deref().unwrap_or("")
                    ),
                ),
                _ => continue,
            };
            PyErr::warn(
                py,
                &kind,
                &std::ffi::CString::new(message).unwrap_or_default(),
                2,
            )?;
        }
        Ok(())
    }
}

#[pyfunction]
#[pyo3(signature = (call, n, dtype, algo, label, rows=None, may_fuse=None, accumulator=None, offset=None, pack=true, progress=false, confirm=fprev::check::CONFIRM_TRIALS, arith=true, runs=0, skeleton=true, skeleton_seconds=None, processes=None, fresh=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn reveal(
    py: Python<'_>,
    call: &Bound<'_, PyAny>,
    n: usize,
    dtype: &str,
    algo: &str,
    label: &str,
    rows: Option<usize>,
    may_fuse: Option<bool>,
    accumulator: Option<&str>,
    offset: Option<&str>,
    pack: bool,
    progress: bool,
    confirm: usize,
    arith: bool,
    runs: usize,
    skeleton: bool,
    skeleton_seconds: Option<u64>,
    processes: Option<usize>,
    fresh: Option<&Bound<'_, PyAny>>,
) -> PyResult<Tree> {
    let format = format(dtype)?;
    let algorithm: Algorithm = algo.parse().map_err(PyValueError::new_err)?;
    let described = described(rows, may_fuse, accumulator, offset)?;
    let first = probe(py, call, label, n, format, described)?;
    let mut open = opener(py, call, label, format, described, Some(first));
    // The answers of a fresh process: `fresh()` runs one (fprev._child).
    let mut fresh_answers = fresh.map(|fresh| {
        move || -> fprev::Result<Vec<u64>> {
            fresh
                .call0()
                .and_then(|a| a.extract::<Vec<u64>>())
                .map_err(|e| fprev::Error::Raised {
                    error: Box::new(fprev::Error::Input(e.to_string())),
                    raised: Box::new(e),
                })
        }
    });
    let request = Request {
        probe: ProbeOptions {
            n: Some(n),
            format,
            offset: described.offset,
            ..ProbeOptions::default()
        },
        engine: Options {
            algorithm,
            pack,
            ..Options::default()
        },
        confirm: Confirm {
            trials: confirm,
            arithmetic: if arith { Seek::Always } else { Seek::Never },
            every_node: false,
            ..Confirm::default()
        },
        infer: None,
        runs,
        skeleton: skeleton.then(|| {
            skeleton_seconds.map_or(
                fprev::workflow::SKELETON_TIME,
                std::time::Duration::from_secs,
            )
        }),
        nearby: Vec::new(),
        afresh: false,
    };
    let mut watch = Watch {
        line: progress.then(|| ProgressLine {
            started: Instant::now(),
            drawn: None,
            width: 0,
        }),
        notes: Vec::new(),
    };
    let revealing = workflow::reveal(
        label,
        &request,
        &mut open,
        &NoCache,
        processes
            .zip(fresh_answers.as_mut())
            .map(|(p, f)| (p, f as &mut workflow::Fresh)),
        &mut watch,
    )
    .map_err(to_py)?;
    watch.warn(py, label)?;
    let outcome = match revealing {
        Revealing::Outcome(_, outcome) => outcome,
        Revealing::VariesBetweenProcesses(seen) => {
            let e = VariesError::new_err(format!(
                "{label} varies: {}",
                varies_between_processes(&seen)
            ));
            e.value(py).setattr("skeleton", py.None())?;
            return Err(e);
        }
    };
    match outcome {
        Outcome::Revealed(r) => Ok(Tree { doc: r.document }),
        Outcome::OrderIndependent(why) => Err(OrderIndependentError::new_err(
            fprev_present::note::order_independent(&why),
        )),
        Outcome::Varies(v) => Err(varies_error(py, v, label, format)),
    }
}

/// `VariesError` saying what varied and what stays fixed, with the
/// skeleton as a `Tree` (its `skeleton` attribute; `None` where none was
/// found).
pub(crate) fn varies_error(
    py: Python<'_>,
    v: fprev::variation::Variation,
    label: &str,
    format: fprev::Format,
) -> PyErr {
    let mut message = format!(
        "{label} varies from call to call: {}",
        fprev_present::note::variation(&v)
    );
    for line in v.skeleton.iter().flat_map(|s| s.describe()) {
        message += &format!("; skeleton: {line}");
    }
    let skeleton =
        fprev::document::TreeDocument::of_skeleton(v, label, format).map(|doc| Tree { doc });
    let e = VariesError::new_err(message);
    let set = skeleton
        .map(|t| Py::new(py, t))
        .transpose()
        .and_then(|t| e.value(py).setattr("skeleton", t));
    match set {
        Ok(()) => e,
        Err(failed) => failed,
    }
}
