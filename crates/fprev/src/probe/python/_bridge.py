"""The Python side of fprev's embedded bridge.

A probe module (one per library: numpy.py, jax.py, torch.py, or your own in
the directory named by FPREV_PROBES) offers each operation as a factory:

    def OP(n: int, dtype: str, shape: tuple[int, int, int] | None, arg: str | None):
        ...
        return fn

`dtype` is one of f64 f32 f16 bf16 e4m3 e5m2; `shape` is (M, N, K) from
--shape, with K == n; `arg` is the optional third part of the spec
(`torch:gemm:cuda` gives "cuda"). The black box `fn` takes one of two forms:

    fn(x) -> number
        Sums one input: `x` is a 1-D NumPy array of n values of `dtype`
        (bf16 and fp8 through ml_dtypes). fprev calls it once per input and
        edits the same array in place between calls, so use `x` before
        returning and never keep it or change it.

    fn(X) -> numbers, with fn.rows = M
        Sums the M rows of `X`, an (M, n) array of `dtype`, in one
        evaluation of the black box (a GEMV or GEMM answers one sum per
        row). Rows that hold no input are zero. Returns M numbers.

Optional attributes:

    fn.rows = 1024          # the second form, M rows a call
    fn.accumulator = "f32"  # narrowest format partial sums are rounded to, if known
    fn.result = "f32"       # the format of what it returns (default: dtype's)
    fn.may_fuse = False     # True if it may add in fused (tensor-core) nodes (default True)
    fn.weights = w          # the vector it multiplies by: a dot, GEMV or GEMM
    fn.operands = ("e4m3", "e4m3")  # with weights: it splits products itself

`fn.weights` makes the black box one that multiplies: each summand is a
product x_i * w_i that it forms itself. `w` is a 1-D, C-contiguous,
writeable NumPy array of n values of the dtype the black box multiplies by
(ones, for a plain sum: dot's second vector, GEMV's vector, column 0 or
every column of GEMM's B). fprev writes its y into `w` in place before a
dot call, and ones back before the next plain sum, so `fn` must read `w`
(not a copy taken earlier) each time it is called; `follow` helps where the
operand is built from `w` (a matrix, a device array).

`fn.operands = (A, B)` (with `fn.weights`) says the black box takes any
value that is a product of an A value and a power of two of B, and splits
it into its two operands itself (a tensor core's A and B, fp8 into an f32
accumulator): masked inputs then reach past what A alone holds. Inputs
and `w` then come as float64 (create `w` so), each `x_i * w_i` such a
product.

A module may also define `_facts() -> dict`: what the library says of itself
beyond its version (the BLAS it uses, the CPU features it dispatches on),
which `fprev survey` records as machine facts. Its leading underscore keeps
it from being an operation.
"""

import importlib.metadata
import importlib.util
import json
import os
import site
import subprocess
import sys

import numpy as np

# TF32 values travel as the f32 values they are.
_DTYPES = {"f64": "float64", "f32": "float32", "tf32": "float32", "f16": "float16"}
_ML_DTYPES = {"bf16": "bfloat16", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}
# What fprev writes into: the format's own bits, viewed as its dtype.
_RAW = {"f64": "float64", "f32": "float32", "tf32": "float32", "f16": "uint16", "bf16": "uint16",
        "e4m3": "uint8", "e5m2": "uint8"}


def np_dtype(name):
    """The NumPy dtype of an fprev format name (bf16 and fp8 need ml_dtypes)."""
    if name in _DTYPES:
        return np.dtype(_DTYPES[name])
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, _ML_DTYPES[name]))


def extend_path(answer):
    """Make packages of the active virtualenv and of the `python3` on PATH
    importable, without PYTHONPATH. `answer` is what that python3 printed
    for `[sys.version_info[:2], sys.path]` as JSON (asked by fprev while
    this interpreter started), or None where it could not be run."""
    version = "python%d.%d" % sys.version_info[:2]
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        site.addsitedir(os.path.join(venv, "lib", version, "site-packages"))
    try:
        # Parsed as data: the python3 on PATH may print anything.
        found, paths = json.loads(answer.strip().splitlines()[-1])
    except Exception:
        return
    if tuple(found) == tuple(sys.version_info[:2]):
        for p in paths:
            if p and p not in sys.path and os.path.isdir(p):
                sys.path.append(p)


def buffer(shape, dtype):
    """The array fprev writes inputs into, and the view of it the black box
    gets: (raw, view), raw holding the bits of `dtype` values."""
    view_dtype = np_dtype(dtype)
    raw = np.zeros(shape, dtype=_RAW[dtype])
    return raw, raw.view(view_dtype)


def shifted(call, shape, dtype, offset):
    """`call`, handed each input in an array of `shape` that starts `offset`
    bytes past a 64-byte boundary (a copy of fprev's): a library may sum
    an unaligned array in another order than an aligned one."""
    view_dtype = np_dtype(dtype)
    size = int(np.prod(shape)) * view_dtype.itemsize
    block = np.zeros(size + offset + 64, dtype=np.uint8)
    start = -block.ctypes.data % 64 + offset
    moved = block[start:start + size].view(view_dtype).reshape(shape)

    def fn(x):
        moved[...] = x
        return call(moved)

    return fn


