"""A callable whose answer to one input changes from call to call raises
VariesError with the spread, and a sweep marks each of its sizes varies; a
fixed one never does either."""

import json
import random

import numpy as np
import pytest

import fprev


def random_joins(x):
    """Chunks of 8 summed left to right, joined in a random order."""
    chunks = [np.float32(np.sum(x[k : k + 8], dtype=np.float32)) for k in range(0, len(x), 8)]
    random.shuffle(chunks)
    total = np.float32(0)
    for c in chunks:
        total = np.float32(total + c)
    return total


def test_a_varying_callable_raises_varies_error_with_the_spread():
    with pytest.raises(fprev.VariesError, match="ulps"):
        fprev.reveal(random_joins, 128)
    with pytest.raises(fprev.VariesError, match="condition number") as raised:
        fprev.explain(random_joins, [24, 64])
    # An explanation looks for no skeleton.
    assert raised.value.skeleton is None


def test_runs_look_for_variation_on_purpose_and_pass_numpy():
    with pytest.raises(fprev.VariesError):
        fprev.reveal(random_joins, 64, runs=10)
    tree = fprev.reveal(np.sum, 64, runs=10)
    assert tree.confirmed
    with pytest.raises(ValueError, match="runs"):
        fprev.reveal(np.sum, 64, runs=1)


def test_assert_deterministic_fails_with_the_spread_and_passes_numpy():
    from fprev.testing import assert_deterministic

    with pytest.raises(AssertionError, match="not deterministic: .* ulps"):
        assert_deterministic(random_joins, 128, runs=10)
    assert_deterministic(np.sum, 1000, runs=10)
    with pytest.raises(ValueError, match="runs"):
        assert_deterministic(np.sum, 10, runs=1)


def chunk_tree(a):
    """NumPy's sum of 8 float32 values from ``a``: eight accumulators of
    one value each, combined pairwise."""
    k = [str(a + i) for i in range(8)]
    return "(((%s+%s)+(%s+%s))+((%s+%s)+(%s+%s)))" % tuple(k)


def test_reveal_of_a_varying_callable_carries_its_skeleton():
    with pytest.raises(fprev.VariesError) as raised:
        fprev.reveal(random_joins, 128)
    message = str(raised.value)
    assert "skeleton: 16 runs of 8 consecutive summands, each in the order native:pairwise" in message
    skeleton = raised.value.skeleton
    expected = "(%s)" % "+".join(chunk_tree(a) for a in range(0, 128, 8))
    assert skeleton == fprev.Tree.from_json(expected)
    varies = skeleton.varies
    assert varies["varying_joins"] == [(0, 128)]
    assert varies["runs"] == 50 and varies["repeats"] == 50, varies
    assert varies["varied"] >= 1 and varies["spread_ulps"] > 0, varies
    assert varies["most_answers"] >= 2, varies
    # Saved and read back, it is the same skeleton.
    again = fprev.Tree.from_json(skeleton.to_json())
    assert again == skeleton and again.varies == varies
    assert fprev.reveal(np.sum, 128).varies is None


def test_a_skeleton_search_takes_the_seconds_it_is_given():
    # No time at all: only the whole sum's first level is looked at, and
    # what was left is said.
    with pytest.raises(fprev.VariesError) as raised:
        fprev.reveal(random_joins, 128, skeleton=0)
    varies = raised.value.skeleton.varies
    assert varies["spent_seconds"] is not None and varies["unexplored"] > 0, varies
    with pytest.raises(fprev.VariesError) as raised:
        fprev.reveal(random_joins, 128, skeleton=60)
    assert raised.value.skeleton.varies["unexplored"] == 0
    for wrong in (-1, 86_401, 2.5):
        with pytest.raises((ValueError, TypeError), match="skeleton"):
            fprev.reveal(random_joins, 128, skeleton=wrong)


