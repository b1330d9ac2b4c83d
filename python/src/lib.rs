//! `fprev._fprev`: the fprev crate as a Python extension. The Python
//! package (`python/fprev/`) wraps it with docstrings, dtype names and the
//! `testing` helpers; everything here calls the crate, nothing is
//! implemented twice.

use std::time::{Duration, Instant};

use fprev::check::{Confirmation, check_models, check_row};
use fprev::document::TreeDocument;
use fprev::equivalence::same_bits;
use fprev::error::{Kind, Report};
use fprev::probe::python::{Described, PythonProbe};
use fprev::reduce::{
    Replay, binary_tree_sum, binary_tree_sum_threads, prerounded_sum, prerounded_sum_threads,
};
use fprev::reveal::arithmetic::{ArithOptions, confirm_arithmetic};
use fprev::reveal::{Algorithm, Observer, Options, Progress, Silent};
use fprev::{Error, Format, SummationTree};
use numpy::PyReadonlyArray1;
use pyo3::create_exception;
use pyo3::exceptions::{
    PyException, PyOSError, PyRuntimeError, PyRuntimeWarning, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

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
fn to_py(e: Error) -> PyErr {
    let message = Report(&e).to_string();
    match (e.kind(), e) {
        (_, Error::File { source, .. }) => PyOSError::new_err((source.raw_os_error(), message)),
        (Kind::Input, _) => PyValueError::new_err(message),
        (Kind::BlackBox, _) => BlackBoxError::new_err(message),
        (Kind::OrderIndependent, _) => OrderIndependentError::new_err(message),
    }
}

/// The error of a call that ran the black box: what the callable raised
/// (with its traceback), else the crate's error.
fn from_probe(probe: &mut PythonProbe, e: Error) -> PyErr {
    probe.take_exception().unwrap_or_else(|| to_py(e))
}

fn format(name: &str) -> PyResult<Format> {
    name.parse().map_err(PyValueError::new_err)
}

fn probe(
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
    fprev::memory::check_reveal(n).map_err(to_py)?;
    PythonProbe::from_callable(py, call, label, n, format, described).map_err(to_py)
}

/// A summation tree, with where it came from.
#[pyclass(name = "Tree", module = "fprev", frozen)]
struct Tree {
    doc: TreeDocument,
}

impl Tree {
    fn tree(&self) -> &SummationTree {
        &self.doc.tree
    }
}

#[pymethods]
impl Tree {
    /// Parses the JSON form (`to_json`, `fprev reveal -o t.json`) or the
    /// text form `((0+1)+2)`.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Tree> {
        TreeDocument::parse(text)
            .map(|doc| Tree { doc })
            .map_err(to_py)
    }

    /// The tree a formula of the order language gives at `n` summands
    /// (`explain`'s `formula`, or any `native:` spec without its prefix).
    #[staticmethod]
    fn from_formula(formula: &str, n: usize) -> PyResult<Tree> {
        let formula: fprev::formula::Formula = formula
            .strip_prefix("native:")
            .unwrap_or(formula)
            .parse()
            .map_err(PyValueError::new_err)?;
        if n == 0 {
            return Err(PyValueError::new_err("n must be at least 1, got 0"));
        }
        Ok(Tree {
            doc: TreeDocument::new(formula.tree(n)),
        })
    }

    /// Reads a tree file, JSON or text form.
    #[staticmethod]
    fn load(path: std::path::PathBuf) -> PyResult<Tree> {
        TreeDocument::read(&path)
            .map(|doc| Tree { doc })
            .map_err(to_py)
    }

    #[getter]
    fn n(&self) -> usize {
        self.tree().n()
    }

    #[getter]
    fn dtype(&self) -> Option<&'static str> {
        self.doc.dtype.map(Format::name)
    }

    #[getter]
    fn label(&self) -> Option<&str> {
        self.doc.probe.as_deref()
    }

    #[getter]
    fn depth(&self) -> usize {
        self.tree().depth()
    }

    #[getter]
    fn is_binary(&self) -> bool {
        self.tree().is_binary()
    }

    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(s) = self.doc.stats else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("queries", s.queries)?;
        d.set_item("inputs", s.inputs)?;
        d.set_item("calls", s.calls)?;
        d.set_item("seconds", s.seconds)?;
        d.set_item("probe_seconds", s.probe_seconds)?;
        Ok(Some(d))
    }

    /// How the reveal confirmed the tree by replay: `trials`, `passed`,
    /// `accumulator`; `None` when it was not confirmed (`confirm=0`, or a
    /// tree read from a file written without it).
    #[getter]
    fn confirmation<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(c) = &self.doc.confirmation else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("trials", c.trials)?;
        d.set_item("passed", c.passed)?;
        d.set_item("accumulator", c.accumulator.as_deref())?;
        Ok(Some(d))
    }

    /// What each node computes, where the reveal found it: `version`,
    /// `default` (`format`, `rounding`, and `compensated` or `drops_error`
    /// where true), the `nodes` that differ (each with `first`, `size` and
    /// those) and `summary` (`"f32, 3 nodes f64"`); `None` when unknown.
    #[getter]
    fn arithmetic<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(model) = &self.doc.arithmetic else {
            return Ok(None);
        };
        let json =
            serde_json::to_string(model).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let d = py.import("json")?.call_method1("loads", (json,))?;
        d.set_item("summary", model.to_string())?;
        Ok(Some(d))
    }

    /// True when a replay of the tree matched the black box on every
    /// random input tried, False when one differed, None when not tried.
    #[getter]
    fn confirmed(&self) -> Option<bool> {
        self.doc.confirmation.as_ref().map(Confirmation::confirmed)
    }

    fn to_json(&self) -> String {
        self.doc.to_json()
    }

    fn text(&self) -> String {
        self.tree().to_text()
    }

    fn to_dot(&self) -> String {
        fprev::render::dot(self.tree())
    }

    fn to_svg(&self) -> PyResult<String> {
        let svg = fprev::render::svg(self.tree()).map_err(to_py)?;
        String::from_utf8(svg).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
        std::fs::write(&path, self.doc.to_json() + "\n").map_err(|e| {
            pyo3::exceptions::PyOSError::new_err(format!("cannot write {}: {e}", path.display()))
        })
    }

    /// Jupyter's picture of the tree, captioned with its black box, size,
    /// dtype and formula, and collapsed when too large to draw whole;
    /// `None` (the text repr) without `dot`.
    fn _repr_svg_(&self) -> Option<String> {
        let svg = fprev::render::Drawing::of(&self.doc).svg().ok()?;
        String::from_utf8(svg).ok()
    }

    /// Jupyter's rich view: the captioned drawing of `_repr_svg_` in a
    /// figure, with a line saying what is known of the tree; its text form
    /// (cut short) where `dot` is missing.
    fn _repr_html_(&self) -> String {
        let escape = |s: &str| {
            s.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        };
        let mut facts = vec![format!("{} summands", self.tree().n())];
        facts.extend(self.doc.probe.clone());
        facts.extend(self.doc.dtype.map(|d| d.to_string()));
        facts.push(format!("depth {}", self.tree().depth()));
        if let Some(i) = &self.doc.inferred {
            facts.push(format!("formula native:{}", i.formula));
        }
        if let Some(a) = &self.doc.arithmetic {
            facts.push(format!("arithmetic: {a}"));
        }
        facts.push(
            match &self.doc.confirmation {
                Some(c) if c.confirmed() => "confirmed by replay",
                Some(_) => "NOT confirmed by replay",
                None => "not replayed",
            }
            .to_string(),
        );
        let picture = match self._repr_svg_() {
            Some(svg) => svg,
            None => {
                let text = self.tree().to_text();
                let cut: String = text.chars().take(2000).collect();
                let more = if cut.len() < text.len() { "…" } else { "" };
                format!("<pre>{}{more}</pre>", escape(&cut))
            }
        };
        format!(
            "<figure class=\"fprev-tree\">{picture}<figcaption>{}</figcaption></figure>",
            escape(&facts.join("; "))
        )
    }

    fn __eq__(&self, other: PyRef<'_, Tree>) -> bool {
        self.tree().diff(other.tree()).is_none()
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        // The canonical text: equal modulo child order, equal text.
        self.tree().to_text().hash(&mut h);
        h.finish()
    }

    fn __str__(&self) -> String {
        self.text()
    }

    fn __repr__(&self) -> String {
        const SHOWN: usize = 72;
        let text = self.text();
        let text = if text.chars().count() > SHOWN {
            format!("{}...", text.chars().take(SHOWN).collect::<String>())
        } else {
            text
        };
        let label = self
            .doc
            .probe
            .as_deref()
            .map(|l| format!(", {l}"))
            .unwrap_or_default();
        format!("<fprev.Tree n={}{label}: {text}>", self.tree().n())
    }
}

