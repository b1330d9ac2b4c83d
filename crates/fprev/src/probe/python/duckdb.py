"""DuckDB as a black box: `SELECT sum(x)` over a DOUBLE or FLOAT column.

`arg` is the thread count of `duckdb:sum:THREADS` (or `--threads`), given
to the connection's config (`threads`); without one, DuckDB's own (a
thread a core). DuckDB's threads share a scan out as they come, so on two
threads or more a column longer than one scan partition is summed in an
order that varies from call to call (seen here from 110,000 rows on, never
at 102,400 or fewer).
"""

import duckdb
import numpy as np

from fprev_bridge import np_dtype


def sum(n, dtype, shape, arg):
    """`SELECT sum(x) FROM t`, t a NumPy array of the adapter's own
    registered once as a table (DuckDB scans it where it lies); each call
    copies the input into it and runs the query (about 0.3 ms). sum() of a
    FLOAT column is a DOUBLE, accumulated in double."""
    config = {} if arg is None else {"threads": int(arg)}
    con = duckdb.connect(config=config)
    column = np.zeros(n, dtype=np_dtype(dtype))
    con.register("t", {"x": column})
    query = "SELECT sum(x) FROM t"

    def fn(x):
        column[...] = x
        return con.execute(query).fetchall()[0][0]

    fn.may_fuse = False
    if dtype == "f32":
        fn.accumulator = "f64"
    return fn


def _facts():
    """DuckDB's default thread count here."""
    con = duckdb.connect()
    return {"threads": con.execute("SELECT current_setting('threads')").fetchall()[0][0]}
