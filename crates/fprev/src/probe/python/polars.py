"""Polars as a black box: `Series.sum()` of a Float64 or Float32 column.

`arg` is the thread count of `polars:sum:THREADS` (or `--threads`). Polars
reads POLARS_MAX_THREADS once, when it is imported, and keeps that pool for
the life of the process: so polars is imported here, on first use, with the
count asked for, and a later count that differs is refused, never ignored.
"""

import os


def _polars(threads):
    """The polars module, on `threads` threads (None: Polars' own count)."""
    import sys

    if threads is not None and "polars" not in sys.modules:
        os.environ["POLARS_MAX_THREADS"] = threads
    import polars as pl

    if threads is not None and pl.thread_pool_size() != int(threads):
        raise RuntimeError(
            "polars was imported on %d threads, and Polars fixes its thread count when "
            "it is imported: run polars:sum:%s in a process of its own (or set "
            "POLARS_MAX_THREADS=%s before importing polars)"
            % (pl.thread_pool_size(), threads, threads))
    return pl


def sum(n, dtype, shape, arg):
    """`polars.Series(x).sum()`: the column made from the NumPy array each
    call (a few microseconds at n = 10^3), then summed."""
    pl = _polars(arg)
    series = pl.Series

    def fn(x):
        return series(x).sum()

    fn.may_fuse = False
    return fn


def _facts():
    """Polars' thread pool, once polars is imported (importing it here
    would fix the count before a black box asks for one)."""
    import sys

    pl = sys.modules.get("polars")
    return {} if pl is None else {"threads": pl.thread_pool_size()}
