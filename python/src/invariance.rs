//! `fprev.invariance`: a study of one black box (a spec or a Python
//! callable) under each batch size, output position and thread count (the
//! library's invariance workflow), or, one process each, under each value
//! of environment variables (the library's workflow runs the processes the
//! package hands it as a callable, and joins their study files); and
//! `fprev.Study`, what it comes to.

use std::collections::BTreeMap;

use fprev::invariance::{self as study, Knob, Setting, formula_of};
use fprev::probe::python::Described;
use fprev::probe::{Offset, ProbeOptions};
use fprev::spec::Spec;
use fprev::workflow::{self, Confirm, Request, Turned, Varied};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::black_box::{format, opener};
use crate::errors::to_py;
use crate::tree::Tree;

/// A case as Python sees it: its setting, what was found, the tree and
/// whether it was proven.
type CaseTuple = (BTreeMap<String, String>, &'static str, Option<Tree>, bool);

/// A setting as a dict, knob name to value.
fn dict(s: &Setting) -> BTreeMap<String, String> {
    s.0.iter().cloned().collect()
}

/// An invariance study: the reveals of one black box under each setting,
/// and what they come to.
#[pyclass(name = "Study", module = "fprev", frozen)]
pub(crate) struct Study {
    study: study::Study,
    title: String,
}

#[pymethods]
impl Study {
    /// Reads a study file (`to_json`, `fprev invariance --format json`);
    /// `title` heads its report.
    #[staticmethod]
    #[pyo3(signature = (text, title="a study file"))]
    fn from_json(text: &str, title: &str) -> PyResult<Study> {
        Ok(Study {
            study: study::Study::parse(text).map_err(to_py)?,
            title: title.to_string(),
        })
    }

    /// Whether every case found one confirmed order, the same (and the
    /// same arithmetic where both had a model).
    #[getter]
    fn invariant(&self) -> bool {
        self.study.invariant()
    }

    /// Whether each output (each value of the knobs but `batch`) found one
    /// confirmed order at every batch size (true where no batch varied).
    #[getter]
    fn batch_invariant(&self) -> bool {
        self.study.batch_invariant()
    }

    /// The knobs whose value alone changed what was found.
    #[getter]
    fn changing(&self) -> Vec<String> {
        self.study.verdict().changing
    }

    /// The fewest settings knobs (threads, environment variables) that,
    /// fixed, give each output one confirmed order; `None` when none do.
    #[getter]
    fn pin(&self) -> Option<Vec<String>> {
        self.study.verdict().pin
    }

    /// The values of the settings knobs under which every output found one
    /// order at every batch size (`[{}]` where no settings knob varied);
    /// empty where no batch varied or none is batch invariant.
    #[getter]
    fn batch_invariant_under(&self) -> Vec<BTreeMap<String, String>> {
        self.study
            .verdict()
            .batch_invariant_under
            .iter()
            .map(dict)
            .collect()
    }

    /// Each case, in the order revealed: `(setting, found, tree, proven)`,
    /// `found` one of `order`, `unconfirmed`, `order-independent`,
    /// `varies`, `failed`; `tree` its tree (`None` without one);
    /// `proven` whether a neighbour's tree was proven rather than revealed.
    #[getter]
    fn cases(&self) -> Vec<CaseTuple> {
        self.study
            .cases
            .iter()
            .map(|c| {
                let tree = c.observed.document().map(|d| Tree { doc: d.clone() });
                (dict(&c.setting), c.observed.kind(), tree, c.proven)
            })
            .collect()
    }

    /// The regimes along knob `axis` for each value of the other knobs:
    /// `[{"setting": {...}, "runs": [{"values": [...], "span": "1..4",
    /// "group": 0, "found": "order", "formula": "sequential", "tree":
    /// Tree}, ...]}, ...]`, runs of consecutive values that found the same
    /// thing (`group` numbers what was found); `formula` is `None` where
    /// none of the order language gives the tree.
    #[pyo3(signature = (axis="batch"))]
    fn regimes<'py>(&self, py: Python<'py>, axis: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let mut out = Vec::new();
        for r in self.study.regimes(axis) {
            let mut runs = Vec::new();
            for run in &r.runs {
                let observed = &self.study.cases[run.case].observed;
                let doc = observed.document();
                let entry = pyo3::types::PyDict::new(py);
                entry.set_item("values", &run.values)?;
                entry.set_item("span", run.span())?;
                entry.set_item("group", run.group)?;
                entry.set_item("found", observed.kind())?;
                entry.set_item("formula", doc.and_then(|d| formula_of(d.tree())))?;
                entry.set_item("tree", doc.map(|d| Tree { doc: d.clone() }))?;
                runs.push(entry);
            }
            let regime = pyo3::types::PyDict::new(py);
            regime.set_item("setting", dict(&r.rest))?;
            regime.set_item("runs", runs)?;
            out.push(regime.into_any());
        }
        Ok(out)
    }

    /// The study file (`fprev invariance --format json`).
    fn to_json(&self) -> String {
        fprev_present::invariance::json(&self.study)
    }

    fn __bool__(&self) -> bool {
        self.study.invariant()
    }

    /// The report `fprev invariance` prints.
    fn __str__(&self) -> String {
        fprev_present::invariance::text(&self.study, &self.title)
    }

    fn __repr__(&self) -> String {
        let v = self.study.verdict();
        let verdict = match (v.invariant, v.changing.is_empty()) {
            (true, _) => "invariant".to_string(),
            (false, true) => "not invariant".to_string(),
            (false, false) => format!("not invariant: changes with {}", v.changing.join(", ")),
        };
        format!(
            "<fprev.Study of {}: {} cases, {verdict}>",
            self.title,
            self.study.cases.len()
        )
    }
}

