"""NumPy as a black box: sum, dot, gemv, gemm in any dtype NumPy (and
ml_dtypes, for bf16 and fp8) offers."""

import numpy as np

from fprev_bridge import np_dtype


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
    """`numpy.dot(x, ones)`: the products are exact, so the order of the sum shows."""
    ones = np.ones(n, dtype=np_dtype(dtype))

    def fn(x):
        return np.dot(x, ones)

    fn.may_fuse = False
    return fn


def gemv(n, dtype, shape, arg):
    """`A @ ones` with A of M x K (K = n): one sum per row of A."""
    ones = np.ones(n, dtype=np_dtype(dtype))

    def fn(a):
        return a @ ones

    fn.rows = shape[0] if shape else n
    fn.may_fuse = False
    return fn


def gemm(n, dtype, shape, arg):
    """`A @ B` with A of M x K, B = ones of K x N (K = n); column 0 of the
    product holds one sum per row of A."""
    m, cols = (shape[0], shape[1]) if shape else (n, n)
    b = np.ones((n, cols), dtype=np_dtype(dtype))

    def fn(a):
        return (a @ b)[:, 0]

    fn.rows = m
    fn.may_fuse = False
    return fn
