"""Speed of emitted C against the library it imitates, one thread, same run.

    python3 bench.py LIB.so SYMBOL numpy-sum|openblas-sdot [N] [RUNS]

Times the emitted function and the library on the same input, alternating
them RUNS times (default 201), and prints each median and the ratio
library / emitted (1.0: as fast; 0.5: half as fast). OpenBLAS is the
system's (libopenblas.so.0), as fprev's blas: black box loads it; set
OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS=1 as when the code was emitted.
The results are compared bit for bit too.
"""

import ctypes
import statistics
import sys
import time

import numpy as np


def main():
    lib, symbol, what = sys.argv[1:4]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 1 << 20
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 201
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    f = getattr(ctypes.CDLL(lib), symbol)
    f.restype = ctypes.c_float
    ptr = ctypes.POINTER(ctypes.c_float)
    px, py = x.ctypes.data_as(ptr), y.ctypes.data_as(ptr)
    if what == "numpy-sum":
        f.argtypes = [ptr, ctypes.c_size_t]
        ours = lambda: f(px, n)
        theirs = lambda: float(np.sum(x))
    elif what == "openblas-sdot":
        blas = ctypes.CDLL("libopenblas.so.0")
        blas.cblas_sdot.restype = ctypes.c_float
        blas.cblas_sdot.argtypes = [ctypes.c_int, ptr, ctypes.c_int, ptr, ctypes.c_int]
        f.argtypes = [ptr, ptr, ctypes.c_size_t]
        ours = lambda: f(px, py, n)
        theirs = lambda: blas.cblas_sdot(n, px, 1, py, 1)
    else:
        sys.exit(f"unknown comparison {what}")
    same = np.float32(ours()) == np.float32(theirs())
    t_ours, t_theirs = [], []
    for _ in range(runs):
        for fn, times in ((ours, t_ours), (theirs, t_theirs)):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    mo, mt = statistics.median(t_ours), statistics.median(t_theirs)
    print(f"{what} n={n} runs={runs}: emitted {mo * 1e6:.1f} us, library {mt * 1e6:.1f} us, "
          f"speed ratio (library/emitted) {mt / mo:.2f}x, same bits: {bool(same)}")


main()