def test_assert_deterministic_fails_with_the_skeleton():
    from fprev.testing import assert_deterministic

    with pytest.raises(AssertionError) as raised:
        assert_deterministic(random_joins, 64, runs=20)
    # Each masked query takes its largest answer over calls of its own, so
    # now and then (5 in 2,000 tries) a chunk's summands part between two
    # levels of the join and that chunk shows in pieces: the skeleton is
    # then weaker, never wrong. Its whole chunks are still named.
    message = str(raised.value)
    assert "runs of 8 consecutive summands, each in the order native:pairwise" in message
    assert "joined in an order that varies" in message
    with pytest.raises(AssertionError) as raised:
        assert_deterministic(random_joins, 64, runs=10, skeleton=False)
    assert "skeleton" not in str(raised.value)


def test_a_polars_sum_is_revealed_and_never_varies():
    pl = pytest.importorskip("polars")

    def polars_sum(x):
        return pl.Series(x).sum()

    tree = fprev.reveal(polars_sum, 1000, "float64", runs=20)
    assert tree.confirmed
    from fprev.testing import assert_deterministic

    assert_deterministic(polars_sum, 10**5, runs=10)


def test_a_duckdb_sum_on_two_threads_varies_past_two_partitions():
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect(config={"threads": 2})

    def duckdb_sum(x):
        con.register("t", {"x": x})
        return con.execute("SELECT sum(x) FROM t").fetchall()[0][0]

    with pytest.raises(fprev.VariesError, match="ulps"):
        fprev.reveal(duckdb_sum, 300_000, "float64", runs=50, skeleton=False)


def test_a_sweep_marks_each_size_of_a_varying_callable_varies():
    s = fprev.sweep(random_joins, [64, 128], runs=10)
    assert [n for n, _ in s.varies] == [64, 128]
    assert all("ulps" in what for _, what in s.varies)
    assert s.trees == [None, None]
    assert s.change_points == []
    assert "varies at n = 64" in str(s)
    points = json.loads(s.to_json())["points"]
    assert [p["order"] for p in points] == ["varies", "varies"]
    assert all(p["variation"]["varied"] >= 1 for p in points)


def test_a_sweep_of_a_fixed_callable_never_varies():
    s = fprev.sweep(np.sum, [8, 64], runs=10)
    assert s.varies == []
    assert all(t is not None for t in s.trees)
    assert "varies" not in str(s)


#: Left to right from a place drawn as each process starts: fixed within a
#: process, another order in the next.
DRAWN_PER_PROCESS = """
import os
import numpy as np

START = int.from_bytes(os.urandom(2), "little") % 64


def f(x):
    t = np.float32(0)
    for k in range(len(x)):
        t = np.float32(t + x[(START + k) % len(x)])
    return t


def g(x):
    t = np.float32(0)
    for v in x:
        t = np.float32(t + v)
    return t
"""


def load(path, name):
    """A module of the file at ``path``, imported in this process."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_processes_tell_an_order_drawn_per_process(tmp_path):
    path = tmp_path / "drawn.py"
    path.write_text(DRAWN_PER_PROCESS)
    box = load(path, "drawn")
    # Within this process it is one order: revealed, confirmed, no word
    # of the next process.
    assert fprev.reveal(box.f, 64).confirmed
    # Three processes, lest two draw the same place (1 in 64).
    with pytest.raises(fprev.VariesError, match="changes from process to process") as raised:
        fprev.reveal(box.f, 64, processes=3)
    assert "random inputs gave different bits in 3 processes" in str(raised.value), raised.value
    assert raised.value.skeleton is None
    # One fixed order passes on to its reveal.
    tree = fprev.reveal(box.g, 64, processes=2)
    assert tree.confirmed and tree.text() == "(" * 63 + "0+1)" + "".join("+%d)" % k for k in range(2, 64))


def test_processes_are_bounded_as_the_command_line_s(tmp_path):
    path = tmp_path / "drawn.py"
    path.write_text(DRAWN_PER_PROCESS)
    box = load(path, "drawn")
    for wrong in (1, 17, 10**13):
        with pytest.raises(ValueError, match="give processes from 2 to 16"):
            fprev.reveal(box.g, 64, processes=wrong)
    # A fresh process cannot open a lambda or a library's function.
    for fn in (lambda x: x.sum(), np.sum):
        with pytest.raises(TypeError, match="top level of a .py file"):
            fprev.reveal(fn, 64, processes=2)
