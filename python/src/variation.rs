//! `fprev.testing.assert_deterministic`: whether a callable's answer to one
//! input changes from call to call, and by how much.

use fprev::probe::python::Described;
use pyo3::prelude::*;

use crate::black_box::{format, probe};
use crate::errors::to_py;

/// Sums each of 8 random inputs `runs` times with `call` and compares the
/// bits: `None` when every call agreed, else what varied (its spread).
#[pyfunction]
#[pyo3(signature = (call, n, dtype, label, runs, rows=None))]
pub(crate) fn variation(
    py: Python<'_>,
    call: &Bound<'_, PyAny>,
    n: usize,
    dtype: &str,
    label: &str,
    runs: usize,
    rows: Option<usize>,
) -> PyResult<Option<String>> {
    let described = Described {
        rows,
        ..Described::default()
    };
    let mut black_box = probe(py, call, label, n, format(dtype)?, described)?;
    let inputs = fprev::reveal::VARIATION_INPUTS;
    let v = fprev::variation::measure(&mut black_box, inputs, runs, 5).map_err(to_py)?;
    Ok(v.varies().then(|| v.to_string()))
}
