//! The Python exceptions of the crate's errors, each remedy worded in the
//! keyword arguments that carry it out (`give a smaller n`,
//! `give algo="fprev"`).

use fprev::Error;
use fprev::error::{Kind, Param, Remedy, report_with};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyOSError, PyRuntimeError, PyRuntimeWarning, PyValueError};
use pyo3::prelude::*;

create_exception!(
    fprev,
    BlackBoxError,
    PyRuntimeError,
    "The black box broke an assumption of the method (NaN, a fraction, an inconsistent answer): no tree is returned."
);
create_exception!(
    fprev,
    UnconfirmedWarning,
    PyRuntimeWarning,
    "The order is revealed, but a replay of it does not reproduce the black box's bits: it does not add as a tree of plain rounded additions."
);
create_exception!(
    fprev,
    OrderIndependentError,
    PyException,
    "The black box gives the same bits in every order (an exact or pre-rounded sum): no summation tree describes it."
);

create_exception!(
    fprev,
    VariesError,
    PyException,
    "The black box answers the same input differently on different calls (another order each time): no one summation tree describes it."
);

/// The Python exception for an error of the crate: the one the black box
/// raised, where it raised one.
pub(crate) fn to_py(e: Error) -> PyErr {
    let message = line(&e);
    let (kind, os_error) = match &e {
        Error::File { source, .. } => (e.kind(), Some(source.raw_os_error())),
        _ => (e.kind(), None),
    };
    if let Some(Ok(raised)) = e.raised().map(|raised| raised.downcast::<PyErr>()) {
        return *raised;
    }
    match (kind, os_error) {
        (_, Some(errno)) => PyOSError::new_err((errno, message)),
        (Kind::Input, None) => PyValueError::new_err(message),
        (Kind::BlackBox | Kind::Disagree, None) => BlackBoxError::new_err(message),
    }
}

/// `e` and every cause below it on one line, remedies in keyword
/// arguments, cut to a readable length.
pub(crate) fn line(e: &Error) -> String {
    fprev::error::one_line(&report_with(e, &words))
}

/// The keyword argument of the Python API that gives a setting, where
/// one does.
fn keyword(setting: Param) -> Option<&'static str> {
    match setting {
        Param::N => Some("n"),
        Param::Algorithm => Some("algo"),
        Param::Dtype => Some("dtype"),
        Param::Accumulator => Some("accumulator"),
        Param::Threads => Some("threads"),
        Param::Confirm => Some("confirm"),
        Param::Trials => Some("trials"),
        Param::Runs => Some("runs"),
        Param::Seed => Some("seed"),
        Param::Row => Some("row"),
        Param::Column => Some("columns"),
        Param::Shape => Some("shape"),
        Param::Batch => Some("batch"),
        Param::Processes => Some("processes"),
        Param::SkeletonTime => Some("skeleton"),
        Param::Sizes | Param::Ranks | Param::OutputFormat => None,
    }
}

/// A remedy in keyword arguments (`give algo="fprev"`); in plain words
/// where the Python API has no keyword for a setting it names.
fn words(remedy: &Remedy) -> String {
    let named = |s: &Param| keyword(*s).ok_or(());
    let worded = match remedy {
        Remedy::Smaller(s) => named(s).map(|k| format!("give a smaller {k}")),
        Remedy::Give(Param::OutputFormat, _) => Ok("Tree.to_dot() gives the source".into()),
        Remedy::Give(s, values) => named(s).map(|k| {
            let given: Vec<String> = values.iter().map(|v| format!("{k}=\"{v}\"")).collect();
            format!("give {}", given.join(" or "))
        }),
        Remedy::AtLeast(s, least) => named(s).map(|k| format!("give {k}={least} or more")),
        Remedy::Wider(settings) => settings
            .iter()
            .map(named)
            .collect::<Result<Vec<_>, _>>()
            .map(|ks| format!("use a wider {}", ks.join(" or "))),
        Remedy::Drop(s) => named(s).map(|k| format!("leave out {k}")),
        Remedy::AppliesTo(s, what) => named(s).map(|k| format!("{k} applies to {what}")),
        Remedy::Or(remedy, other) => Ok(format!("{}, or {other}", words(remedy))),
        Remedy::Within(bound) => named(&bound.setting).map(|k| format!("give {}", bound.range(k))),
        Remedy::AskVaries => Ok("fprev.reveal(fn, runs=R) asks whether fn varies".into()),
    };
    worded.unwrap_or_else(|()| remedy.to_string())
}

/// `value` (a Python int), where it is within the bound the library sets
/// for `bound` (`"runs"`, `"n"`, …), else a `ValueError` whose remedy is
/// worded in `name`, the keyword (or words) the value was given as: never
/// an `OverflowError`, whatever its size or sign.
#[pyfunction]
pub(crate) fn bounded(bound: &str, name: &str, value: &Bound<'_, PyAny>) -> PyResult<u64> {
    use fprev::bounds::*;
    let b = match bound {
        "n" => N,
        "size" => SIZE,
        "shape" => SHAPE,
        "confirm" => CONFIRM,
        "trials" => TRIALS,
        "emit trials" => EMIT_TRIALS,
        "runs" => RUNS,
        "skeleton seconds" => SKELETON_SECONDS,
        "threads" => THREADS,
        "rows" | "batch" => BATCH,
        "row" => ROW,
        "column" => COLUMN,
        "seed" => SEED,
        "processes" => PROCESSES,
        "reveal processes" => REVEAL_PROCESSES,
        other => {
            return Err(PyValueError::new_err(format!(
                "no bound is named {other:?}"
            )));
        }
    };
    let words = |r: &Remedy| match r {
        Remedy::Within(b) => format!("give {}", b.range(name)),
        other => words(other),
    };
    let refused = |e: Error| PyValueError::new_err(report_with(&e, &words));
    match value.extract::<u128>() {
        Ok(v) => b.check(v).map_err(refused),
        Err(_) => Err(refused(b.refuse(&value.str()?.to_string()))),
    }
}
