//! The NumPy buffer inputs are written into, typed by how a format's
//! values are stored, and a black box's result read back as a number.

use numpy::{PyArrayDyn, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyFloat;

use crate::error::fault::Returned;
use crate::error::{Error, Fault, Result};
use crate::format::Format;

/// The buffer inputs are written into, typed by how the format's values
/// are stored: f64 and f32 as themselves, the narrow formats as their bits.
pub(super) enum Raw {
    F64(Py<PyArrayDyn<f64>>),
    F32(Py<PyArrayDyn<f32>>),
    U16(Py<PyArrayDyn<u16>>, Format),
    U8(Py<PyArrayDyn<u8>>, Format),
}

/// A mutable view of [`Raw`]'s values, held only while no Python runs.
pub(super) enum Values<'a> {
    F64(&'a mut [f64]),
    F32(&'a mut [f32]),
    U16(&'a mut [u16], Format),
    U8(&'a mut [u8], Format),
}

impl Raw {
    pub(super) fn new(raw: &Bound<'_, PyAny>, format: Format) -> PyResult<Self> {
        Ok(match format {
            Format::F64 => Raw::F64(raw.cast::<PyArrayDyn<f64>>()?.clone().unbind()),
            // TF32 values are f32 values, as a tensor core's inputs come.
            Format::F32 | Format::Tf32 => Raw::F32(raw.cast::<PyArrayDyn<f32>>()?.clone().unbind()),
            Format::F16 | Format::Bf16 => {
                Raw::U16(raw.cast::<PyArrayDyn<u16>>()?.clone().unbind(), format)
            }
            Format::E4m3 | Format::E5m2 => {
                Raw::U8(raw.cast::<PyArrayDyn<u8>>()?.clone().unbind(), format)
            }
            Format::X87 | Format::E8m13 => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "{format} is an accumulator format, not an input's"
                )));
            }
        })
    }

    /// Runs `f` on the values. Nothing else touches the array meanwhile:
    /// no Python runs inside `f`, and the inputs' array is the bridge's
    /// own (the weights are the black box's, which reads them only when
    /// called).
    pub(super) fn with<R>(&self, py: Python<'_>, f: impl FnOnce(Values) -> R) -> R {
        // SAFETY: see above; the array is C-contiguous (made by np.zeros,
        // or checked so by the bridge's `_weights`).
        unsafe {
            let values = match self {
                Raw::F64(a) => Values::F64(a.bind(py).as_slice_mut().expect("contiguous")),
                Raw::F32(a) => Values::F32(a.bind(py).as_slice_mut().expect("contiguous")),
                Raw::U16(a, fmt) => {
                    Values::U16(a.bind(py).as_slice_mut().expect("contiguous"), *fmt)
                }
                Raw::U8(a, fmt) => Values::U8(a.bind(py).as_slice_mut().expect("contiguous"), *fmt),
            };
            f(values)
        }
    }
}

impl Values<'_> {
    pub(super) fn set(&mut self, at: usize, v: f64) {
        match self {
            Values::F64(s) => s[at] = v,
            Values::F32(s) => s[at] = v as f32,
            Values::U16(s, f) => s[at] = f.to_bits(v) as u16,
            Values::U8(s, f) => s[at] = f.to_bits(v) as u8,
        }
    }

    pub(super) fn write(&mut self, at: usize, vs: &[f64]) {
        // One match for the whole run: a loop the compiler vectorises.
        match self {
            Values::F64(s) => s[at..at + vs.len()].copy_from_slice(vs),
            Values::F32(s) => {
                for (d, &v) in s[at..at + vs.len()].iter_mut().zip(vs) {
                    *d = v as f32;
                }
            }
            _ => {
                for (k, &v) in vs.iter().enumerate() {
                    self.set(at + k, v);
                }
            }
        }
    }

    /// Copies `len` values from `from` to `to`.
    pub(super) fn copy(&mut self, from: usize, to: usize, len: usize) {
        match self {
            Values::F64(s) => s.copy_within(from..from + len, to),
            Values::F32(s) => s.copy_within(from..from + len, to),
            Values::U16(s, _) => s.copy_within(from..from + len, to),
            Values::U8(s, _) => s.copy_within(from..from + len, to),
        }
    }

    pub(super) fn zero(&mut self, range: std::ops::Range<usize>) {
        match self {
            Values::F64(s) => s[range].fill(0.0),
            Values::F32(s) => s[range].fill(0.0),
            Values::U16(s, _) => s[range].fill(0),
            Values::U8(s, _) => s[range].fill(0),
        }
    }
}

/// A black box's result as a number, or what it was instead.
pub(super) fn number(
    spec: &str,
    result: &Bound<'_, PyAny>,
    scalar: &Bound<'_, PyAny>,
) -> Result<f64> {
    if let Ok(f) = result.cast::<PyFloat>() {
        return Ok(f.value());
    }
    // NumPy's scalars (numpy.generic) are numbers whatever their type.
    if result.is_instance(scalar).unwrap_or(false)
        && let Ok(v) = result.extract::<f64>()
    {
        return Ok(v);
    }
    if let Ok(shape) = result.getattr("shape")
        && shape.len().is_ok_and(|l| l > 0)
    {
        return Err(Error::BlackBox(Fault::NotANumber {
            spec: spec.into(),
            returned: Returned::Array(shape.to_string()),
        }));
    }
    result.extract::<f64>().map_err(|_| {
        let shown: String = result
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "an object".into())
            .chars()
            .take(60)
            .collect();
        Error::BlackBox(Fault::NotANumber {
            spec: spec.into(),
            returned: Returned::Object(shown),
        })
    })
}
