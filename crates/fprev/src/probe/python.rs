//! The embedded Python bridge: `numpy:OP`, `jax:OP`, `torch:OP[:DEVICE]`,
//! `polars:sum[:THREADS]`, `duckdb:sum[:THREADS]` and
//! `python:PATH.py:FUNC` black boxes, run in an interpreter inside the `fprev`
//! binary.
//!
//! The library adapters in `crates/fprev/src/probe/python/` are compiled into the binary; a
//! directory named by `FPREV_PROBES` can add libraries (`mylib.py` gives
//! `mylib:OP`) or replace the built-in ones. Packages are found where the
//! `python3` on `PATH` and an active virtualenv (`VIRTUAL_ENV`) find them, so
//! no `PYTHONPATH` is needed. The protocol is documented in
//! `crates/fprev/src/probe/python/_bridge.py`. Beside this file's
//! `PythonProbe`: python/described (what is known of a callable),
//! python/loading (the bridge and adapters loaded), python/values (the
//! input buffer and the result read back).

mod described;
mod loading;
mod values;

use std::path::Path;

use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::error::{Error, Fault, Result};
use crate::format::Format;
use crate::probe::linalg::{Kernel, MOST_ELEMENTS};
use crate::probe::reducer::threads;
use crate::probe::{Batch, Dot, Probe, ProbeOptions, batch, resolve_n};

pub use described::Described;
use loading::{bridge, describe, library_module};
use values::{Raw, number};

/// The library adapters shipped inside the binary.
const LIBRARIES: [(&str, &str); 6] = [
    ("numpy", include_str!("python/numpy.py")),
    ("jax", include_str!("python/jax.py")),
    ("torch", include_str!("python/torch.py")),
    ("polars", include_str!("python/polars.py")),
    ("duckdb", include_str!("python/duckdb.py")),
    ("mma", include_str!("python/mma.py")),
];

const BRIDGE: &str = include_str!("python/_bridge.py");

/// Python packages a library needs, as `pip install` names them: a
/// library's own ([`crate::spec::profile`]), and JAX's for its `jaxlib`.
fn pip_name(module: &str) -> &str {
    match (module, crate::profile::profile(module).package) {
        ("jaxlib", _) => "jax",
        (other, "") => other,
        (_, package) => package,
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

/// Runs `f` attached to the interpreter, starting it first when this is the
/// `fprev` binary (inside Python, as the fprev package, it runs already).
fn attach<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> R {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        // SAFETY: Py_IsInitialized may be called at any time.
        if unsafe { pyo3::ffi::Py_IsInitialized() } == 0 {
            // Only an interpreter of our own borrows the packages of the
            // python3 on PATH; inside Python, its own sys.path rules. That
            // python3 is asked while this one starts and imports NumPy.
            let asked = path_python();
            Python::initialize();
            Python::attach(|py| {
                let bridge = bridge(py);
                let answer = asked.and_then(answer_of);
                let _ = bridge.and_then(|b| b.call_method1("extend_path", (answer,)));
            });
        }
    });
    Python::attach(f)
}

/// The `python3` on PATH, started printing its version and `sys.path` as
/// JSON; `None` where there is none.
fn path_python() -> Option<std::process::Child> {
    std::process::Command::new("python3")
        .args([
            "-c",
            "import json, sys; print(json.dumps([sys.version_info[:2], sys.path]))",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()
}

/// What `child` printed, given 20 s to finish (then it is killed, and its
/// packages are not borrowed). Its output is read as it comes, so that a
/// long one cannot fill the pipe and stall it.
fn answer_of(mut child: std::process::Child) -> Option<String> {
    let mut stdout = child.stdout.take()?;
    let (sent, answer) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = String::new();
        let _ = sent.send(std::io::Read::read_to_string(&mut stdout, &mut out).map(|_| out));
    });
    let out = answer.recv_timeout(std::time::Duration::from_secs(20));
    if out.is_err() {
        let _ = child.kill();
    }
    let _ = child.wait();
    out.ok()?.ok()
}

/// The interpreter this process runs inside (its `sys.executable`) where
/// it is Python running the fprev package; `None` where no interpreter
/// runs or it names none. A process started from it runs this
/// environment's packages, which the interpreter's resolved binary (a
/// virtual environment's `python` links one outside it) may not.
pub fn host_interpreter() -> Option<std::path::PathBuf> {
    // SAFETY: Py_IsInitialized may be called at any time.
    if unsafe { pyo3::ffi::Py_IsInitialized() } == 0 {
        return None;
    }
    Python::attach(|py| {
        let exe: Option<std::path::PathBuf> = py
            .import("sys")
            .and_then(|sys| sys.getattr("executable"))
            .and_then(|e| e.extract())
            .ok()?;
        exe.filter(|e| !e.as_os_str().is_empty())
    })
}

