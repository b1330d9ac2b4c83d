//! `fprev.reduce`: the reproducible reducers over NumPy arrays.

use fprev::reduce::{
    Replay, binary_tree_sum, binary_tree_sum_threads, prerounded_sum, prerounded_sum_threads,
};
use numpy::PyReadonlyArray1;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::black_box::format;
use crate::tree::Tree;

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
pub(crate) fn binary_tree_sum_(x: &Bound<'_, PyAny>, threads: Option<usize>) -> PyResult<f64> {
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
pub(crate) fn prerounded_sum_(x: &Bound<'_, PyAny>, threads: Option<usize>) -> PyResult<f64> {
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
pub(crate) fn replay(
    tree: &Tree,
    x: PyReadonlyArray1<'_, f64>,
    dtype: &str,
    accumulator: Option<&str>,
) -> PyResult<f64> {
    // A given accumulator, else the tree's arithmetic model, else the
    // input's format.
    let replay = match (accumulator, &tree.doc.arithmetic) {
        (Some(a), _) => Replay::new(tree.tree()?, format(a)?),
        (None, Some(model)) => Replay::with_arithmetic(tree.tree()?, model),
        (None, None) => Replay::new(tree.tree()?, format(dtype)?),
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
