//! `fprev.testing.assert_deterministic`: whether a callable's answer to one
//! input changes from call to call, by how much, and what stays fixed.

use fprev::probe::python::Described;
use fprev::reveal::Silent;
use pyo3::prelude::*;

use crate::black_box::{format, probe};
use crate::errors::to_py;
use fprev::probe::ProbeOptions;

/// Sums each of 8 random inputs `runs` times with `call` and compares the
/// bits: `None` when every call agreed, else what varied (its spread) and,
/// with `skeleton`, the subtrees every call shares (each masked query
/// asked twice, `runs` times in a part where answers disagree, for at most
/// [`SKELETON_TIME`](fprev::workflow::SKELETON_TIME)), one line each.
#[pyfunction]
#[pyo3(signature = (call, n, dtype, label, runs, rows=None, skeleton=true))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn variation(
    py: Python<'_>,
    call: &Bound<'_, PyAny>,
    n: usize,
    dtype: &str,
    label: &str,
    runs: usize,
    rows: Option<usize>,
    skeleton: bool,
) -> PyResult<Option<Vec<String>>> {
    let described = Described {
        rows,
        ..Described::default()
    };
    let mut black_box = probe(py, call, label, n, format(dtype)?, described)?;
    let inputs = fprev::reveal::VARIATION_INPUTS;
    let v = fprev::variation::measure(&mut black_box, inputs, runs, 5).map_err(to_py)?;
    if !v.varies() {
        return Ok(None);
    }
    let within = skeleton.then_some(fprev::workflow::SKELETON_TIME);
    let v = fprev::workflow::characterise(&mut black_box, v, runs, within, &mut Silent)
        .map_err(to_py)?;
    let mut said = vec![fprev_present::note::variation(&v)];
    if let Some(s) = &v.skeleton {
        said.extend(
            s.describe()
                .into_iter()
                .map(|line| format!("skeleton: {line}")),
        );
        said.push(format!(
            "fixed: every such subtree agrees with every answer to {}",
            fprev_present::note::skeleton_asked(s)
        ));
    }
    Ok(Some(said))
}

/// The bits of the answers of the black box `spec` (`python:PATH.py:FUNC`
/// in a fresh process of `reveal(processes=P)`, opened as the library
/// opens any spec) to the seeded random inputs `fprev reveal --processes`
/// compares processes on, asked twice: `None` where the two differ, so
/// that what differs between processes would say nothing of them.
#[pyfunction]
#[pyo3(signature = (spec, n, dtype, rows=None, accumulator=None, offset=None))]
pub(crate) fn answers(
    spec: &str,
    n: usize,
    dtype: &str,
    rows: Option<usize>,
    accumulator: Option<&str>,
    offset: Option<&str>,
) -> PyResult<Option<Vec<u64>>> {
    let opts = ProbeOptions {
        n: Some(n),
        format: format(dtype)?,
        accumulator: accumulator.map(format).transpose()?,
        shape: rows.map(|m| [m, 1, n]),
        offset: offset.map(str::parse).transpose().map_err(to_py)?,
        ..ProbeOptions::default()
    };
    let mut black_box = fprev::open(spec, &opts).map_err(to_py)?;
    let inputs = fprev::reveal::VARIATION_INPUTS;
    let own = fprev::variation::answers(&mut *black_box, inputs, 0).map_err(to_py)?;
    let again = fprev::variation::answers(&mut *black_box, inputs, 0).map_err(to_py)?;
    Ok((own == again).then_some(own))
}