/// Whether the Python package `module` is installed here; else what to
/// install. Found, not imported: importing fixes what some packages read
/// once (Polars' thread count) before a black box sets it.
pub fn available(module: &str) -> std::result::Result<(), String> {
    attach(|py| {
        bridge(py).map_err(|e| e.to_string())?;
        let found = py
            .import("importlib.util")
            .and_then(|u| u.call_method1("find_spec", (module,)))
            .is_ok_and(|spec| !spec.is_none());
        if found {
            Ok(())
        } else {
            Err(format!(
                "needs the Python package '{module}': python3 -m pip install {}",
                pip_name(module)
            ))
        }
    })
}

/// Every spec the Python library `library` offers, where its adapter lists
/// them (`mma:` lists each simulated instruction); `None` where it does not.
pub fn members(library: &str) -> Result<Option<Vec<String>>> {
    attach(|py| {
        let fail = |e| describe(py, library, e, false);
        let bridge = bridge(py).map_err(fail)?;
        let module = library_module(py, library).map_err(fail)?;
        bridge
            .call_method1("members", (module,))
            .and_then(|d| d.extract())
            .map_err(fail)
    })
}

/// What the Python library `library` (`numpy`, `jax`, `torch`) says of
/// itself: its version, and what its adapter's `_facts()` adds (NumPy's
/// BLAS and the CPU features its kernels dispatch on).
pub fn facts(library: &str) -> Result<std::collections::BTreeMap<String, String>> {
    attach(|py| {
        let fail = |e| describe(py, library, e, false);
        let bridge = bridge(py).map_err(fail)?;
        let module = library_module(py, library).map_err(fail)?;
        bridge
            .call_method1("facts", (module, library))
            .and_then(|d| d.extract())
            .map_err(fail)
    })
}

/// A black box implemented in Python.
pub struct PythonProbe {
    spec: String,
    call: Py<PyAny>,
    n: usize,
    format: Format,
    accumulator: Format,
    result: Format,
    may_fuse: bool,
    /// The formats of the operands whose products it splits itself
    /// (`fn.operands`); inputs then travel as f64.
    operands: Option<(Format, Format)>,
    /// Rows one evaluation sums (the `fn(X)` form); `None`: one input a call.
    rows: Option<usize>,
    /// The array inputs are written into, in the format's own bits.
    raw: Raw,
    /// `raw` viewed as the format's NumPy dtype: what the black box gets.
    view: Py<PyAny>,
    /// `numpy.generic`, the type of NumPy's scalars.
    scalar: Py<PyAny>,
    /// `raw` holds the last input of the last batch (see [`Batch::continues`]).
    synced: bool,
    /// Rows of `raw` (in the rows form) written by an earlier call.
    dirty_rows: usize,
    /// `fn.weights`, in its format's own bits, where the black box
    /// multiplies (see [`Dot::dot`](crate::Dot::dot)).
    weights: Option<Raw>,
    /// `weights` may differ from ones (a dot wrote them), so a plain sum
    /// must restore the ones first.
    weighted: bool,
}

/// `fn.weights` as the bridge hands it over: the array viewed as the bits
/// fprev writes, and its format's name.
type Weights<'py> = (Bound<'py, PyAny>, String);

impl PythonProbe {
    /// Opens `python:PATH.py:FUNC` (`PATH.py` and `FUNC` as the spec
    /// splits them, `None` where it could not); with a shape `M,1,K`, FUNC
    /// sums `M` rows of `K` a call.
    pub fn open_user(
        spec: &str,
        path_func: Option<(&str, &str)>,
        opts: &ProbeOptions,
    ) -> Result<Self> {
        Self::open_with(spec, opts, |_, bridge, n, dtype| {
            let (path, func) = path_func
                .ok_or_else(|| Error::Input(format!("'{spec}': expected python:PATH.py:FUNC")))?;
            if !Path::new(path).is_file() {
                return Err(Error::Input(format!("{spec}: no such file: {path}")));
            }
            let rows = opts.shape.map(|[m, _, _]| m);
            Ok(bridge.call_method1("open_user", (path, func, n, dtype, rows)))
        })
    }

