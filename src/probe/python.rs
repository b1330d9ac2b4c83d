//! The embedded Python bridge: `numpy:OP`, `jax:OP`, `torch:OP[:DEVICE]` and
//! `python:PATH.py:FUNC` black boxes, run in an interpreter inside the `fprev`
//! binary.
//!
//! The library adapters in `probes/` are compiled into the binary; a
//! directory named by `FPREV_PROBES` can add libraries (`mylib.py` gives
//! `mylib:OP`) or replace the built-in ones. Packages are found where the
//! `python3` on `PATH` and an active virtualenv (`VIRTUAL_ENV`) find them, so
//! no `PYTHONPATH` is needed. The protocol is documented in
//! `probes/_bridge.py`.

use std::ffi::CString;
use std::path::Path;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyModule, PyTuple};

use crate::error::{Error, Result};
use crate::format::Format;
use crate::probe::{Batch, Probe, ProbeOptions, resolve_n};

/// The library adapters shipped inside the binary.
const LIBRARIES: [(&str, &str); 3] = [
    ("numpy", include_str!("../../probes/numpy.py")),
    ("jax", include_str!("../../probes/jax.py")),
    ("torch", include_str!("../../probes/torch.py")),
];

const BRIDGE: &str = include_str!("../../probes/_bridge.py");

/// Python packages a library needs, as `pip install` names them.
fn pip_name(module: &str) -> &str {
    match module {
        "jax" | "jaxlib" => "jax",
        "ml_dtypes" => "ml_dtypes",
        "torch" => "torch",
        other => other,
    }
}

/// Whether a library spec is served by this bridge.
pub fn serves(library: &str) -> bool {
    library == "python"
        || LIBRARIES.iter().any(|(name, _)| *name == library)
        || probes_dir().is_some_and(|d| d.join(format!("{library}.py")).is_file())
}

fn probes_dir() -> Option<std::path::PathBuf> {
    std::env::var_os("FPREV_PROBES").map(Into::into)
}

/// The Python probe specs, each with whether its packages import here.
pub fn catalog() -> Vec<crate::probe::SpecInfo> {
    let status = |module: &'static str| -> std::result::Result<(), String> {
        Python::attach(|py| {
            bridge(py).map_err(|e| e.to_string())?;
            py.import(module).map(|_| ()).map_err(|_| {
                format!(
                    "needs the Python package '{module}': python3 -m pip install {}",
                    pip_name(module)
                )
            })
        })
    };
    let info = |pattern, about, module| crate::probe::SpecInfo {
        pattern,
        about,
        available: status(module),
    };
    vec![
        info(
            "numpy:sum|dot|gemv|gemm",
            "NumPy (bf16 and fp8 through ml_dtypes)",
            "numpy",
        ),
        info("jax:sum|dot|gemv|gemm", "JAX on the CPU", "jax"),
        info(
            "torch:sum|dot|gemv|gemm[:cuda]",
            "PyTorch, CPU or CUDA",
            "torch",
        ),
        info(
            "python:PATH.py:FUNC",
            "any FUNC(x: numpy.ndarray) -> float",
            "numpy",
        ),
    ]
}

/// A black box implemented in Python.
pub struct PythonProbe {
    spec: String,
    call: Py<PyAny>,
    n: usize,
    format: Format,
    accumulator: Format,
    may_fuse: bool,
    batch: usize,
}

impl PythonProbe {
    /// Opens `LIBRARY:OP[:ARG]` or `python:PATH.py:FUNC`.
    pub fn open(spec: &str, opts: &ProbeOptions) -> Result<Self> {
        let n = resolve_n(spec, opts)?;
        let (library, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let dtype = opts.format.name();
        Python::attach(|py| {
            let bridge = bridge(py).map_err(|e| describe(py, spec, e, false))?;
            let opened = if library == "python" {
                let (path, func) = rest.rsplit_once(':').ok_or_else(|| {
                    Error::Input(format!("'{spec}': expected python:PATH.py:FUNC"))
                })?;
                if !Path::new(path).is_file() {
                    return Err(Error::Input(format!("{spec}: no such file: {path}")));
                }
                bridge.call_method1("open_user", (path, func, n, dtype))
            } else {
                let (op, arg) = match rest.split_once(':') {
                    Some((op, arg)) => (op, Some(arg)),
                    None => (rest, None),
                };
                if op.is_empty() {
                    return Err(Error::Input(format!(
                        "'{spec}': name an operation, e.g. {library}:sum"
                    )));
                }
                let module =
                    library_module(py, library).map_err(|e| describe(py, spec, e, false))?;
                let shape = opts.shape.map(|[m, c, k]| (m, c, k));
                bridge.call_method1("open_library", (module, op, n, dtype, shape, arg))
            };
            let opened = opened.map_err(|e| describe(py, spec, e, false))?;
            let (call, batch, acc, may_fuse): (Py<PyAny>, usize, Option<String>, bool) = opened
                .extract()
                .map_err(|e: pyo3::PyErr| describe(py, spec, e, false))?;
            let accumulator = match (opts.accumulator, acc) {
                (Some(a), _) => a,
                (None, Some(a)) => a.parse().map_err(Error::Input)?,
                (None, None) => opts.format,
            };
            Ok(PythonProbe {
                spec: spec.to_string(),
                call,
                n,
                format: opts.format,
                accumulator,
                may_fuse,
                batch: batch.max(1),
            })
        })
    }
}

/// The bridge module, loaded once per process.
fn bridge(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    if let Ok(m) = py.import("fprev_bridge") {
        return Ok(m);
    }
    let module = load(py, "fprev_bridge", BRIDGE, "probes/_bridge.py")?;
    module.call_method0("extend_path")?;
    Ok(module)
}

fn library_module<'py>(py: Python<'py>, library: &str) -> PyResult<Bound<'py, PyModule>> {
    let name = format!("fprev_probe_{library}");
    if let Ok(m) = py.import(name.as_str()) {
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
    load(py, &name, code, &format!("probes/{library}.py"))
}

