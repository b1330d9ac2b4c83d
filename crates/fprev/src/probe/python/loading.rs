//! Loading the bridge and the library adapters into the interpreter, once
//! a process, and a Python exception told as the crate's error.

use std::ffi::CString;

use pyo3::prelude::*;
use pyo3::types::PyModule;

use super::{BRIDGE, LIBRARIES, pip_name, probes_dir};
use crate::error::{Error, Fault, Missing};

/// The bridge module, loaded once per process.
pub(super) fn bridge(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    if let Some(m) = loaded(py, "fprev_bridge")? {
        return Ok(m);
    }
    load(py, "fprev_bridge", BRIDGE, "fprev/probe/python/_bridge.py")
}

pub(super) fn library_module<'py>(
    py: Python<'py>,
    library: &str,
) -> PyResult<Bound<'py, PyModule>> {
    let name = format!("fprev_probe_{library}");
    if let Some(m) = loaded(py, &name)? {
        return Ok(m);
    }
    if let Some(path) = probes_dir()
        .map(|d| d.join(format!("{library}.py")))
        .filter(|p| p.is_file())
    {
        let code = std::fs::read_to_string(&path).map_err(|e| {
            pyo3::exceptions::PyOSError::new_err(format!("cannot read {}: {e}", path.display()))
        })?;
        return load(py, &name, &code, &path.display().to_string());
    }
    let (_, code) = LIBRARIES
        .iter()
        .find(|(l, _)| *l == library)
        .ok_or_else(|| {
            pyo3::exceptions::PyLookupError::new_err(format!("no probe module for '{library}'"))
        })?;
    load(py, &name, code, &format!("fprev/probe/python/{library}.py"))
}

/// Set on a module [`load`] made once its code has run.
const LOADED: &str = "_fprev_loaded";

/// The module `name` once another call's [`load`] of it has finished, or
/// `None` when it is not loaded. A module is in `sys.modules` while its
/// code runs, and that code (importing JAX) lets other threads run: one
/// that took it then would find its functions missing, so it waits.
fn loaded<'py>(py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyModule>>> {
    loop {
        let Ok(m) = py.import(name) else {
            return Ok(None);
        };
        if m.hasattr(LOADED)? {
            return Ok(Some(m));
        }
        py.detach(|| std::thread::sleep(std::time::Duration::from_millis(5)));
    }
}

fn load<'py>(
    py: Python<'py>,
    name: &str,
    code: &str,
    file: &str,
) -> PyResult<Bound<'py, PyModule>> {
    let c = |s: &str| CString::new(s).expect("no NUL in probe sources");
    let m = PyModule::from_code(py, &c(code), &c(file), &c(name))?;
    m.setattr(LOADED, true)?;
    Ok(m)
}

/// One line describing a Python error: the missing package and how to
/// install it, or the exception with where it was raised.
pub(super) fn describe(py: Python<'_>, spec: &str, err: PyErr, while_summing: bool) -> Error {
    let value = err.value(py);
    if err.is_instance_of::<pyo3::exceptions::PyModuleNotFoundError>(py) {
        let module: Option<String> = value.getattr("name").ok().and_then(|n| n.extract().ok());
        if let Some(module) = module {
            let top = module.split('.').next().unwrap_or(&module).to_string();
            return Error::Missing(Missing::Package {
                spec: spec.to_string(),
                pip: pip_name(&top).to_string(),
                package: top,
            });
        }
    }
    let kind = err
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    let message = value.str().map(|s| s.to_string()).unwrap_or_default();
    let message = message.lines().next().unwrap_or("").to_string();
    let place = err
        .traceback(py)
        .and_then(|tb| tb.format().ok())
        .and_then(|text| {
            text.lines()
                .rfind(|l| l.trim_start().starts_with("File "))
                .map(|l| format!(" ({})", l.trim()))
        })
        .unwrap_or_default();
    let line = format!("{spec}: {kind}: {message}{place}");
    if while_summing {
        Error::BlackBox(Fault::Raised { line })
    } else {
        Error::Input(line)
    }
}
