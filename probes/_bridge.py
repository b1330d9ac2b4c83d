"""The Python side of fprev's embedded bridge.

A probe module (one per library: numpy.py, jax.py, torch.py, or your own in
the directory named by FPREV_PROBES) offers each operation as a factory:

    def OP(n: int, dtype: str, shape: tuple[int, int, int] | None, arg: str | None):
        ...
        return fn

`dtype` is one of f64 f32 f16 bf16 e4m3 e5m2; `shape` is (M, N, K) from
--shape, with K == n; `arg` is the optional third part of the spec
(`torch:gemm:cuda` gives "cuda"). The returned callable is called as

    fn(base, positions, values) -> rows sums

for `rows` inputs that share one base: input r is `base` (shape (n,)) with
`base[positions[r]] = values[r]` (positions: int64 (rows, w); values:
(rows, w)). Arrays are float32 for every dtype but f64 (float64); every value
is exact in `dtype`. Use `inputs(...)` to walk the inputs in one buffer, or
`matrix(...)` to get them as a (rows, n) array. It returns anything
numpy.asarray turns into `rows` float64 values. It may carry attributes:

    fn.batch = 256          # most rows one call takes (default 1)
    fn.accumulator = "f32"  # narrowest format partial sums are rounded to, if known
    fn.may_fuse = False     # True if it may add in fused (tensor-core) nodes (default True)
"""

import importlib.util
import json
import os
import site
import subprocess
import sys

import numpy as np

_DTYPES = {"f64": "float64", "f32": "float32", "f16": "float16"}
_ML_DTYPES = {"bf16": "bfloat16", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}


def np_dtype(name):
    """The NumPy dtype of an fprev format name (bf16 and fp8 need ml_dtypes)."""
    if name in _DTYPES:
        return np.dtype(_DTYPES[name])
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, _ML_DTYPES[name]))


def extend_path():
    """Make packages of the active virtualenv and of the `python3` on PATH
    importable, without PYTHONPATH."""
    version = "python%d.%d" % sys.version_info[:2]
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        site.addsitedir(os.path.join(venv, "lib", version, "site-packages"))
    try:
        out = subprocess.run(
            ["python3", "-c", "import json, sys; print(json.dumps([sys.version_info[:2], sys.path]))"],
            capture_output=True, text=True, timeout=20,
        )
        # Parsed as data: the python3 on PATH may print anything.
        found, paths = json.loads(out.stdout.strip().splitlines()[-1])
    except Exception:
        return
    if tuple(found) == tuple(sys.version_info[:2]):
        for p in paths:
            if p and p not in sys.path and os.path.isdir(p):
                sys.path.append(p)


def inputs(base, positions, values, dtype=None):
    """Each input in turn, in one reused buffer of `dtype` (no copies): use
    it before asking for the next."""
    a = base.astype(dtype) if dtype is not None else base.copy()
    b = a.copy()
    # Scalar element access: fancy indexing costs a microsecond per query.
    for p, v in zip(positions.tolist(), values.astype(a.dtype).tolist()):
        for i, x in zip(p, v):
            a[i] = x
        yield a
        for i in p:
            a[i] = b[i]


def matrix(base, positions, values, dtype=None, rows=None):
    """All inputs as a (rows, n) array of `dtype`; `rows` pads with zero rows
    (a GEMM keeps its shape whatever the batch)."""
    dt = dtype if dtype is not None else base.dtype
    k = len(positions)
    x = np.zeros((rows or k, base.shape[0]), dtype=dt)
    x[:k] = base.astype(dt)
    np.put_along_axis(x[:k], positions, values.astype(dt), axis=1)
    return x


def open_library(module, op, n, dtype, shape, arg):
    """The probe `LIBRARY:OP[:ARG]`: (callable, batch, accumulator, may_fuse)."""
    factory = getattr(module, op, None)
    if op.startswith("_") or not callable(factory):
        offered = sorted(k for k, v in vars(module).items()
                         if callable(v) and not k.startswith("_") and getattr(v, "__module__", None) == module.__name__)
        raise LookupError("no operation '%s' (this library offers: %s)" % (op, ", ".join(offered)))
    return _checked(factory(n, dtype, shape, arg))


def open_user(path, func, n, dtype):
    """The probe `python:PATH.py:FUNC`: FUNC(x: numpy.ndarray) -> float."""
    spec = importlib.util.spec_from_file_location("fprev_user_probe", path)
    if spec is None or spec.loader is None:
        raise ImportError("cannot load %s as a Python module" % path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    f = getattr(module, func, None)
    if not callable(f):
        raise LookupError("%s defines no function '%s'" % (path, func))
    dt = np_dtype(dtype)

    def fn(base, positions, values):
        out = np.empty(len(positions))
        for r, x in enumerate(inputs(base, positions, values, dt)):
            # A copy: the user's function may keep or change its argument.
            v = np.asarray(f(x.copy()))
            if v.ndim != 0:
                raise TypeError("%s returned an array of shape %s, not a scalar" % (func, v.shape))
            out[r] = v
        return out

    fn.batch = 64
    return _checked(fn)


def _checked(fn):
    def call(base, positions, values):
        rows = positions.shape[0]
        out = fn(base, positions, values)
        try:
            out = np.asarray(out, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError("returned %r, not numbers" % (type(out).__name__,)) from None
        if out.shape != (rows,):
            raise TypeError("returned shape %s for %d inputs, expected %d sums" % (out.shape, rows, rows))
        return np.ascontiguousarray(out)

    return (call, int(getattr(fn, "batch", 1)), getattr(fn, "accumulator", None),
            bool(getattr(fn, "may_fuse", True)))
