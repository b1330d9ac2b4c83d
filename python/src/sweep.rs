//! `fprev.sweep`: reveals across sizes, as `fprev sweep` prints them.

use fprev::document::TreeDocument;
use fprev::probe::python::PythonProbe;
use fprev::reveal::Options;
use fprev_present::sweep::Table;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::black_box::{described, format, probe};
use crate::errors::to_py;
use crate::tree::Tree;

/// A Python black box opened for each size of a sweep, which keeps what
/// the callable raised for [`sweep`] to raise in turn (the crate's sweep
/// records a size that broke as text, and goes on).
struct Stashing {
    probe: PythonProbe,
    raised: std::rc::Rc<std::cell::RefCell<Option<PyErr>>>,
}

impl Stashing {
    /// Runs one call of the probe, keeping aside the exception behind
    /// its error.
    fn call<T>(
        &mut self,
        f: impl FnOnce(&mut PythonProbe) -> fprev::Result<T>,
    ) -> fprev::Result<T> {
        let r = f(&mut self.probe);
        if let Err(fprev::Error::Raised { raised, .. }) = &r
            && let Some(raised) = raised.downcast_ref::<PyErr>()
        {
            *self.raised.borrow_mut() = Some(Python::attach(|py| raised.clone_ref(py)));
        }
        r
    }
}

fprev::forward_probe!([] Stashing, |s| s.probe, through call);

/// The reveals of a sweep over sizes, as `fprev sweep` prints them.
#[pyclass(name = "Sweep", module = "fprev", frozen)]
pub(crate) struct SweepReport {
    sweep: fprev::workflow::sweep::Sweep,
}

#[pymethods]
impl SweepReport {
    /// The sizes revealed, in increasing order.
    #[getter]
    fn sizes(&self) -> Vec<usize> {
        self.sweep.points.iter().map(|p| p.n).collect()
    }

    /// Each size's tree (`None` where the reveal found the black box broken,
    /// order-independent or varying from call to call), with its arithmetic
    /// where plain additions did not replay it.
    #[getter]
    fn trees(&self) -> Vec<Option<Tree>> {
        self.sweep
            .points
            .iter()
            .map(|p| match &p.outcome {
                fprev::workflow::sweep::Finding::Tree(t)
                | fprev::workflow::sweep::Finding::Unconfirmed(t) => {
                    let mut doc = TreeDocument::new(t.clone());
                    doc.stats = p.stats;
                    doc.arithmetic = p.arithmetic.clone();
                    doc.dtype = Some(self.sweep.format);
                    doc.probe = Some(self.sweep.spec.clone());
                    doc.offset = self.sweep.offset;
                    Some(Tree { doc })
                }
                _ => None,
            })
            .collect()
    }

    /// The sizes whose answers varied from call to call, each with what
    /// repeating the same inputs showed (how many varied, the spread).
    #[getter]
    fn varies(&self) -> Vec<(usize, String)> {
        self.sweep
            .points
            .iter()
            .filter_map(|p| Some((p.n, fprev_present::note::variation(p.variation()?))))
            .collect()
    }

    /// Where the order's name changes: `(n, from, to)`, `n` the first size
    /// of the new order (none at or across a size that varied).
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
        Table(&self.sweep).to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "<fprev.Sweep of {} at {} sizes>",
            self.sweep.spec,
            self.sweep.points.len()
        )
    }
}

/// The sizes `fprev sweep -n` takes: `A..B`, `A..B:S`, lists of them;
/// `summands`: sizes to reveal, which this machine must have the memory
/// for (else batch sizes).
#[pyfunction]
#[pyo3(signature = (text, summands=true))]
pub(crate) fn parse_sizes(text: &str, summands: bool) -> PyResult<Vec<usize>> {
    let sizes = match summands {
        true => text.parse(),
        false => fprev::sizes::Sizes::list(text),
    };
    Ok(sizes.map_err(PyValueError::new_err)?.0)
}

#[pyfunction]
#[pyo3(signature = (call, sizes, dtype, label, rows=None, may_fuse=None, accumulator=None, offset=None, confirm=fprev::check::CONFIRM_TRIALS, runs=0))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn sweep(
    py: Python<'_>,
    call: &Bound<'_, PyAny>,
    sizes: Vec<usize>,
    dtype: &str,
    label: &str,
    rows: Option<usize>,
    may_fuse: Option<bool>,
    accumulator: Option<&str>,
    offset: Option<&str>,
    confirm: usize,
    runs: usize,
) -> PyResult<SweepReport> {
    let format = format(dtype)?;
    let described = described(rows, may_fuse, accumulator, offset)?;
    // The first size opened here: a bad callable raises what reveal raises.
    if let Some(&n) = sizes.first() {
        probe(py, call, label, n, format, described)?;
    }
    let raised = std::rc::Rc::new(std::cell::RefCell::new(None));
    let (callable, name, kept) = (call.clone().unbind(), label.to_string(), raised.clone());
    let mut open = move |po: &fprev::probe::ProbeOptions| -> fprev::Result<Box<dyn fprev::Probe>> {
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
        offset: described.offset,
        ..Default::default()
    };
    let outcome = fprev::workflow::sweep::sweep_with(
        label,
        &probe_opts,
        &fprev::sizes::Sizes(sizes),
        &[None],
        &Options::default(),
        confirm,
        runs,
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
