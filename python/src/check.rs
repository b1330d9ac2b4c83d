//! `fprev.check` and `fprev.Check`: a tree replayed against a black box
//! bit for bit; `same_bits`: two black boxes against each other.

use fprev::Format;
use fprev::equivalence::same_bits;
use fprev::probe::ProbeOptions;
use fprev::workflow;
use fprev_present::check::summary;
use pyo3::prelude::*;

use fprev::probe::python::Described;

use crate::black_box::{described, format, opener, probe};
use crate::errors::to_py;
use crate::tree::Tree;

/// How a check ended; true when the tree reproduced every trial.
#[pyclass(name = "Check", module = "fprev", frozen, get_all)]
pub(crate) struct Check {
    ok: bool,
    trials: usize,
    accumulator: Option<&'static str>,
    message: String,
    /// The first trial (0-based) that did not match.
    mismatch: Option<usize>,
    /// Its input, and what the replay and the black box gave.
    input: Option<Vec<f64>>,
    replayed: Option<f64>,
    returned: Option<f64>,
}

#[pymethods]
impl Check {
    fn __bool__(&self) -> bool {
        self.ok
    }

    fn __repr__(&self) -> String {
        format!("<fprev.Check {}>", self.message)
    }
}

/// `None` when `call_a` and `call_b` return the same bits on `trials`
/// random inputs of `n` values of `dtype`, else what differed.
#[pyfunction]
#[pyo3(signature = (call_a, call_b, n, dtype, label_a, label_b, trials, seed=0))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn same_bits_(
    py: Python<'_>,
    call_a: &Bound<'_, PyAny>,
    call_b: &Bound<'_, PyAny>,
    n: usize,
    dtype: &str,
    label_a: &str,
    label_b: &str,
    trials: usize,
    seed: u64,
) -> PyResult<Option<String>> {
    let format = format(dtype)?;
    let mut a = probe(py, call_a, label_a, n, format, Described::default())?;
    let mut b = probe(py, call_b, label_b, n, format, Described::default())?;
    let outcome = same_bits(&mut a, &mut b, trials, seed).map_err(to_py)?;
    Ok(outcome.err().map(|mut d| {
        d.left_name = label_a.to_string();
        d.right_name = label_b.to_string();
        d.to_string()
    }))
}

#[pyfunction]
#[pyo3(signature = (tree, call, trials, dtype, label, rows=None, row=0, seed=0, offset=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn check(
    py: Python<'_>,
    tree: &Tree,
    call: &Bound<'_, PyAny>,
    trials: usize,
    dtype: Option<&str>,
    label: &str,
    rows: Option<usize>,
    row: usize,
    seed: u64,
    offset: Option<&str>,
) -> PyResult<Check> {
    let format = match dtype {
        Some(d) => self::format(d)?,
        None => tree.doc.dtype.unwrap_or(Format::F32),
    };
    let given = described(rows, None, None, offset)?;
    let checked = workflow::check::check(
        &tree.doc,
        "the tree",
        ProbeOptions {
            format,
            offset: given.offset,
            ..ProbeOptions::default()
        },
        true,
        trials,
        seed,
        row,
        // Opened where the workflow says (the file's offset, unless given).
        &mut opener(py, call, label, format, given, None),
    )
    .map_err(to_py)?;
    let report = checked.report;
    let declared = checked.declared;
    Ok(Check {
        ok: report.mismatch.is_none(),
        trials: report.trials,
        accumulator: report.accumulator.map(Format::name),
        message: summary(&report, "the tree", label, format, declared),
        mismatch: report.mismatch.as_ref().map(|m| m.trial),
        replayed: report.mismatch.as_ref().map(|m| m.replayed),
        returned: report.mismatch.as_ref().map(|m| m.black_box),
        input: report.mismatch.map(|m| m.input),
    })
}
