#!/usr/bin/env python3
"""Single rows of a square f32 GEMM as black boxes, to reveal the order of a
row other than row 0 (numpy:gemm and blas:gemm reveal row 0's order; fprev
notes that other rows differ).

As fprev probes (python:outputs/rows.py:FUNC, FUNC(x) -> float):
  numpy_gemm_rowR  NumPy's A @ B (its bundled OpenBLAS), A = n x n zeros with
                   row R = x, B = ones(n, n); returns C[R, 0]
  blas_gemm_rowR   the same through the system OpenBLAS (libopenblas.so.0,
                   cblas_sgemm, row-major, alpha 1, beta 0): what blas:gemm calls
  for R in ROWS below.

As a script: `python3 outputs/rows.py N...` prints, for each n, which rows of
C[:, 0] equal row 0 when every row of A holds the same random x (10 draws);
rows that never differ from row 0 share its order as far as these inputs show.
"""

import ctypes
import sys

import numpy as np

ROWS = (0, 6, 12)

_blas = None


def _cblas():
    global _blas
    if _blas is None:
        _blas = ctypes.CDLL("libopenblas.so.0")
        _blas.cblas_sgemm.restype = None
    return _blas


def numpy_gemm(a):
    n = a.shape[1]
    return a @ np.ones((n, n), dtype=np.float32)


def blas_gemm(a):
    m, k = a.shape
    a = np.ascontiguousarray(a, dtype=np.float32)
    b = np.ones((k, k), dtype=np.float32)
    c = np.zeros((m, k), dtype=np.float32)
    p = lambda x: x.ctypes.data_as(ctypes.c_void_p)
    # CblasRowMajor = 101, CblasNoTrans = 111
    _cblas().cblas_sgemm(101, 111, 111, m, k, k, ctypes.c_float(1.0), p(a), k, p(b), k,
                         ctypes.c_float(0.0), p(c), k)
    return c


def _row_probe(gemm, r):
    def f(x):
        n = x.shape[0]
        if r >= n:
            raise ValueError(f"row {r} does not exist for n = {n}")
        a = np.zeros((n, n), dtype=np.float32)
        a[r] = x
        return gemm(a)[r, 0]
    return f


for _r in ROWS:
    globals()[f"numpy_gemm_row{_r}"] = _row_probe(numpy_gemm, _r)
    globals()[f"blas_gemm_row{_r}"] = _row_probe(blas_gemm, _r)


def _ranges(rows):
    out, start, prev = [], None, None
    for r in rows:
        if start is None:
            start = prev = r
        elif r == prev + 1:
            prev = r
        else:
            out.append(f"{start}-{prev}" if prev > start else f"{start}")
            start = prev = r
    if start is not None:
        out.append(f"{start}-{prev}" if prev > start else f"{start}")
    return ", ".join(out)


def main(ns):
    rng = np.random.default_rng(0)
    print("# rows of C[:, 0] that equal row 0 in all of 10 random draws (every row of A = the same x ~ N(0,1) f32, B = ones)")
    for name, gemm in (("numpy (bundled OpenBLAS)", numpy_gemm), ("system OpenBLAS (cblas_sgemm)", blas_gemm)):
        for n in ns:
            same = np.ones(n, dtype=bool)
            for _ in range(10):
                x = rng.standard_normal(n).astype(np.float32)
                c = gemm(np.tile(x, (n, 1)))[:, 0]
                same &= c == c[0]
            print(f"{name}, n = {n}: rows equal to row 0: {_ranges(np.nonzero(same)[0].tolist())}; "
                  f"differing: {_ranges(np.nonzero(~same)[0].tolist()) or 'none'}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [8, 16, 32, 64, 128, 256, 512])