/// How a check ended; true when the tree reproduced every trial.
#[pyclass(name = "Check", module = "fprev", frozen, get_all)]
struct Check {
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

/// A one-line progress report on Python's `sys.stderr` (so that Jupyter
/// shows it under the cell), redrawn in place at most ten times a second
/// once a reveal has run for a second (most end sooner), and erased at the
/// end.
struct ProgressLine {
    started: Instant,
    drawn: Option<Instant>,
    width: usize,
}

impl ProgressLine {
    const DELAY: Duration = Duration::from_secs(1);
    const EVERY: Duration = Duration::from_millis(100);

    fn draw(text: &str) {
        Python::attach(|py| {
            if let Ok(stderr) = py.import("sys").and_then(|sys| sys.getattr("stderr")) {
                let _ = stderr.call_method1("write", (text,));
                let _ = stderr.call_method0("flush");
            }
        });
    }
}

impl Observer for ProgressLine {
    fn started(&mut self, _n: usize) {
        self.started = Instant::now();
    }

    fn placed(&mut self, p: &Progress) {
        let now = Instant::now();
        let recent = self.drawn.is_some_and(|d| now - d < Self::EVERY);
        if now - self.started < Self::DELAY || recent {
            return;
        }
        self.drawn = Some(now);
        let line = format!(
            "fprev: revealing: {}/{} summands placed, {} queries in {} calls",
            p.placed, p.n, p.queries, p.calls
        );
        self.width = self.width.max(line.len());
        Self::draw(&format!("\r{line:<w$}", w = self.width));
    }