/// Studies `black_box` (a spec, or a callable summing `batch`'s rows of
/// `n` a call) in this process; with `one_process` (the study of one
/// environment, in a fresh process of its own), nothing need vary here.
/// With `env` (a variable's name and its values) or more than one of
/// `processes`, each combination of the environment runs in `processes`
/// fresh processes instead, each one's study file the text `fresh` returns
/// when handed the variables to set (`[(name, value), ...]`); what it
/// raises ends the study with it.
#[pyfunction]
#[pyo3(signature = (black_box, n, dtype, label, shape=None, threads=Vec::new(), batch=None, rows=Vec::new(), columns=Vec::new(), offsets=Vec::new(), confirm=fprev::check::CONFIRM_TRIALS, one_process=false, env=Vec::new(), processes=1, fresh=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn invariance(
    py: Python<'_>,
    black_box: &Bound<'_, PyAny>,
    n: usize,
    dtype: &str,
    label: &str,
    shape: Option<[usize; 3]>,
    threads: Vec<usize>,
    batch: Option<Vec<usize>>,
    rows: Vec<String>,
    columns: Vec<usize>,
    offsets: Vec<String>,
    confirm: usize,
    one_process: bool,
    env: Vec<(String, Vec<String>)>,
    processes: usize,
    fresh: Option<Bound<'_, PyAny>>,
) -> PyResult<Study> {
    let format = format(dtype)?;
    let turned = Turned {
        threads,
        batch,
        rows,
        columns,
        offsets: offsets
            .iter()
            .map(|o| o.parse::<Offset>())
            .collect::<fprev::Result<_>>()
            .map_err(to_py)?,
    };
    let text: Option<String> = black_box.extract().ok();
    if text.is_none() && !black_box.is_callable() {
        return Err(PyTypeError::new_err(format!(
            "expected a black box's spec (\"numpy:gemm\") or a callable, got {}",
            black_box.get_type().name()?
        )));
    }
    let is_spec = text.is_some();
    // A callable's batch is its rows a call: the shape M,1,n, as the
    // `python:` spec reads one.
    let shape = match (is_spec, shape) {
        (true, shape) => shape,
        (false, Some(_)) => {
            return Err(PyValueError::new_err(
                "shape is a spec's product M,N,K: a callable sums batch rows of n a call",
            ));
        }
        (false, None) => turned.batch.as_ref().map(|_| [1, 1, n]),
    };
    if !is_spec && !turned.threads.is_empty() {
        return Err(PyValueError::new_err(
            "threads: fprev cannot set a callable's thread count: give a spec that takes one \
             (blas:…, reduce:…) or vary the callable's own setting in a loop",
        ));
    }
    let environment = env
        .iter()
        .map(|(name, values)| {
            let values: Vec<&str> = values.iter().map(String::as_str).collect();
            Knob::environment(name, &values)
        })
        .collect::<fprev::Result<Vec<_>>>()
        .map_err(to_py)?;
    let in_fresh = !environment.is_empty() || processes != 1;
    if in_fresh && fresh.is_none() {
        return Err(PyValueError::new_err(
            "env and processes: give fresh, the study file of a fresh process",
        ));
    }
    // The fresh processes read the spec and turn the knobs inside, and say
    // what is wrong with either under their setting.
    let spec: Option<Spec> = match &text {
        Some(text) if !in_fresh => Some(text.parse().map_err(to_py)?),
        _ => None,
    };
    let knobs = match in_fresh {
        true => Vec::new(),
        false => turned
            .knobs(spec.as_ref().and_then(Spec::op), shape)
            .map_err(to_py)?,
    };
    if knobs.is_empty() && !one_process && !in_fresh {
        return Err(PyValueError::new_err(
            "nothing varies: give batch, rows, columns, threads or env",
        ));
    }
    let request = Request {
        probe: ProbeOptions {
            n: Some(n),
            shape,
            format,
            ..ProbeOptions::default()
        },
        confirm: Confirm {
            trials: confirm,
            ..Confirm::default()
        },
        ..Request::default()
    };
    let observer = &mut fprev::reveal::Silent;
    let varied = Varied {
        inside: knobs,
        environment,
        processes,
    };
    let mut fresh = |environ: &Setting| -> fprev::Result<study::Study> {
        let fresh = fresh
            .as_ref()
            .expect("given where a fresh process is asked");
        let text: String = fresh
            .call1((environ.0.clone(),))
            .and_then(|t| t.extract())
            .map_err(|e| fprev::Error::Raised {
                error: Box::new(fprev::Error::Input(e.to_string())),
                raised: Box::new(e),
            })?;
        study::Study::parse(&text)
    };
    let found = match &text {
        Some(text) => {
            let mut open = |o: &ProbeOptions| match &spec {
                Some(spec) => spec.open(o),
                None => text.parse::<Spec>()?.open(o),
            };
            workflow::study(label, &varied, &request, &mut open, &mut fresh, observer)
        }
        None => {
            let mut open = |o: &ProbeOptions| {
                let rows = Described {
                    rows: o.shape.map(|[m, _, _]| m),
                    offset: o.offset,
                    ..Described::default()
                };
                opener(py, black_box, label, format, rows, None)(o)
            };
            workflow::study(label, &varied, &request, &mut open, &mut fresh, observer)
        }
    };
    let title = match is_spec {
        true => fprev_present::invariance::title(label, n, shape),
        false => fprev_present::invariance::title(label, n, None),
    };
    Ok(Study {
        study: found.map_err(to_py)?,
        title,
    })
}
