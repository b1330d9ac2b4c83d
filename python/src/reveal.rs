//! `fprev.reveal`: the order of a Python callable, its arithmetic and
//! their confirmation, with a progress line for long reveals.

use std::time::{Duration, Instant};

use fprev::Error;
use fprev::check::{Confirmation, check_row};
use fprev::document::TreeDocument;
use fprev::probe::python::Described;
use fprev::reveal::arithmetic::{ArithOptions, confirm_arithmetic};
use fprev::reveal::{Algorithm, Observer, Options, Progress, Silent};
use pyo3::exceptions::{PyRuntimeWarning, PyValueError};
use pyo3::prelude::*;

use crate::black_box::{format, probe};
use crate::errors::{UnconfirmedWarning, from_probe};
use crate::tree::Tree;

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

impl Observer for ProgressLine {
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

#[pyfunction]
#[pyo3(signature = (call, n, dtype, algo, label, rows=None, may_fuse=None, accumulator=None, pack=true, progress=false, confirm=fprev::check::CONFIRM_TRIALS, arith=true))]
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
    pack: bool,
    progress: bool,
    confirm: usize,
    arith: bool,
) -> PyResult<Tree> {
    let format = format(dtype)?;
    let algorithm: Algorithm = algo.parse().map_err(PyValueError::new_err)?;
    let described = Described {
        rows,
        accumulator: accumulator.map(self::format).transpose()?,
        may_fuse: may_fuse.unwrap_or(true),
    };
    let mut probe = probe(py, call, label, n, format, described)?;
    let opts = Options {
        algorithm,
        pack,
        ..Options::default()
    };
    let mut line = ProgressLine {
        started: Instant::now(),
        drawn: None,
        width: 0,
    };
    let observer: &mut dyn Observer = if progress { &mut line } else { &mut Silent };
    let revelation = fprev::reveal::reveal_observed(&mut probe, &opts, observer)
        .map_err(|e| from_probe(&mut probe, e))?;
    for note in &revelation.notes {
        PyErr::warn(
            py,
            &py.get_type::<PyRuntimeWarning>(),
            &std::ffi::CString::new(note.as_str()).unwrap_or_default(),
            2,
        )?;
    }
    let mut stats = revelation.stats;
    let mut arithmetic = None;
    let confirmation = if confirm > 0 {
        let mut why_not = String::new();
        let report = if arith {
            let options = ArithOptions {
                trials: confirm,
                ..ArithOptions::default()
            };
            let confirmed = confirm_arithmetic(&mut probe, &revelation.tree, None, &options, true)
                .map_err(|e| from_probe(&mut probe, e))?;
            let report = confirmed.report;
            match confirmed.arithmetic {
                Some(Ok(found)) => {
                    stats.arithmetic_calls = found.calls;
                    arithmetic = Some(found.model);
                }
                Some(Err(Error::BlackBox(why))) => why_not = format!(" ({why})"),
                Some(Err(e)) => return Err(from_probe(&mut probe, e)),
                None => {}
            }
            report
        } else {
            check_row(&revelation.tree, &mut probe, confirm, 0, 0)
                .map_err(|e| from_probe(&mut probe, e))?
        };
        if let Some(m) = &report.mismatch {
            let message = format!(
                "{label}: the order is revealed, but a replay of it in plain rounded additions \
                 ({} or wider) gave {:e} where {label} gave {:e} on random input {} ({}): it does \
                 not add as a tree of plain additions{why_not}; tree.confirmed is False",
                fprev::Probe::accumulator(&probe),
                m.replayed,
                m.black_box,
                m.trial + 1,
                m.kind
            );
            PyErr::warn(
                py,
                &py.get_type::<UnconfirmedWarning>(),
                &std::ffi::CString::new(message).unwrap_or_default(),
                2,
            )?;
        }
        Some(Confirmation::from(&report))
    } else {
        None
    };
    Ok(Tree {
        doc: TreeDocument {
            tree: revelation.tree,
            dtype: Some(format),
            probe: Some(label.to_string()),
            stats: Some(stats),
            confirmation,
            arithmetic,
            inferred: None,
        },
    })
}