    /// Opens `LIBRARY:OP[:THREADS]` of a library that takes a thread
    /// count (`polars:`, `duckdb:`): the adapter gets the count of the
    /// spec or of `--threads` (they must agree) as its `arg`, or `None`
    /// for the library's own where neither gives one.
    pub fn open_threaded(
        spec: &str,
        library: &str,
        op: &str,
        in_spec: Option<&str>,
        opts: &ProbeOptions,
    ) -> Result<Self> {
        let threads = match (in_spec, opts.threads) {
            (None, None) => None,
            _ => Some(threads(spec, in_spec, opts)?.to_string()),
        };
        Self::open_library(spec, library, op, threads.as_deref(), opts)
    }

    /// Opens `LIBRARY:OP[:ARG]`.
    pub fn open_library(
        spec: &str,
        library: &str,
        op: &str,
        arg: Option<&str>,
        opts: &ProbeOptions,
    ) -> Result<Self> {
        Self::open_with(spec, opts, |py, bridge, n, dtype| {
            if op.is_empty() {
                return Err(Error::Input(format!(
                    "'{spec}': name an operation, e.g. {library}:sum"
                )));
            }
            // A GEMV's or GEMM's matrices are bounded as ndarray's
            // are (the adapters size them alike), before the library
            // allocates them.
            if matches!(op, "gemv" | "gemm") {
                let kernel = Kernel::parse(library, spec, op, n, opts, &[op])?;
                kernel.check_size(spec, n)?;
            }
            let module = library_module(py, library).map_err(|e| describe(py, spec, e, false))?;
            let shape = opts.shape.map(|[m, c, k]| (m, c, k));
            let column = opts.column;
            Ok(bridge.call_method1("open_library", (module, op, n, dtype, shape, arg, column)))
        })
    }

    /// Opens the callable `open` has the bridge make for `n` summands in
    /// `dtype`, completing what it says of itself with `opts`.
    fn open_with(
        spec: &str,
        opts: &ProbeOptions,
        open: impl for<'py> FnOnce(
            Python<'py>,
            &Bound<'py, PyAny>,
            usize,
            &str,
        ) -> Result<PyResult<Bound<'py, PyAny>>>,
    ) -> Result<Self> {
        let n = resolve_n(spec, opts)?;
        let dtype = opts.format.name();
        attach(|py| {
            let fail = |e| describe(py, spec, e, false);
            let bridge = bridge(py).map_err(fail)?;
            let opened = open(py, &bridge, n, dtype)?;
            let given = Described {
                accumulator: opts.accumulator,
                offset: opts.offset,
                ..Described::default()
            };
            let (call, described, weights) =
                given.complete(&opened.map_err(fail)?).map_err(fail)?;
            let call = shifted(&bridge, call, &described, n, opts.format).map_err(fail)?;
            PythonProbe::new(py, spec, call, n, opts.format, described, weights)
        })
    }

    /// A black box from a Python callable (the fprev Python package):
    /// `fn(x) -> number`, or `fn(X) -> numbers` summing `rows` rows a call.
    /// `label` names it in messages. What `described` leaves open comes from
    /// the callable's attributes (`rows`, `accumulator`, `may_fuse`; see
    /// `crates/fprev/src/probe/python/_bridge.py`).
    pub fn from_callable(
        py: Python<'_>,
        call: &Bound<'_, PyAny>,
        label: &str,
        n: usize,
        format: Format,
        described: Described,
    ) -> Result<Self> {
        let fail = |e| describe(py, label, e, false);
        let opened = bridge(py)
            .and_then(|b| b.call_method1("open_callable", (call, described.rows)))
            .map_err(fail)?;
        let (call, described, weights) = described.complete(&opened).map_err(fail)?;
        let call = bridge(py)
            .and_then(|b| shifted(&b, call, &described, n, format))
            .map_err(fail)?;
        let probe = PythonProbe::new(py, label, call, n, format, described, weights)?;
        // Read-only, so a function that changes its argument fails loudly
        // instead of corrupting the next input (fprev writes through `raw`).
        probe
            .view
            .bind(py)
            .getattr("flags")
            .and_then(|f| f.setattr("writeable", false))
            .map_err(fail)?;
        Ok(probe)
    }

    fn new(
        py: Python<'_>,
        spec: &str,
        call: Bound<'_, PyAny>,
        n: usize,
        format: Format,
        described: Described,
        weights: Option<Weights<'_>>,
    ) -> Result<Self> {
        let fail = |e| describe(py, spec, e, false);
        let Described {
            rows,
            accumulator,
            result,
            may_fuse,
            operands,
            ..
        } = described;
        // Products need not be values of the input format: they travel as
        // f64, exactly, for the black box to split.
        let wire = if operands.is_some() {
            Format::F64
        } else {
            format
        };
        if rows == Some(0) {
            return Err(Error::Input(format!(
                "{spec}: the black box sums 0 rows a call"
            )));
        }
        // The rows are a buffer of rows x n values: bounded as a matrix is.
        if let Some(r) = rows
            && r.checked_mul(n).is_none_or(|e| e > MOST_ELEMENTS)
        {
            return Err(Error::Input(format!(
                "{spec}: {r} rows of n = {n} summands a call are too many (over \
                 {MOST_ELEMENTS} values)"
            )));
        }
        if operands.is_some() && weights.as_ref().is_none_or(|(_, name)| name != "f64") {
            return Err(Error::Input(format!(
                "{spec}: fn.operands needs fn.weights of float64 (products travel as f64)"
            )));
        }
        let shape: Vec<usize> = rows.into_iter().chain([n]).collect();
        let (raw, view): (Bound<PyAny>, Py<PyAny>) = bridge(py)
            .and_then(|b| b.call_method1("buffer", (shape, wire.name())))
            .and_then(|b| b.extract())
            .map_err(fail)?;
        let scalar = py
            .import("numpy")
            .and_then(|np| np.getattr("generic"))
            .map_err(fail)?
            .unbind();
        let weights = match weights {
            None => None,
            Some((raw, name)) => {
                let len = raw.len().map_err(fail)?;
                if len != n {
                    return Err(Error::Input(format!(
                        "{spec}: fn.weights holds {len} values, not n = {n}"
                    )));
                }
                let format = name
                    .parse()
                    .map_err(|e: String| Error::Input(format!("{spec}: fn.weights: {e}")))?;
                Some(Raw::new(&raw, format).map_err(fail)?)
            }
        };
        Ok(PythonProbe {
            spec: spec.to_string(),
            call: call.unbind(),
            n,
            format,
            accumulator: accumulator.unwrap_or(format),
            result: result.unwrap_or(format),
            may_fuse,
            operands,
            rows,
            raw: Raw::new(&raw, wire).map_err(fail)?,
            view,
            scalar,
            synced: false,
            dirty_rows: 0,
            weights,
            weighted: false,
        })
    }

    /// The error of a failed call: its one line for the engine, carrying
    /// the exception for the Python package to raise again.
    fn raised(&self, py: Python<'_>, err: PyErr) -> Error {
        Error::Raised {
            error: Box::new(describe(py, &self.spec, err.clone_ref(py), true)),
            raised: Box::new(err),
        }
    }
}

