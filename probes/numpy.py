"""NumPy as a black box: sum, dot, gemv, gemm in any dtype NumPy (and
ml_dtypes, for bf16 and fp8) offers."""

import numpy as np

from fprev_bridge import inputs, matrix, np_dtype

def sum(n, dtype, shape, arg):
    """`numpy.sum` of a 1-D array: one genuine call per input, many inputs
    per bridge call, each edited in place in one cache-resident buffer.
    Called as `np.add.reduce`, the ufunc reduction that `np.sum` wraps in
    Python (same kernel, same order), which saves a third of each call."""
    dt = np_dtype(dtype)
    reduce = np.add.reduce

    def fn(base, positions, values):
        return [reduce(a) for a in inputs(base, positions, values, dt)]

    fn.batch = 4096
    fn.may_fuse = False
    return fn


def dot(n, dtype, shape, arg):
    """`numpy.dot(x, ones)`: the products are exact, so the order of the sum shows."""
    dt = np_dtype(dtype)
    ones = np.ones(n, dtype=dt)

    def fn(base, positions, values):
        return [np.dot(a, ones) for a in inputs(base, positions, values, dt)]

    fn.batch = 4096
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

    def fn(base, positions, values):
        return (matrix(base, positions, values, dt, m) @ ones)[: len(positions)]

    fn.batch = m
    fn.may_fuse = False
    return fn


def gemm(n, dtype, shape, arg):
    """`A @ B` with A of M x K, B = ones of K x N (K = n); column 0 of the
    product holds one sum per row of A."""
    dt = np_dtype(dtype)
    m, cols = (shape[0], shape[1]) if shape else (n, n)
    b = np.ones((n, cols), dtype=dt)

    def fn(base, positions, values):
        return (matrix(base, positions, values, dt, m) @ b)[: len(positions), 0]

    fn.batch = m
    fn.may_fuse = False
    return fn
