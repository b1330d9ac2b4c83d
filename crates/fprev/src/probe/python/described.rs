//! What is known of a Python black box beyond its callable: its rows a
//! call, its accumulator, whether it may fuse, where its input starts.

use pyo3::prelude::*;

use super::Weights;
use crate::format::Format;
use crate::probe::Offset;

/// What is known of a Python black box beyond its callable.
#[derive(Clone, Copy, Debug)]
pub struct Described {
    /// Rows one evaluation sums (`fn(X)`); `None`: one input a call.
    pub rows: Option<usize>,
    /// The narrowest format partial sums are rounded to, if known.
    pub accumulator: Option<Format>,
    /// Whether it may add in fused (tensor-core) nodes.
    pub may_fuse: bool,
    /// Where the array it is handed starts past a 64-byte boundary (a
    /// copy of fprev's); `None`: fprev's own, where NumPy's allocation
    /// puts it.
    pub offset: Option<Offset>,
}

impl Described {
    /// Completes what is given with what the bridge found on the callable
    /// (`(call, rows, accumulator, may_fuse, weights)`, `_described` in
    /// `crates/fprev/src/probe/python/_bridge.py`): a given accumulator wins, and it may fuse only
    /// if neither says it does not. The weights and the offset pass through.
    pub(super) fn complete<'py>(
        self,
        opened: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Described, Option<Weights<'py>>)> {
        let (call, rows, acc, may_fuse, weights): (
            Bound<PyAny>,
            Option<usize>,
            Option<String>,
            bool,
            Option<Weights>,
        ) = opened.extract()?;
        let accumulator = match (self.accumulator, acc) {
            (Some(a), _) => Some(a),
            (None, Some(a)) => Some(a.parse().map_err(pyo3::exceptions::PyValueError::new_err)?),
            (None, None) => None,
        };
        let described = Described {
            rows,
            accumulator,
            may_fuse: self.may_fuse && may_fuse,
            offset: self.offset,
        };
        Ok((call, described, weights))
    }
}

impl Default for Described {
    fn default() -> Self {
        Described {
            rows: None,
            accumulator: None,
            may_fuse: true,
            offset: None,
        }
    }
}
