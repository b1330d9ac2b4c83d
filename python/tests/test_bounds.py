"""Issue 51 in the Python API: every number is bounded as the command line's
(a ValueError, never an OverflowError or an aborted interpreter), refusals
are instant, a study claims nothing its cases do not carry, emitted code's
names are refused before any work, and emit reads the formula cache."""

import subprocess
import sys
import time

import numpy as np
import pytest

import fprev
from fprev.testing import assert_deterministic, assert_same_order


def refused(code, timeout=120):
    """Runs ``code`` in a fresh interpreter (an abort or a hang must not
    take this one with it; past ``timeout`` seconds it fails) and returns
    the ValueError message it printed."""
    done = subprocess.run(
        [sys.executable, "-c", "import numpy as np, fprev, fprev.testing\ntry:\n    %s\n"
         "except ValueError as e:\n    print('ValueError:', e)" % code],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout,
    )
    assert done.returncode == 0, "%s ended with %d: %s" % (code, done.returncode, done.stderr[-2000:])
    assert done.stdout.startswith("ValueError:"), (code, done.stdout, done.stderr[-2000:])
    return done.stdout


@pytest.mark.parametrize(
    "code",
    [
        "fprev.testing.assert_deterministic(np.sum, 64, runs=10**13)",
        "fprev.reveal(np.sum, 64, runs=10**13)",
        "fprev.sweep(np.sum, '8..9', runs=10**13)",
    ],
)
def test_runs_past_the_bound_are_a_value_error_not_an_abort(code):
    said = refused(code)
    assert "give runs from 2 to 1000000, or 0" in said, said


@pytest.mark.parametrize(
    "call",
    [
        lambda: fprev.reveal(np.sum, 10**30),
        lambda: fprev.reveal(np.sum, 64, confirm=10**30),
        lambda: fprev.reveal(np.sum, 64, rows=10**30),
        lambda: fprev.check(fprev.Tree.from_formula("sequential", 8), np.sum, seed=2**64),
        lambda: fprev.check(fprev.Tree.from_formula("sequential", 8), np.sum, trials=10**7),
        lambda: fprev.check(fprev.Tree.from_formula("sequential", 8), np.sum, row=-1),
        lambda: fprev.reduce.binary_tree_sum(np.ones(8), threads=65535),
        lambda: fprev.invariance("reduce:binary-tree", 64, threads=[1, 2**70]),
        lambda: fprev.invariance(lambda X: X.sum(axis=1), 16, batch=[1, 2], columns=[2**70]),
        lambda: fprev.emit("numpy:sum", trials=10**6),
        lambda: assert_same_order(np.sum, np.sum, 8, trials=10**30),
        lambda: assert_deterministic(np.sum, 10**30),
    ],
)
def test_every_number_is_bounded_with_a_value_error(call):
    started = time.monotonic()
    with pytest.raises(ValueError, match="out of range; give"):
        call()
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    "code",
    [
        "fprev.sweep(np.sum, range(1, 10**9))",
        "fprev.explain(np.sum, range(1, 10**9))",
        "fprev.emit('numpy:sum', check=range(1, 10**9))",
    ],
)
def test_a_list_of_sizes_past_the_most_is_refused_at_once(code):
    said = refused(code, timeout=20)
    assert "more than the 1048576 sizes" in said, said


@pytest.mark.parametrize("batch", ["range(1, 10**6)", "range(1, 10**9)", "'1..1000000'"])
def test_a_batch_past_a_study_is_refused_at_once(batch):
    said = refused("fprev.invariance(lambda X: X.sum(axis=1), 16, batch=%s)" % batch, timeout=20)
    assert "batch" in said, said


def test_a_study_with_no_replay_claims_none():
    study = fprev.invariance(lambda X: X.sum(axis=1), 16, batch="1,2", confirm=0)
    text = str(study)
    assert "not confirmed by replay" in text, text
    assert "order, confirmed by replay" not in text, text


def none(X):
    return None


@pytest.mark.parametrize(
    "fn, raised",
    [(lambda X: 1 / 0, ZeroDivisionError), (none, TypeError), (np.sum, TypeError)],
)
def test_a_study_raises_what_the_callable_raised(fn, raised):
    with pytest.raises(raised):
        fprev.invariance(fn, 16, batch="1,2")


@pytest.mark.parametrize("lang, name", [("c", "int"), ("python", "np"), ("python", "import"), ("rust", "fin")])
def test_emit_refuses_a_name_that_breaks_the_code_before_any_work(lang, name):
    started = time.monotonic()
    with pytest.raises(ValueError, match="'%s'" % name):
        fprev.emit("native:pairwise", lang, name=name, formula="pairwise")
    assert time.monotonic() - started < 2


def test_emit_reads_and_keeps_the_formula_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FPREV_CACHE_DIR", str(tmp_path))
    first = fprev.emit("native:pairwise", "c")
    assert "from the cache" not in first
    assert list(tmp_path.glob("*.json")), "the formula explained is kept"
    started = time.monotonic()
    second = fprev.emit("native:pairwise", "c")
    assert "from the cache" in second, second[:600]
    assert time.monotonic() - started < 30


@pytest.mark.parametrize(
    "call",
    [
        lambda: fprev.invariance("numpy:sum", 100, columns=[1]),
        lambda: fprev.invariance("numpy:gemm", 100, shape=(2, 2, 100), columns=[5]),
    ],
)
def test_a_python_message_names_no_command_line_flag(call):
    with pytest.raises(ValueError) as e:
        call()
    assert "--" not in str(e.value), str(e.value)

