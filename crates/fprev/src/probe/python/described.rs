//! What is known of a Python black box beyond its callable: its rows a
//! call, its accumulator, whether it may fuse, where its input starts.

use pyo3::prelude::*;

use super::Weights;
use crate::format::Format;
use crate::probe::Offset;

/// What the bridge hands back of an opened black box: its callable, rows
/// a call, accumulator, result format, whether it may fuse, weights, the
/// formats of its operands.
type Opened<'py> = (
    Bound<'py, PyAny>,
    Option<usize>,
    Option<String>,
    Option<String>,
    bool,
    Option<Weights<'py>>,
    Option<(String, String)>,
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
    /// The formats of the two operands whose products it takes as
    /// summands, splitting them itself (`fn.operands`; see
    /// [`Probe::operands`](crate::Probe::operands)).
    pub operands: Option<(Format, Format)>,
    /// Where the array it is handed starts past a 64-byte boundary (a
    /// copy of fprev's); `None`: fprev's own, where NumPy's allocation
    /// puts it.
    pub offset: Option<Offset>,
}

impl Described {
    /// Completes what is given with what the bridge found on the callable
    /// (`(call, rows, accumulator, result, may_fuse, weights, operands)`, `_described` in
    /// `crates/fprev/src/probe/python/_bridge.py`): a given accumulator wins, and it may fuse only
    /// if neither says it does not. The weights and the offset pass through.
    pub(super) fn complete<'py>(
        self,
        opened: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Described, Option<Weights<'py>>)> {
        let (call, rows, acc, result, may_fuse, weights, operands): Opened<'py> =
            opened.extract()?;
        let format = |name: String| -> PyResult<Format> {
            name.parse()
                .map_err(pyo3::exceptions::PyValueError::new_err)
        };
        let parse = |name: Option<String>| name.map(format).transpose();
        let accumulator = match self.accumulator {
            Some(a) => Some(a),
            None => parse(acc)?,
        };
        let described = Described {
            rows,
            accumulator,
            result: self.result.or(parse(result)?),
            may_fuse: self.may_fuse && may_fuse,
            operands: match operands {
                Some((a, b)) => Some((format(a)?, format(b)?)),
                None => None,
            },
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
            result: None,
            may_fuse: true,
            operands: None,
            offset: None,
        }
    }
}
