//! A Python callable opened as a black box.

use fprev::Format;
use fprev::probe::ProbeOptions;
use fprev::probe::python::{Described, PythonProbe};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::to_py;

pub(crate) fn format(name: &str) -> PyResult<Format> {
    name.parse().map_err(PyValueError::new_err)
}

/// What a Python caller says of its callable beyond the callable: the rows
/// it sums a call, whether it may fuse (default: it may), its
/// accumulator's format name, and where its input array starts past a
/// 64-byte boundary (`"1B"` bytes, `"1"` elements; bounded as the command
/// line's `--offset`, else `ValueError`).
pub(crate) fn described(
    rows: Option<usize>,
    may_fuse: Option<bool>,
    accumulator: Option<&str>,
    offset: Option<&str>,
) -> PyResult<Described> {
    Ok(Described {
        rows,
        accumulator: accumulator.map(format).transpose()?,
        may_fuse: may_fuse.unwrap_or(true),
        offset: offset.map(str::parse).transpose().map_err(to_py)?,
        ..Described::default()
    })
}

pub(crate) fn probe(
    py: Python<'_>,
    call: &Bound<'_, PyAny>,
    label: &str,
    n: usize,
    format: Format,
    described: Described,
) -> PyResult<PythonProbe> {
    if !call.is_callable() {
        return Err(PyTypeError::new_err(format!(
            "expected a callable that sums a NumPy array, got {}",
            call.get_type().name()?
        )));
    }
    if n == 0 {
        return Err(PyValueError::new_err("n must be at least 1"));
    }
    fprev::memory::check_replay(n).map_err(to_py)?;
    PythonProbe::from_callable(py, call, label, n, format, described).map_err(to_py)
}

/// Opens `call` again at the size (and offset, where one is given) of each
/// options it is given: the reveals an explanation or a prediction rests
/// on. The first opening hands back `first`, where one was opened
/// already (so that a bad callable or size raised its own `TypeError` or
/// `ValueError` before the workflow started). What the callable raises
/// travels in the error, to be raised in turn.
pub(crate) fn opener<'a, 'py>(
    py: Python<'py>,
    call: &'a Bound<'py, PyAny>,
    label: &'a str,
    format: Format,
    described: Described,
    mut first: Option<PythonProbe>,
) -> impl FnMut(&ProbeOptions) -> fprev::Result<Box<dyn fprev::Probe>> + 'a
where
    'py: 'a,
{
    move |o| {
        if let Some(opened) = first.take() {
            return Ok(Box::new(opened));
        }
        let n = o.n.unwrap_or(fprev::probe::DEFAULT_N);
        let at = Described {
            offset: o.offset.or(described.offset),
            ..described
        };
        let opened = probe(py, call, label, n, format, at).map_err(|e| fprev::Error::Raised {
            error: Box::new(fprev::Error::Input(e.to_string())),
            raised: Box::new(e),
        })?;
        Ok(Box::new(opened))
    }
}
