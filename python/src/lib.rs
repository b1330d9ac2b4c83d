//! `fprev._fprev`: the fprev crate as a Python extension. The Python
//! package (`python/fprev/`) wraps it with docstrings, dtype names and the
//! `testing` helpers; everything here calls the crate, nothing is
//! implemented twice.

mod black_box;
mod check;
mod emit;
mod errors;
mod explain;
mod invariance;
mod reduce;
mod reveal;
mod sweep;
mod tree;
mod variation;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use errors::{BlackBoxError, OrderIndependentError, UnconfirmedWarning, VariesError};

/// The `fprev` command line on `argv` (as `sys.argv`, the program first),
/// run in this interpreter with the GIL released (its Python black boxes
/// take it back); returns the exit status. The console script calls it.
/// The command runs in a child process forked by `os.fork`, which keeps
/// the interpreter sound in both processes (see `fprev_cli::supervise`).
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<std::ffi::OsString>) -> i32 {
    let fork = || {
        let pid = py.import("os")?.call_method0("fork")?;
        pid.extract::<i32>()
    };
    if let Some(code) = fprev_cli::supervise(|| fork().ok()) {
        return code;
    }
    py.detach(|| fprev_cli::run_main(argv))
}

#[pymodule]
fn _fprev(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<tree::Tree>()?;
    m.add_class::<check::Check>()?;
    m.add("BlackBoxError", py.get_type::<BlackBoxError>())?;
    m.add("UnconfirmedWarning", py.get_type::<UnconfirmedWarning>())?;
    m.add(
        "OrderIndependentError",
        py.get_type::<OrderIndependentError>(),
    )?;
    m.add("VariesError", py.get_type::<VariesError>())?;
    m.add_function(wrap_pyfunction!(reveal::reveal, m)?)?;
    m.add_function(wrap_pyfunction!(variation::variation, m)?)?;
    m.add_function(wrap_pyfunction!(variation::answers, m)?)?;
    m.add("VARIATION_INPUTS", fprev::reveal::VARIATION_INPUTS)?;
    m.add_function(wrap_pyfunction!(check::check, m)?)?;
    m.add_function(wrap_pyfunction!(tree::diff, m)?)?;
    m.add_function(wrap_pyfunction!(tree::order_parts, m)?)?;
    m.add_function(wrap_pyfunction!(reduce::replay, m)?)?;
    m.add_function(wrap_pyfunction!(explain::explain, m)?)?;
    m.add_function(wrap_pyfunction!(emit::emit_source, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(errors::bounded, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::parse_sizes, m)?)?;
    m.add_class::<sweep::SweepReport>()?;
    m.add_class::<invariance::Study>()?;
    m.add_function(wrap_pyfunction!(invariance::invariance, m)?)?;
    let sizes: fprev::sizes::Sizes = fprev::formula::infer::EXPLAIN_SIZES
        .parse()
        .map_err(PyValueError::new_err)?;
    m.add("EXPLAIN_SIZES", sizes.0)?;
    let verify: fprev::sizes::Sizes = fprev::workflow::VERIFY_SIZES
        .parse()
        .map_err(PyValueError::new_err)?;
    m.add("VERIFY_SIZES", verify.0)?;
    m.add("MAX_REVEALS", fprev::invariance::MAX_REVEALS)?;
    m.add("MAX_SIZES", fprev::sizes::MAX_SIZES)?;
    m.add("same_bits", wrap_pyfunction!(check::same_bits_, m)?)?;
    m.add(
        "binary_tree_sum",
        wrap_pyfunction!(reduce::binary_tree_sum_, m)?,
    )?;
    m.add(
        "prerounded_sum",
        wrap_pyfunction!(reduce::prerounded_sum_, m)?,
    )?;
    Ok(())
}
