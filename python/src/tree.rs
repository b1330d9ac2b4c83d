//! `fprev.Tree`: a summation tree with where it came from, and `diff`.

use fprev::document::Confirmation;
use fprev::document::TreeDocument;
use fprev::{Format, SummationTree};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::to_py;

/// A summation tree, with where it came from.
#[pyclass(name = "Tree", module = "fprev", frozen)]
pub(crate) struct Tree {
    pub(crate) doc: TreeDocument,
}

impl Tree {
    /// The nodes, built from a formula on first use where this machine
    /// has the memory (a file's formula may give more summands than fit).
    pub(crate) fn tree(&self) -> PyResult<&SummationTree> {
        self.doc
            .buildable()
            .map_err(pyo3::exceptions::PyMemoryError::new_err)
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
    pub(crate) fn n(&self) -> usize {
        self.doc.n()
    }

    #[getter]
    fn dtype(&self) -> Option<&'static str> {
        self.doc.dtype.map(Format::name)
    }

    #[getter]
    fn label(&self) -> Option<&str> {
        self.doc.probe.as_deref()
    }

    /// Where its black box's input array started past a 64-byte boundary
    /// (`"1B"` bytes, `"1"` elements), where it was handed one at an
    /// offset; `None`: where NumPy's allocation puts it.
    #[getter]
    fn offset(&self) -> Option<String> {
        self.doc.offset.map(|o| o.to_string())
    }

    #[getter]
    fn depth(&self) -> PyResult<usize> {
        Ok(self.tree()?.depth())
    }

    #[getter]
    fn is_binary(&self) -> PyResult<bool> {
        Ok(self.tree()?.is_binary())
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
    /// Where the black box's order varies from call to call (the tree is
    /// then its skeleton): what its results showed and the joins that
    /// varied; `None` for the tree of one order.
    #[getter]
    fn varies<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(v) = &self.doc.varies else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("inputs", v.inputs)?;
        d.set_item("runs", v.runs)?;
        d.set_item("varied", v.varied)?;
        d.set_item("most_distinct", v.most_distinct)?;
        d.set_item("spread_ulps", v.spread_ulps)?;
        d.set_item("spread_relative", v.spread_relative)?;
        d.set_item("condition", v.condition)?;
        if let Some(s) = &v.skeleton {
            let joins: Vec<(usize, usize)> =
                s.varying.iter().map(|j| (j.first, j.leaves)).collect();
            d.set_item("varying_joins", joins)?;
            d.set_item("repeats", s.repeats)?;
            d.set_item("most_answers", s.most_answers)?;
            d.set_item("queries", s.queries)?;
            d.set_item("calls", s.calls)?;
            d.set_item("unexplored", s.unexplored)?;
            d.set_item("spent_seconds", s.spent.map(|t| t.as_secs_f64()))?;
            d.set_item("skeleton", s.describe())?;
        }
        Ok(Some(d))
    }

    #[getter]
    fn confirmed(&self) -> Option<bool> {
        self.doc.confirmation.as_ref().map(Confirmation::confirmed)
    }

    fn to_json(&self) -> String {
        self.doc.to_json()
    }

    fn text(&self) -> PyResult<String> {
        Ok(self.tree()?.to_text())
    }

    fn to_dot(&self) -> PyResult<String> {
        Ok(fprev_present::render::dot(self.tree()?))
    }

    fn to_svg(&self) -> PyResult<String> {
        let svg = fprev_present::render::svg(self.tree()?).map_err(to_py)?;
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
        self.tree().ok()?;
        let svg = fprev_present::render::Drawing::of(&self.doc).svg().ok()?;
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
        let mut facts = vec![format!("{} summands", self.n())];
        facts.extend(self.doc.probe.clone());
        facts.extend(self.doc.dtype.map(|d| d.to_string()));
        if let Ok(tree) = self.tree() {
            facts.push(format!("depth {}", tree.depth()));
        }
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
                let text = self.tree().map(|t| t.to_text()).unwrap_or_default();
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

    fn __eq__(&self, other: PyRef<'_, Tree>) -> PyResult<bool> {
        if self.doc.same_formula(&other.doc) {
            return Ok(true);
        }
        Ok(self.tree()?.diff(other.tree()?).is_none())
    }

    fn __hash__(&self) -> PyResult<u64> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        // The canonical text: equal modulo child order, equal text.
        self.tree()?.to_text().hash(&mut h);
        Ok(h.finish())
    }

    fn __str__(&self) -> PyResult<String> {
        self.text()
    }

    fn __repr__(&self) -> String {
        const SHOWN: usize = 72;
        // A tree a file holds as a formula is shown as that formula: its
        // nodes may be more than fit.
        let text = match (self.doc.formula(), self.n() > SHOWN) {
            (Some(f), true) => format!("native:{f}"),
            _ => self.text().unwrap_or_default(),
        };
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
        format!("<fprev.Tree n={}{label}: {text}>", self.n())
    }
}

/// `None` when `a` and `b` agree in everything `fprev diff` compares
/// (size, variation, order modulo child order, then arithmetic where both
/// carry a model), else where they part, in one line.
#[pyfunction]
pub(crate) fn diff(a: &Tree, b: &Tree) -> PyResult<Option<String>> {
    let c = fprev::workflow::diff::diff(&a.doc, &b.doc).map_err(crate::errors::to_py)?;
    Ok(fprev_present::diff::line(&c, "a", "b"))
}

/// `None` when `a` and `b` are one order (modulo child order), else the
/// smallest subtree of each that the other lacks: what golden-file
/// assertions on an order compare.
#[pyfunction]
pub(crate) fn order_parts(a: &Tree, b: &Tree) -> PyResult<Option<(String, String)>> {
    if a.n() != b.n() {
        return Err(PyValueError::new_err(format!(
            "the trees sum {} and {} values",
            a.n(),
            b.n()
        )));
    }
    let (ta, tb) = (a.tree()?, b.tree()?);
    let side = |tree: &SummationTree, node| match node {
        Some(node) => tree.subtree_text(node),
        None => "(every node is in the other tree)".to_string(),
    };
    Ok(ta.diff(tb).map(|d| (side(ta, d.left), side(tb, d.right))))
}