    fn finished(&mut self) {
        if self.drawn.is_some() {
            Self::draw(&format!("\r{:w$}\r", "", w = self.width));
        }
    }
}

#[pyfunction]
#[pyo3(signature = (call, n, dtype, algo, label, rows=None, may_fuse=None, accumulator=None, pack=true, progress=false, confirm=fprev::check::CONFIRM_TRIALS, arith=true))]
#[allow(clippy::too_many_arguments)]
fn reveal(
    py: Python<'_>,
    call: &Bound<'_, PyAny>,
    n: usize,
    dtype: &str,
    algo: &str,
    label: &str,
    rows: Option<usize>,
    may_fuse: Option<bool>,
    accumulator: Option<&str>,
    pack: bool,
    progress: bool,
    confirm: usize,
    arith: bool,
) -> PyResult<Tree> {
    let format = format(dtype)?;
    let algorithm: Algorithm = algo.parse().map_err(PyValueError::new_err)?;
    let described = Described {
        rows,
        accumulator: accumulator.map(self::format).transpose()?,
        may_fuse: may_fuse.unwrap_or(true),
    };
    let mut probe = probe(py, call, label, n, format, described)?;
    let opts = Options {
        algorithm,
        pack,
        ..Options::default()
    };
    let mut line = ProgressLine {
        started: Instant::now(),
        drawn: None,
        width: 0,
    };
    let observer: &mut dyn Observer = if progress { &mut line } else { &mut Silent };
    let revelation = fprev::reveal::reveal_observed(&mut probe, &opts, observer)
        .map_err(|e| from_probe(&mut probe, e))?;
    for note in &revelation.notes {
        PyErr::warn(
            py,
            &py.get_type::<PyRuntimeWarning>(),
            &std::ffi::CString::new(note.as_str()).unwrap_or_default(),
            2,
        )?;
    }
    let mut stats = revelation.stats;
    let mut arithmetic = None;
    let confirmation = if confirm > 0 {
        let mut why_not = String::new();
        let report = if arith {
            let options = ArithOptions {
                trials: confirm,
                ..ArithOptions::default()
            };
            let confirmed = confirm_arithmetic(&mut probe, &revelation.tree, None, &options, true)
                .map_err(|e| from_probe(&mut probe, e))?;
            let report = confirmed.report;
            match confirmed.arithmetic {
                Some(Ok(found)) => {
                    stats.arithmetic_calls = found.calls;
                    arithmetic = Some(found.model);
                }
                Some(Err(Error::BlackBox(why))) => why_not = format!(" ({why})"),
                Some(Err(e)) => return Err(from_probe(&mut probe, e)),
                None => {}
            }
            report
        } else {
            check_row(&revelation.tree, &mut probe, confirm, 0, 0)
                .map_err(|e| from_probe(&mut probe, e))?
        };
        if let Some(m) = &report.mismatch {
            let message = format!(
                "{label}: the order is revealed, but a replay of it in plain rounded additions \
                 ({} or wider) gave {:e} where {label} gave {:e} on random input {} ({}): it does \
                 not add as a tree of plain additions{why_not}; tree.confirmed is False",
                fprev::Probe::accumulator(&probe),
                m.replayed,
                m.black_box,
                m.trial + 1,
                m.kind
            );
            PyErr::warn(
                py,
                &py.get_type::<UnconfirmedWarning>(),
                &std::ffi::CString::new(message).unwrap_or_default(),
                2,
            )?;
        }
        Some(Confirmation::from(&report))
    } else {
        None
    };
    Ok(Tree {
        doc: TreeDocument {
            tree: revelation.tree,
            dtype: Some(format),
            probe: Some(label.to_string()),
            stats: Some(stats),
            confirmation,
            arithmetic,
            inferred: None,
        },
    })
}

/// `None` when `call_a` and `call_b` return the same bits on `trials`
/// random inputs of `n` values of `dtype`, else what differed.
#[pyfunction]
#[pyo3(signature = (call_a, call_b, n, dtype, label_a, label_b, trials, seed=0))]
#[allow(clippy::too_many_arguments)]
fn same_bits_(
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
    let outcome = same_bits(&mut a, &mut b, trials, seed).map_err(|e| {
        let taken = a.take_exception().or_else(|| b.take_exception());
        taken.unwrap_or_else(|| to_py(e))
    })?;
    Ok(outcome.err().map(|mut d| {
        d.left_name = label_a.to_string();
        d.right_name = label_b.to_string();
        d.to_string()
    }))
}

#[pyfunction]
#[pyo3(signature = (tree, call, trials, dtype, label, rows=None, row=0, seed=0))]
#[allow(clippy::too_many_arguments)]
fn check(
    py: Python<'_>,
    tree: &Tree,
    call: &Bound<'_, PyAny>,
    trials: usize,
    dtype: Option<&str>,
    label: &str,
    rows: Option<usize>,
    row: usize,
    seed: u64,
) -> PyResult<Check> {
    let format = match dtype {
        Some(d) => self::format(d)?,
        None => tree.doc.dtype.unwrap_or(Format::F32),
    };
    let described = Described {
        rows,
        ..Described::default()
    };
    let mut probe = probe(py, call, label, tree.n(), format, described)?;
    let report = match &tree.doc.arithmetic {
        Some(model) => {
            let models = std::slice::from_ref(model);
            check_models(tree.tree(), models, &mut probe, trials, seed, row).map(|(r, _)| r)
        }
        None => check_row(tree.tree(), &mut probe, trials, seed, row),
    }
    .map_err(|e| from_probe(&mut probe, e))?;
    let declared = fprev::Probe::accumulator(&probe);
    Ok(Check {
        ok: report.mismatch.is_none(),
        trials: report.trials,
        accumulator: report.accumulator.map(Format::name),
        message: report.summary("the tree", label, format, declared),
        mismatch: report.mismatch.as_ref().map(|m| m.trial),
        replayed: report.mismatch.as_ref().map(|m| m.replayed),
        returned: report.mismatch.as_ref().map(|m| m.black_box),
        input: report.mismatch.map(|m| m.input),
    })
}

/// `None` when `a` and `b` are one order (modulo child order), else the
/// smallest subtree of each that the other lacks.
#[pyfunction]
fn diff(a: &Tree, b: &Tree) -> PyResult<Option<(String, String)>> {
    if a.n() != b.n() {
        return Err(PyValueError::new_err(format!(
            "the trees sum {} and {} values",
            a.n(),
            b.n()
        )));
    }
    let side = |tree: &Tree, node| match node {
        Some(node) => tree.tree().subtree_text(node),
        None => "(every node is in the other tree)".to_string(),
    };
    Ok(a.tree()
        .diff(b.tree())
        .map(|d| (side(a, d.left), side(b, d.right))))
}

/// What `explain` found: the formula and its sentence (or `None`), the
/// closest formula and the first size it fails (or `None`), the sizes
/// revealed, and the ranges where a switch was not narrowed down.
type Explained = (
    Option<(String, String)>,
    Option<(String, usize)>,
    Vec<usize>,
    Vec<(usize, usize)>,
);

/// Reveals with `reveal(n)` (a `Tree`, or `None` where `n` could not be
/// revealed) at `sizes`, and between two regimes until the switch is exact,
/// and infers the one formula behind every tree (`fprev explain`).
#[pyfunction]
fn explain(reveal: &Bound<'_, PyAny>, sizes: Vec<usize>) -> PyResult<Explained> {
    let mut raised: Option<PyErr> = None;
    let each = |sizes: &[usize]| -> fprev::Result<Vec<SummationTree>> {
        let mut trees = Vec::new();
        for &n in sizes {
            let got = reveal.call1((n,)).and_then(|t| {
                if t.is_none() {
                    Ok(None)
                } else {
                    Ok(Some(t.extract::<PyRef<Tree>>()?.tree().clone()))
                }
            });
            match got {
                Ok(tree) => trees.extend(tree),
                Err(e) => {
                    raised = Some(e);
                    return Err(fprev::Error::Input("the reveal raised".into()));
                }
            }
        }
        Ok(trees)
    };
    let outcome = fprev::formula::infer::explain(&sizes, each);
    if let Some(e) = raised {
        return Err(e);
    }
    let (found, trees) = outcome.map_err(to_py)?;
    Ok((
        found.formula.map(|f| (f.to_string(), f.sentence())),
        found.closest.map(|(f, at)| (f.to_string(), at)),
        trees.iter().map(SummationTree::n).collect(),
        found.gaps,
    ))
}

/// A Python black box opened for each size of a sweep, which keeps what
/// the callable raised for [`sweep`] to raise in turn (the crate's sweep
/// drops its probes).
struct Stashing {
    probe: PythonProbe,
    raised: std::rc::Rc<std::cell::RefCell<Option<PyErr>>>,
}

impl Stashing {
    fn kept<T>(&mut self, r: fprev::Result<T>) -> fprev::Result<T> {
        if r.is_err()
            && let Some(e) = self.probe.take_exception()
        {
            *self.raised.borrow_mut() = Some(e);
        }
        r
    }
}

impl fprev::Probe for Stashing {
    fn n(&self) -> usize {
        self.probe.n()
    }
    fn format(&self) -> Format {
        self.probe.format()
    }
    fn accumulator(&self) -> Format {
        self.probe.accumulator()
    }
    fn may_fuse(&self) -> bool {
        self.probe.may_fuse()
    }
    fn max_batch(&self) -> usize {
        self.probe.max_batch()
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> fprev::Result<()> {
        let r = self.probe.sum(inputs, out);
        self.kept(r)
    }
    fn sum_batch(&mut self, batch: &fprev::probe::Batch, out: &mut [f64]) -> fprev::Result<()> {
        let r = self.probe.sum_batch(batch, out);
        self.kept(r)
    }
    fn multiplies(&self) -> bool {
        self.probe.multiplies()
    }
    fn dot(&mut self, rows: &[f64], y: &[f64], out: &mut [f64]) -> fprev::Result<()> {
        let r = self.probe.dot(rows, y, out);
        self.kept(r)
    }
}

/// The reveals of a sweep over sizes, as `fprev sweep` prints them.
#[pyclass(name = "Sweep", module = "fprev", frozen)]
struct SweepReport {
    sweep: fprev::sweep::Sweep,
}

#[pymethods]
impl SweepReport {
    /// The sizes revealed, in increasing order.
    #[getter]
    fn sizes(&self) -> Vec<usize> {
        self.sweep.points.iter().map(|p| p.n).collect()
    }

