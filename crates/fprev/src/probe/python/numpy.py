"""NumPy as a black box: sum, dot, gemv, gemm in any dtype NumPy (and
ml_dtypes, for bf16 and fp8) offers."""

import numpy as np

from fprev_bridge import follow, np_dtype


def sum(n, dtype, shape, arg):
    """`numpy.sum` of a 1-D array, one genuine call per input. Called as
    `np.add.reduce`, the ufunc reduction that `np.sum` wraps in Python (same
    kernel, same order), which saves a third of each call."""
    reduce = np.add.reduce

    def fn(x):
        return reduce(x)

    fn.may_fuse = False
    return fn


def dot(n, dtype, shape, arg):
    """`numpy.dot(x, w)`, w = ones but for fprev's dot calls (fn.weights):
    with ones the products are exact, so the order of the sum shows."""
    w = np.ones(n, dtype=np_dtype(dtype))

    def fn(x):
        return np.dot(x, w)

    fn = _quiet(fn, dtype)
    fn.weights = w
    fn.may_fuse = False
    return fn


def gemv(n, dtype, shape, arg):
    """`A @ w` with A of M x K (K = n), w as for `dot`: one sum per row of A."""
    w = np.ones(n, dtype=np_dtype(dtype))

    def fn(a):
        return a @ w

    fn = _quiet(fn, dtype)
    fn.weights = w
    fn.rows = shape[0] if shape else n
    fn.may_fuse = False
    return fn


def gemm(n, dtype, shape, arg, column=0):
    """`A @ B` with A of M x K, B of K x N (K = n) holding w (as for `dot`)
    in every column; column `column` (0) of the product holds one sum per
    row of A."""
    m, cols = (shape[0], shape[1]) if shape else (n, n)
    w = np.ones(n, dtype=np_dtype(dtype))
    # B stays a C-contiguous matrix, as before weights existed, so that
    # matmul takes the same kernel: it is rebuilt when fprev changes w.
    b = follow(w, lambda w: np.ascontiguousarray(np.broadcast_to(w[:, None], (n, cols))))

    def fn(a):
        return (a @ b())[:, column]

    fn = _quiet(fn, dtype)
    fn.weights = w
    fn.rows = m
    fn.may_fuse = False
    return fn


def _quiet(fn, dtype):
    """`fn`, without NumPy's overflow warnings in the narrow formats: a
    random product fprev asks about may overflow f16, and the answer, inf,
    is read as such."""
    if dtype in ("f64", "f32", "bf16"):
        return fn

    def quiet(x):
        with np.errstate(over="ignore", invalid="ignore"):
            return fn(x)

    return quiet


def _facts():
    """The BLAS NumPy was built with and the CPU features its kernels
    dispatch on here (what `NPY_DISABLE_CPU_FEATURES` takes away)."""
    out = {}
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        out["blas"] = "%s %s" % (blas.get("name", "?"), blas.get("version", "?"))
    except Exception:  # older NumPy: no dict form of its configuration
        pass
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:
        from numpy.core import _multiarray_umath as umath
    found = umath.__cpu_features__
    out["cpu baseline"] = " ".join(umath.__cpu_baseline__)
    out["cpu dispatch"] = " ".join(f for f in umath.__cpu_dispatch__ if found.get(f))
    return out