fn load<'py>(
    py: Python<'py>,
    name: &str,
    code: &str,
    file: &str,
) -> PyResult<Bound<'py, PyModule>> {
    let c = |s: &str| CString::new(s).expect("no NUL in probe sources");
    PyModule::from_code(py, &c(code), &c(file), &c(name))
}

/// One line describing a Python error: the missing package and how to
/// install it, or the exception with where it was raised.
fn describe(py: Python<'_>, spec: &str, err: PyErr, while_summing: bool) -> Error {
    let value = err.value(py);
    if err.is_instance_of::<pyo3::exceptions::PyModuleNotFoundError>(py) {
        let module: Option<String> = value.getattr("name").ok().and_then(|n| n.extract().ok());
        if let Some(module) = module {
            let top = module.split('.').next().unwrap_or(&module).to_string();
            return Error::Input(format!(
                "{spec} needs the Python package '{top}', which is not installed for this \
                 interpreter: python3 -m pip install {}",
                pip_name(&top)
            ));
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
        Error::BlackBox(format!("the black box raised an exception: {line}"))
    } else {
        Error::Input(line)
    }
}

impl Probe for PythonProbe {
    fn n(&self) -> usize {
        self.n
    }
    fn format(&self) -> Format {
        self.format
    }
    fn accumulator(&self) -> Format {
        self.accumulator
    }
    fn may_fuse(&self) -> bool {
        self.may_fuse
    }
    fn max_batch(&self) -> usize {
        self.batch
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()> {
        // Whole inputs: each is a base with one no-op edit.
        for (x, o) in inputs.chunks_exact(self.n).zip(out) {
            let batch = Batch {
                base: x,
                positions: &[0],
                values: &x[..1],
                width: 1,
            };
            self.sum_batch(&batch, std::slice::from_mut(o))?;
        }
        Ok(())
    }

    fn sum_batch(&mut self, batch: &Batch, out: &mut [f64]) -> Result<()> {
        let w = batch.width;
        for (k, chunk) in out.chunks_mut(self.batch).enumerate() {
            let rows = k * self.batch..k * self.batch + chunk.len();
            let positions = &batch.positions[rows.start * w..rows.end * w];
            let values = &batch.values[rows.start * w..rows.end * w];
            Python::attach(|py| self.call_python(py, batch.base, positions, values, w, chunk))?;
        }
        Ok(())
    }
}

impl PythonProbe {
    /// One call of the Python black box: `fn(base, positions, values)`, the
    /// values sent as f32 (exact for every format but f64) or f64.
    fn call_python(
        &self,
        py: Python<'_>,
        base: &[f64],
        positions: &[usize],
        values: &[f64],
        width: usize,
        out: &mut [f64],
    ) -> Result<()> {
        let fail = |e: PyErr| describe(py, &self.spec, e, true);
        let rows = out.len();
        let pos: Vec<i64> = positions.iter().map(|p| *p as i64).collect();
        let pos = PyArray1::from_vec(py, pos)
            .reshape([rows, width])
            .map_err(fail)?;
        let (base, values) = if self.format == Format::F64 {
            (
                PyArray1::from_slice(py, base).into_any(),
                PyArray1::from_slice(py, values)
                    .reshape([rows, width])
                    .map_err(fail)?
                    .into_any(),
            )
        } else {
            let narrow = |v: &[f64]| v.iter().map(|x| *x as f32).collect::<Vec<f32>>();
            (
                PyArray1::from_vec(py, narrow(base)).into_any(),
                PyArray1::from_vec(py, narrow(values))
                    .reshape([rows, width])
                    .map_err(fail)?
                    .into_any(),
            )
        };
        let args = PyTuple::new(py, [base, pos.into_any(), values]).map_err(fail)?;
        let result = self.call.call1(py, args).map_err(fail)?;
        let result: PyReadonlyArray1<f64> = result.extract(py).map_err(fail)?;
        let got = result
            .as_slice()
            .map_err(|e| Error::BlackBox(format!("{}: unreadable result: {e}", self.spec)))?;
        out.copy_from_slice(got);
        Ok(())
    }
}