def open_library(module, op, n, dtype, shape, arg, column=None):
    """The probe `LIBRARY:OP[:ARG]`: (callable, rows, accumulator, result,
    may_fuse, weights)."""
    factory = getattr(module, op, None)
    if op.startswith("_") or not callable(factory):
        offered = sorted(k for k, v in vars(module).items()
                         if callable(v) and not k.startswith("_") and getattr(v, "__module__", None) == module.__name__)
        raise LookupError("no operation '%s' (this library offers: %s)" % (op, ", ".join(offered)))
    if column is not None:
        return _described(factory(n, dtype, shape, arg, column=column))
    return _described(factory(n, dtype, shape, arg))


def open_user(path, func, n, dtype, rows=None):
    """The probe `python:PATH.py:FUNC`: FUNC(x: numpy.ndarray) -> float,
    or with `rows` (the M of `--shape M,1,K`), FUNC(X) -> M numbers, X
    holding M rows of K; or FUNC(x, y) -> float, a dot product, which a
    FUNC of two required arguments is (`FUNC.operands = (A, B)`: it takes
    any product of an A value and a power of two of B, see `fn.operands`)."""
    spec = importlib.util.spec_from_file_location("fprev_user_probe", path)
    if spec is None or spec.loader is None:
        raise ImportError("cannot load %s as a Python module" % path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    f = getattr(module, func, None)
    if not callable(f):
        raise LookupError("%s defines no function '%s'" % (path, func))

    if _required_arguments(f) == 2:
        # A dot product: y is fn.weights, which fprev writes in place
        # (ones for a plain sum). With `FUNC.operands`, x and y come as
        # float64: any product of the two formats is a summand.
        operands = getattr(f, "operands", None)
        w = np.ones(n, np.float64 if operands else np_dtype(dtype))

        def fn(x):
            return f(x.copy(), w)

        fn.weights = w
        if operands:
            fn.operands = operands
    else:

        def fn(x):
            # A copy: the user's function may keep or change its argument.
            return f(x.copy())

    return _described(fn, rows)


def _required_arguments(f):
    """How many positional arguments `f` requires (1 where that cannot be
    told, as of some builtins)."""
    import inspect

    try:
        parameters = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return 1
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in parameters if p.kind in positional and p.default is p.empty)


def open_callable(fn, rows=None):
    """A callable handed to the fprev Python package: `fn(x)`, or `fn(X)`
    when `rows` (or `fn.rows`) is given. `rows` is carried beside `fn`,
    never set on it: a function such as `np.sum` is every caller's."""
    return _described(fn, rows)


def follow(weights, make):
    """A function returning make(weights), made again only when fprev has
    written other values into `weights` since: for black boxes whose
    operand is built from the weights rather than being them. Values are
    compared as bits, so that -0.0 and 0.0 differ."""
    seen = weights.copy()
    made = [make(weights)]
    bits = weights.view(np.uint8)

    def current():
        if not np.array_equal(bits, seen.view(np.uint8)):
            seen[...] = weights
            made[0] = make(weights)
        return made[0]

    return current


def _described(fn, rows=None):
    rows = getattr(fn, "rows", None) if rows is None else rows
    call = fn if rows is None else _rows_checked(fn, int(rows))
    operands = getattr(fn, "operands", None)
    return (call, rows, getattr(fn, "accumulator", None), getattr(fn, "result", None),
            bool(getattr(fn, "may_fuse", True)), _weights(getattr(fn, "weights", None)),
            None if operands is None else tuple(str(o) for o in operands))


def _weights(w):
    """fn.weights as (raw, format): the array viewed as the bits fprev writes
    (as `buffer`'s raw) and its fprev format name; None without weights."""
    if w is None:
        return None
    if not isinstance(w, np.ndarray):
        raise TypeError("fn.weights is a %s, not a NumPy array" % type(w).__name__)
    if w.ndim != 1 or not w.flags.c_contiguous or not w.flags.writeable:
        raise TypeError("fn.weights must be a 1-D, C-contiguous, writeable array "
                        "(fprev writes into it in place)")
    for name in _RAW:
        try:
            if w.dtype == np_dtype(name):
                return w.view(_RAW[name]), name
        except ImportError:  # no ml_dtypes: no bf16 or fp8 weights either
            continue
    raise TypeError("fn.weights has dtype %s, which is no fprev format (%s)"
                    % (w.dtype, ", ".join(_RAW)))


def _rows_checked(fn, rows):
    def call(x):
        out = fn(x)
        try:
            out = np.asarray(out, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError("returned %r, not numbers" % (type(out).__name__,)) from None
        if out.shape != (rows,):
            raise TypeError("returned shape %s for %d rows, expected %d sums" % (out.shape, rows, rows))
        return np.ascontiguousarray(out)

    return call


def members(adapter):
    """Every spec the adapter offers where it lists them (`_members()`,
    e.g. each instruction of `mma:`); None where it does not."""
    own = getattr(adapter, "_members", None)
    return [str(m) for m in own()] if callable(own) else None


def facts(adapter, package):
    """What a library says of itself, for a survey's machine facts: its
    version, and what the adapter's own `_facts()` adds (the kernels it
    picked), as strings."""
    out = {}
    try:
        # Read from the installed package where it is not imported yet:
        # importing it here would fix settings a black box sets on import
        # (Polars' thread count).
        loaded = sys.modules.get(package)
        version = loaded.__version__ if loaded else importlib.metadata.version(package)
        out["version"] = str(version)
    except Exception:  # a library without a version still has facts
        pass
    own = getattr(adapter, "_facts", None)
    if callable(own):
        out.update({str(k): str(v) for k, v in own().items()})
    return out
