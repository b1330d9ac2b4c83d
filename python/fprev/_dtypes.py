"""Names of number formats: NumPy's (and ml_dtypes') and fprev's own."""

from __future__ import annotations

from typing import Any

# NumPy dtype name -> fprev format name.
_FORMATS = {
    "float64": "f64",
    "float32": "f32",
    "float16": "f16",
    "bfloat16": "bf16",
    "float8_e4m3fn": "e4m3",
    "float8_e5m2": "e5m2",
}


def format_name(dtype: Any) -> str:
    """fprev's name of ``dtype``: a NumPy dtype, a dtype name, or an fprev
    name (``f32``)."""
    if isinstance(dtype, str):
        if dtype in _FORMATS.values():
            return dtype
        if dtype in _FORMATS:
            return _FORMATS[dtype]
    import numpy as np

    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = None
    if name in _FORMATS:
        return _FORMATS[name]
    raise ValueError(
        "unsupported dtype %r: use one of %s (bfloat16 and float8 through ml_dtypes)"
        % (dtype, ", ".join(_FORMATS))
    )

