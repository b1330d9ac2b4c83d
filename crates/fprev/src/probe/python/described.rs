//! What is known of a Python black box beyond its callable: its rows a
//! call, its accumulator, whether it may fuse.

use pyo3::prelude::*;

use super::Weights;
use crate::format::Format;

/// What the bridge hands back of an opened black box: its callable, rows
/// a call, accumulator, result format, whether it may fuse, weights.
type Opened<'py> = (
    Bound<'py, PyAny>,
    Option<usize>,
    Option<String>,
    Option<String>,
    bool,
    Option<Weights<'py>>,
);

/// What is known of a Python black box beyond its callable.
#[derive(Clone, Copy, Debug)]
pub struct Described {
    /// Rows one evaluation sums (`fn(X)`); `None`: one input a call.
    pub rows: Option<usize>,
    /// The narrowest format partial sums are rounded to, if known.
    pub accumulator: Option<Format>,
    /// The format of what it returns, where it is not its inputs'.
    pub result: Option<Format>,
    /// Whether it may add in fused (tensor-core) nodes.
    pub may_fuse: bool,
}

impl Described {
    /// Completes what is given with what the bridge found on the callable
    /// (`(call, rows, accumulator, result, may_fuse, weights)`, `_described` in
    /// `crates/fprev/src/probe/python/_bridge.py`): a given accumulator wins, and it may fuse only
    /// if neither says it does not. The weights pass through.
    pub(super) fn complete<'py>(
        self,
        opened: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Described, Option<Weights<'py>>)> {
        let (call, rows, acc, result, may_fuse, weights): Opened<'py> = opened.extract()?;
        let parse = |name: Option<String>| {
            name.map(|a| a.parse().map_err(pyo3::exceptions::PyValueError::new_err))
                .transpose()
        };
        let accumulator = match self.accumulator {
            Some(a) => Some(a),
            None => parse(acc)?,
        };
        let described = Described {
            rows,
            accumulator,
            result: self.result.or(parse(result)?),
            may_fuse: self.may_fuse && may_fuse,
        };
        Ok((call, described, weights))
    }
}

impl Default for Described {
    fn default() -> Self {
        Described {
            rows: None,
            accumulator: None,
            result: None,
            may_fuse: true,
        }
    }
}