    /// Each size's tree (`None` where the reveal found the black box broken
    /// or order-independent), with its arithmetic where plain additions
    /// did not replay it.
    #[getter]
    fn trees(&self) -> Vec<Option<Tree>> {
        self.sweep
            .points
            .iter()
            .map(|p| match &p.outcome {
                fprev::sweep::Outcome::Tree(t) | fprev::sweep::Outcome::Unconfirmed(t) => {
                    Some(Tree {
                        doc: TreeDocument {
                            stats: p.stats,
                            arithmetic: p.arithmetic.clone(),
                            dtype: Some(self.sweep.format),
                            probe: Some(self.sweep.spec.clone()),
                            ..TreeDocument::new(t.clone())
                        },
                    })
                }
                _ => None,
            })
            .collect()
    }

    /// Where the order's name changes: `(n, from, to)`, `n` the first size
    /// of the new order.
    #[getter]
    fn change_points(&self) -> Vec<(usize, String, String)> {
        self.sweep
            .change_points()
            .into_iter()
            .map(|c| (c.n, c.from, c.to))
            .collect()
    }

    /// The one formula that regenerates every tree revealed, if any.
    #[getter]
    fn formula(&self) -> Option<String> {
        self.sweep
            .formula()
            .and_then(|i| i.formula)
            .map(|f| f.to_string())
    }