/// `call`, handed each input in a copy that starts `described.offset`
/// past a 64-byte boundary (the bridge's `shifted`), where one is given:
/// a library may sum an unaligned array in another order.
fn shifted<'py>(
    bridge: &Bound<'py, PyAny>,
    call: Bound<'py, PyAny>,
    described: &Described,
    n: usize,
    format: Format,
) -> PyResult<Bound<'py, PyAny>> {
    let Some(offset) = described.offset else {
        return Ok(call);
    };
    let shape: Vec<usize> = described.rows.into_iter().chain([n]).collect();
    bridge.call_method1(
        "shifted",
        (call, shape, format.name(), offset.bytes(format)),
    )
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
    fn result(&self) -> Format {
        self.result
    }
    fn may_fuse(&self) -> bool {
        self.may_fuse
    }
    fn operands(&self) -> Option<(Format, Format)> {
        self.operands
    }
    fn max_batch(&self) -> usize {
        self.rows.unwrap_or(1)
    }

    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()> {
        batch::sum_whole(self, inputs, out)
    }

    fn sum_batch(&mut self, batch: &Batch, out: &mut [f64]) -> Result<()> {
        // Ones are restored only after a dot, so plain sums cost what they did.
        if self.weighted
            && let Some(weights) = &self.weights
        {
            let ones = vec![1.0; self.n];
            attach(|py| weights.with(py, |mut v| v.write(0, &ones)));
            self.weighted = false;
        }
        self.run_batch(batch, out)
    }

    fn as_dot(&mut self) -> Option<&mut dyn Dot> {
        if self.weights.is_some() {
            Some(self)
        } else {
            None
        }
    }
}

impl Dot for PythonProbe {
    fn dot(&mut self, rows: &[f64], y: &[f64], out: &mut [f64]) -> Result<()> {
        let n = self.n;
        let Some(weights) = &self.weights else {
            return Err(Error::Input(format!(
                "{}: the black box sums its inputs; it does not multiply them (it has no \
                 fn.weights)",
                self.spec
            )));
        };
        if rows.len() != out.len() * n || y.len() != n {
            return Err(Error::Input(format!(
                "{}: {} values for {} rows of n = {}, with a vector y of {}",
                self.spec,
                rows.len(),
                out.len(),
                n,
                y.len()
            )));
        }
        if out.is_empty() {
            return Ok(());
        }
        attach(|py| weights.with(py, |mut v| v.write(0, y)));
        self.weighted = true;
        batch::whole(rows, n, out.len(), |b| self.run_batch(b, out))?;
        // What `raw` holds is a dot's row, which no later batch continues.
        self.synced = false;
        Ok(())
    }
}

