//! `fprev.explain`: the formula behind the trees of several sizes (the
//! library's explain workflow over a Python callable).

use fprev::SummationTree;
use fprev::probe::ProbeOptions;
use fprev::reveal::Options;
use fprev::reveal::Silent;
use fprev::workflow::{self, Confirm, ExplainSizes, Explained};
use pyo3::prelude::*;

use crate::black_box::{described, format, opener};
use crate::errors::{OrderIndependentError, to_py};
use crate::reveal::varies_error;

/// What `explain` found: the formula and its sentence (or `None`), the
/// closest formula and the first size it fails (or `None`), the sizes
/// revealed, the ranges where a switch was not narrowed down, the sizes
/// past those revealed where the formula was checked, and all that in
/// words (`str(Explanation)`, from `fprev_present::explain::brief`).
type Found = (
    Option<(String, String)>,
    Option<(String, usize)>,
    Vec<usize>,
    Vec<(usize, usize)>,
    Vec<usize>,
    String,
);

/// Reveals `call` at `sizes`, and between two regimes until the switch is
/// exact, and infers the one formula behind every tree (`fprev explain`).
#[pyfunction]
#[pyo3(signature = (call, sizes, verify, budget, dtype, label, rows=None, may_fuse=None, accumulator=None, offset=None, confirm=fprev::check::CONFIRM_TRIALS))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn explain(
    py: Python<'_>,
    call: &Bound<'_, PyAny>,
    sizes: Vec<usize>,
    verify: Vec<usize>,
    budget: bool,
    dtype: &str,
    label: &str,
    rows: Option<usize>,
    may_fuse: Option<bool>,
    accumulator: Option<&str>,
    offset: Option<&str>,
    confirm: usize,
) -> PyResult<Found> {
    let format = format(dtype)?;
    let described = described(rows, may_fuse, accumulator, offset)?;
    let confirm = Confirm {
        trials: confirm,
        ..Confirm::default()
    };
    let sizes = ExplainSizes {
        reveal: sizes,
        verify,
        budget: budget.then_some(fprev::workflow::VERIFY_BUDGET),
    };
    let explained = workflow::explain(
        &sizes,
        &ProbeOptions {
            format,
            offset: described.offset,
            ..ProbeOptions::default()
        },
        &Options::default(),
        &confirm,
        label,
        &mut opener(py, call, label, format, described, None),
        &mut Silent,
    );
    match explained.map_err(to_py)? {
        Explained::Found {
            inference,
            trees,
            verified,
        } => {
            let sizes: Vec<usize> = trees.iter().map(SummationTree::n).collect();
            let text = fprev_present::explain::brief(&inference, &sizes, &verified);
            Ok((
                inference
                    .formula
                    .map(|f| (f.to_string(), fprev_present::formula::sentence(&f))),
                inference.closest.map(|(f, at)| (f.to_string(), at)),
                sizes,
                inference.gaps,
                verified,
                text,
            ))
        }
        Explained::OrderIndependent(why) => Err(OrderIndependentError::new_err(
            fprev_present::note::order_independent(&why),
        )),
        Explained::Varies(v) => Err(varies_error(py, v, label, format)),
    }
}
