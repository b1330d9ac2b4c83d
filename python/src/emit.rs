//! `fprev.emit`: a function reproducing a black box's bits, as source
//! (the library's emit workflow, as `fprev emit` runs it).

use fprev::emit::{self, Language};
use fprev::formula::Formula;
use fprev::probe::ProbeOptions;
use fprev::reveal::Silent;
use fprev::workflow::emit::{CheckOn, Emitted, Prepared, prepare_cached, write};
use pyo3::prelude::*;

use crate::black_box::format;
use crate::errors::{OrderIndependentError, UnconfirmedWarning, to_py};
use fprev_present::front::FrontEnd;

/// The source of `name` (default: the spec's) in `language` computing what
/// `spec` computes in `dtype`; with `check` (sizes), compiled and run
/// against the black box there first. Returns the source and the name.
#[pyfunction]
#[pyo3(signature = (spec, language, dtype, name=None, formula=None, check_sizes=None, trials=3, offset=None, shape=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn emit_source(
    py: Python<'_>,
    spec: &str,
    language: &str,
    dtype: &str,
    name: Option<String>,
    formula: Option<&str>,
    check_sizes: Option<Vec<usize>>,
    trials: usize,
    offset: Option<&str>,
    shape: Option<[usize; 3]>,
) -> PyResult<(String, String)> {
    let language: Language = language
        .parse()
        .map_err(pyo3::exceptions::PyValueError::new_err)?;
    // Refused before any work, as the command line does.
    if let Some(name) = &name {
        emit::valid_name(name, language).map_err(to_py)?;
    }
    let opts = ProbeOptions {
        format: format(dtype)?,
        offset: offset.map(str::parse).transpose().map_err(to_py)?,
        shape,
        ..ProbeOptions::default()
    };
    let given = match formula {
        Some(f) => Some(
            f.parse::<Formula>()
                .map_err(pyo3::exceptions::PyValueError::new_err)?,
        ),
        None => None,
    };
    let spec = spec.to_string();
    // Every opening, --check's too, where the order is found.
    let open = |o: &ProbeOptions| fprev::open(&spec, &o.where_found(&opts));
    let mut unkept = None;
    let found = py.detach(|| -> fprev::Result<Result<_, Refused>> {
        let mut open = open;
        // The formula given, else the cache's (as `fprev emit` reads it),
        // else the one explain finds, kept for the next call.
        let given = given.map(|f| (f, "The order was given (formula=)".to_string()));
        let done = prepare_cached(
            &spec,
            &opts,
            given,
            &fprev::workflow::cache::User,
            &mut open,
            &mut Silent,
        )?;
        unkept = done.unkept;
        let (plan, mut what) = match done.prepared {
            Prepared::Ready { plan, what, .. } => (plan, what),
            Prepared::NoFormula => {
                return Ok(Err(Refused::Value(fprev_present::emit::no_formula(
                    &spec,
                    FrontEnd::Python,
                ))));
            }
            Prepared::OrderIndependent(why) => {
                return Ok(Err(Refused::OrderIndependent(
                    fprev_present::note::order_independent(&why),
                )));
            }
            Prepared::NotConfirmed(n, why) => {
                return Ok(Err(Refused::Unconfirmed(
                    fprev_present::emit::not_confirmed(n, &why, &spec, FrontEnd::Python),
                )));
            }
        };
        // Which alignment the code matches, as `fprev emit` says it.
        if let Ok(parsed) = spec.parse::<fprev::Spec>()
            && parsed.takes_offset()
        {
            let line = fprev_present::alignment::matched(&spec, opts.offset, plan.element);
            what.push(format!("{line}."));
        }
        let name = name.unwrap_or_else(|| emit::default_name(&spec, plan.element));
        // None given: the command's default for this plan.
        let check = check_sizes.map(|sizes| CheckOn {
            sizes: (!sizes.is_empty()).then_some(sizes),
            trials,
        });
        let source = match write(
            &plan,
            language,
            &name,
            &what,
            &spec,
            check.as_ref(),
            &mut open,
            &mut |_, _| {},
        )? {
            Emitted::Source { source, .. } => source,
            Emitted::Differs(checked) => {
                let difference = checked.difference(language, &spec).unwrap_or_default();
                return Ok(Err(Refused::Unconfirmed(difference)));
            }
        };
        Ok(Ok((source, name)))
    });
    if let Some(e) = unkept {
        PyErr::warn(
            py,
            &py.get_type::<pyo3::exceptions::PyRuntimeWarning>(),
            &std::ffi::CString::new(crate::errors::line(&e)).unwrap_or_default(),
            1,
        )?;
    }
    match found.map_err(to_py)? {
        Ok(found) => Ok(found),
        Err(Refused::Unconfirmed(why)) => Err(UnconfirmedWarning::new_err(why)),
        Err(Refused::OrderIndependent(why)) => Err(OrderIndependentError::new_err(why)),
        Err(Refused::Value(why)) => Err(pyo3::exceptions::PyValueError::new_err(why)),
    }
}

/// Why no source is returned.
enum Refused {
    /// The call cannot be answered (no formula): `ValueError`.
    Value(String),
    /// The code would not give the black box's bits: `UnconfirmedWarning`.
    Unconfirmed(String),
    /// No order shows in the black box's bits: `OrderIndependentError`.
    OrderIndependent(String),
}
