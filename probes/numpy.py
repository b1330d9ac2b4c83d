"""NumPy as a black box: sum, dot, gemv, gemm in any dtype NumPy (and
ml_dtypes, for bf16 and fp8) offers."""

import numpy as np

from fprev_bridge import np_dtype

# Rows per call are capped so one batch stays near 32 MiB of float64.
_BATCH_VALUES = 1 << 22


def sum(n, dtype, shape, arg):
    """`numpy.sum` of a 1-D array. A batch of rows is summed along axis 1,
    which runs the same inner loop per row as a 1-D sum; `fprev check`
    confirms a revealed tree against the genuine 1-D call (one row)."""
    dt = np_dtype(dtype)

    def fn(x):
        a = x.astype(dt)
        if a.shape[0] == 1:
            return [np.sum(a[0])]
        return np.sum(a, axis=1)

    fn.batch = max(1, _BATCH_VALUES // n)
    fn.may_fuse = False
    return fn


def dot(n, dtype, shape, arg):
    """`numpy.dot(x, ones)`: the products are exact, so the order of the sum shows."""
    dt = np_dtype(dtype)
    ones = np.ones(n, dtype=dt)

    def fn(x):
        a = x.astype(dt)
        return [np.dot(row, ones) for row in a]

    fn.batch = 64
    fn.may_fuse = False
    return fn


def _rows(n, shape):
    return shape[0] if shape else n


def gemv(n, dtype, shape, arg):
    """`A @ ones` with A of M x K (K = n): one query per row of A. The batch is
    padded to M rows so every call has the same shape."""
    dt = np_dtype(dtype)
    m = _rows(n, shape)
    ones = np.ones(n, dtype=dt)

    def fn(x):
        a = np.zeros((m, n), dtype=dt)
        a[: x.shape[0]] = x.astype(dt)
        return (a @ ones)[: x.shape[0]]

    fn.batch = m
    fn.may_fuse = False
    return fn


def gemm(n, dtype, shape, arg):
    """`A @ B` with A of M x K, B = ones of K x N (K = n); column 0 of the
    product holds one sum per row of A."""
    dt = np_dtype(dtype)
    m, cols = (shape[0], shape[1]) if shape else (n, n)
    b = np.ones((n, cols), dtype=dt)

    def fn(x):
        a = np.zeros((m, n), dtype=dt)
        a[: x.shape[0]] = x.astype(dt)
        return (a @ b)[: x.shape[0], 0]

    fn.batch = m
    fn.may_fuse = False
    return fn