impl PythonProbe {
    /// Sums `batch` with the weights as they are.
    fn run_batch(&mut self, batch: &Batch, out: &mut [f64]) -> Result<()> {
        let fresh = !(batch.continues && self.synced);
        self.synced = false;
        attach(|py| match self.rows {
            None => self.each_input(py, batch, fresh, out),
            Some(m) => {
                for (k, chunk) in out.chunks_mut(m).enumerate() {
                    self.rows_call(py, batch, k * m, chunk)?;
                }
                Ok(())
            }
        })?;
        self.synced = true;
        Ok(())
    }

    /// The `fn(x)` form: each input in turn in the one array, one call each.
    fn each_input(
        &mut self,
        py: Python<'_>,
        batch: &Batch,
        fresh: bool,
        out: &mut [f64],
    ) -> Result<()> {
        if fresh {
            self.raw.with(py, |mut v| v.write(0, batch.base));
        }
        let call = self.call.bind(py).clone();
        let view = self.view.bind(py).clone();
        let scalar = self.scalar.bind(py).clone();
        for (r, o) in out.iter_mut().enumerate() {
            self.raw.with(py, |mut v| {
                for (p, x) in batch.edits(r) {
                    v.set(p, x);
                }
            });
            let result = call.call1((&view,)).map_err(|e| self.raised(py, e))?;
            // What it returned instead of a number is a `TypeError` to Python.
            *o = number(&self.spec, &result, &scalar).map_err(|e| Error::Raised {
                raised: Box::new(PyTypeError::new_err(e.to_string())),
                error: Box::new(e),
            })?;
        }
        Ok(())
    }

    /// The `fn(X)` form: inputs `first..first + out.len()` of `batch` as
    /// the rows of one call, the rows after them zero.
    fn rows_call(
        &mut self,
        py: Python<'_>,
        batch: &Batch,
        first: usize,
        out: &mut [f64],
    ) -> Result<()> {
        let n = self.n;
        let rows = out.len();
        let dirty = self.dirty_rows;
        let last_row = self.rows.unwrap_or(1) - 1;
        self.raw.with(py, |mut v| {
            // Row 0 continues from the input before `first`: the base, or
            // the last row of the previous (full) chunk.
            if first == 0 {
                v.write(0, batch.base);
            } else {
                v.copy(last_row * n, 0, n);
            }
            for r in 0..rows {
                if r > 0 {
                    v.copy((r - 1) * n, r * n, n);
                }
                for (p, x) in batch.edits(first + r) {
                    v.set(r * n + p, x);
                }
            }
            if dirty > rows {
                v.zero(rows * n..dirty * n);
            }
        });
        self.dirty_rows = rows;
        let call = self.call.bind(py).clone();
        let result = call
            .call1((self.view.bind(py),))
            .map_err(|e| self.raised(py, e))?;
        let sums: PyReadonlyArray1<f64> = result.extract().map_err(|e| self.raised(py, e))?;
        let sums = sums.as_slice().map_err(|e| {
            Error::BlackBox(Fault::Unreadable {
                spec: self.spec.clone(),
                why: e.to_string(),
            })
        })?;
        out.copy_from_slice(&sums[..rows]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polars takes its thread count once, on import: a second count in
    /// the same process is refused, naming both, never run on the first.
    #[test]
    fn polars_keeps_the_thread_count_it_was_imported_with() {
        available("polars").unwrap();
        let opts = |threads| ProbeOptions {
            n: Some(8),
            format: Format::F64,
            threads,
            ..ProbeOptions::default()
        };
        let open = |spec: &str, given, threads| {
            PythonProbe::open_threaded(spec, "polars", "sum", given, &opts(threads))
        };
        // No other test of this binary imports polars.
        if let Err(e) = open("polars:sum:1", Some("1"), None) {
            panic!("{e}");
        }
        assert!(open("polars:sum", None, Some(1)).is_ok());
        let err = open("polars:sum", None, Some(2)).map(|_| ());
        let err = err.expect_err("a second thread count is refused");
        assert!(err.to_string().contains("imported on 1 threads"), "{err}");
        // The spec's count and --threads must agree.
        assert!(open("polars:sum:1", Some("1"), Some(2)).is_err());
    }
}
