//! The Python exceptions of the crate's errors.

use fprev::Error;
use fprev::error::{Kind, Report};
use fprev::probe::python::PythonProbe;
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

/// The Python exception for an error of the crate.
pub(crate) fn to_py(e: Error) -> PyErr {
    let message = Report(&e).to_string();
    match (e.kind(), e) {
        (_, Error::File { source, .. }) => PyOSError::new_err((source.raw_os_error(), message)),
        (Kind::Input, _) => PyValueError::new_err(message),
        (Kind::BlackBox, _) => BlackBoxError::new_err(message),
    }
}

/// The error of a call that ran the black box: what the callable raised
/// (with its traceback), else the crate's error.
pub(crate) fn from_probe(probe: &mut PythonProbe, e: Error) -> PyErr {
    probe.take_exception().unwrap_or_else(|| to_py(e))
}