    /// The sweep as the JSON of `fprev sweep --format json`.
    fn to_json(&self) -> String {
        self.sweep.to_json()
    }

    fn __str__(&self) -> String {
        self.sweep.to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "<fprev.Sweep of {} at {} sizes>",
            self.sweep.spec,
            self.sweep.points.len()
        )
    }
}

/// The sizes `fprev sweep -n` takes: `A..B`, `A..B:S`, lists of them.
#[pyfunction]
fn parse_sizes(text: &str) -> PyResult<Vec<usize>> {
    let sizes: fprev::sweep::Sizes = text.parse().map_err(PyValueError::new_err)?;
    Ok(sizes.0)
}

#[pyfunction]
#[pyo3(signature = (call, sizes, dtype, label, rows=None, may_fuse=None, accumulator=None, confirm=fprev::check::CONFIRM_TRIALS))]
#[allow(clippy::too_many_arguments)]
fn sweep(
    py: Python<'_>,
    call: &Bound<'_, PyAny>,
    sizes: Vec<usize>,
    dtype: &str,
    label: &str,
    rows: Option<usize>,
    may_fuse: Option<bool>,
    accumulator: Option<&str>,
    confirm: usize,
) -> PyResult<SweepReport> {
    let format = format(dtype)?;
    let described = Described {
        rows,
        accumulator: accumulator.map(self::format).transpose()?,
        may_fuse: may_fuse.unwrap_or(true),
    };
    // The first size opened here: a bad callable raises what reveal raises.
    if let Some(&n) = sizes.first() {
        probe(py, call, label, n, format, described)?;
    }
    let raised = std::rc::Rc::new(std::cell::RefCell::new(None));
    let (callable, name, kept) = (call.clone().unbind(), label.to_string(), raised.clone());
    let mut open =
        move |_: &str, po: &fprev::probe::ProbeOptions| -> fprev::Result<Box<dyn fprev::Probe>> {
            let n = po.n.expect("a sweep opens each size");
            let probe = Python::attach(|py| {
                PythonProbe::from_callable(py, callable.bind(py), &name, n, format, described)
            })?;
            Ok(Box::new(Stashing {
                probe,
                raised: kept.clone(),
            }))
        };
    let probe_opts = fprev::probe::ProbeOptions {
        format,
        ..Default::default()
    };
    let outcome = fprev::sweep::sweep_with(
        label,
        &probe_opts,
        &fprev::sweep::Sizes(sizes),
        &[None],
        &Options::default(),
        confirm,
        &mut open,
        &mut fprev::reveal::Silent,
    );
    if let Some(e) = raised.borrow_mut().take() {
        return Err(e);
    }
    Ok(SweepReport {
        sweep: outcome.map_err(to_py)?,
    })
}

/// A 1-D float64 or float32 array's values, for the reducers.
enum Floats<'py> {
    F64(PyReadonlyArray1<'py, f64>),
    F32(PyReadonlyArray1<'py, f32>),
}

impl<'py> Floats<'py> {
    fn of(x: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = x.extract() {
            return Ok(Floats::F64(a));
        }
        if let Ok(a) = x.extract() {
            return Ok(Floats::F32(a));
        }
        let what = match (x.getattr("dtype"), x.getattr("ndim")) {
            (Ok(d), Ok(k)) => format!("a {k}-D array of {d}"),
            _ => x.get_type().name()?.to_string(),
        };
        Err(PyTypeError::new_err(format!(
            "expected a 1-D NumPy array of float64 or float32, got {what}"
        )))
    }
}

/// `f(values)` on a contiguous copy when the array is strided.
fn with_slice<T: Copy + numpy::Element, R>(
    a: &PyReadonlyArray1<'_, T>,
    f: impl FnOnce(&[T]) -> R,
) -> R {
    match a.as_slice() {
        Ok(s) => f(s),
        Err(_) => f(&a.as_array().to_vec()),
    }
}

#[pyfunction]
#[pyo3(signature = (x, threads=None))]
fn binary_tree_sum_(x: &Bound<'_, PyAny>, threads: Option<usize>) -> PyResult<f64> {
    Ok(match Floats::of(x)? {
        Floats::F64(a) => with_slice(&a, |s| match threads {
            Some(t) => binary_tree_sum_threads(s, t),
            None => binary_tree_sum(s),
        }),
        Floats::F32(a) => with_slice(&a, |s| match threads {
            Some(t) => binary_tree_sum_threads(s, t),
            None => binary_tree_sum(s),
        }) as f64,
    })
}

#[pyfunction]
#[pyo3(signature = (x, threads=None))]
fn prerounded_sum_(x: &Bound<'_, PyAny>, threads: Option<usize>) -> PyResult<f64> {
    Ok(match Floats::of(x)? {
        Floats::F64(a) => with_slice(&a, |s| match threads {
            Some(t) => prerounded_sum_threads(s, t),
            None => prerounded_sum(s),
        }),
        Floats::F32(a) => with_slice(&a, |s| match threads {
            Some(t) => prerounded_sum_threads(s, t),
            None => prerounded_sum(s),
        }) as f64,
    })
}

/// `x` (exact as float64) summed in `tree`'s order, every partial sum
/// rounded to `accumulator`.
#[pyfunction]
#[pyo3(signature = (tree, x, dtype, accumulator=None))]
fn replay(
    tree: &Tree,
    x: PyReadonlyArray1<'_, f64>,
    dtype: &str,
    accumulator: Option<&str>,
) -> PyResult<f64> {
    // A given accumulator, else the tree's arithmetic model, else the
    // input's format.
    let replay = match (accumulator, &tree.doc.arithmetic) {
        (Some(a), _) => Replay::new(tree.tree(), format(a)?),
        (None, Some(model)) => Replay::with_arithmetic(tree.tree(), model),
        (None, None) => Replay::new(tree.tree(), format(dtype)?),
    };
    let len = x.as_array().len();
    if len != tree.n() {
        return Err(PyValueError::new_err(format!(
            "the tree sums {} values, x holds {}",
            tree.n(),
            len
        )));
    }
    Ok(with_slice(&x, |s| replay.sum(s)))
}

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
    m.add_class::<Tree>()?;
    m.add_class::<Check>()?;
    m.add("BlackBoxError", py.get_type::<BlackBoxError>())?;
    m.add("UnconfirmedWarning", py.get_type::<UnconfirmedWarning>())?;
    m.add(
        "OrderIndependentError",
        py.get_type::<OrderIndependentError>(),
    )?;
    m.add_function(wrap_pyfunction!(reveal, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(parse_sizes, m)?)?;
    m.add_class::<SweepReport>()?;
    let sizes: fprev::sweep::Sizes = fprev::formula::infer::EXPLAIN_SIZES
        .parse()
        .map_err(PyValueError::new_err)?;
    m.add("EXPLAIN_SIZES", sizes.0)?;
    m.add("same_bits", wrap_pyfunction!(same_bits_, m)?)?;
    m.add("binary_tree_sum", wrap_pyfunction!(binary_tree_sum_, m)?)?;
    m.add("prerounded_sum", wrap_pyfunction!(prerounded_sum_, m)?)?;
    Ok(())
}
