//! `fprev.explain`: the formula behind the trees of several sizes.

use fprev::SummationTree;
use pyo3::prelude::*;

use crate::errors::to_py;
use crate::tree::Tree;

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
pub(crate) fn explain(reveal: &Bound<'_, PyAny>, sizes: Vec<usize>) -> PyResult<Explained> {
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
