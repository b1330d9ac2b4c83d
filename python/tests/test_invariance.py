"""fprev.invariance, fprev.Study and the testing asserts against real black
boxes: callables whose order along the batch is written by hand, NumPy's
GEMM checked against its own bits, OpenBLAS's environment variables (each
value in a process of its own), and the console script doing the same."""

import os
import subprocess
import sys

import numpy as np
import pytest

import fprev
from fprev.testing import assert_batch_invariant, assert_invariant_under


def left_to_right(X):
    """Each row summed left to right, whatever the batch."""
    out = np.zeros(X.shape[0], dtype=X.dtype)
    for j in range(X.shape[1]):
        out += X[:, j]
    return out


def backwards_from_five(X):
    """Left to right below five rows a call, right to left from five on."""
    return left_to_right(X[:, ::-1] if X.shape[0] >= 5 else X)


def test_a_callable_summing_each_row_alike_is_batch_invariant():
    study = assert_batch_invariant(left_to_right, 48, batch="1..8")
    assert study.invariant and study.batch_invariant and bool(study)
    assert study.changing == [] and study.batch_invariant_under == [{}]
    rows = {setting["row"] for setting, *_ in study.cases}
    assert rows == {"first", "middle", "last"}
    batches = sorted({int(setting["batch"]) for setting, *_ in study.cases})
    assert batches == list(range(1, 9))
    sequential = fprev.Tree.from_formula("sequential", 48)
    for setting, found, tree, _ in study.cases:
        assert found == "order", setting
        assert tree == sequential, setting
    # A neighbour's tree is proven, not revealed again.
    assert any(proven for *_, proven in study.cases)
    assert "invariant" in repr(study) and "not invariant" not in repr(study)


def test_a_callable_reversing_from_five_rows_has_two_regimes():
    study = fprev.invariance(backwards_from_five, 48, batch=range(1, 9))
    assert not study.batch_invariant and not study.invariant and not study
    assert study.changing == ["batch"]
    assert study.batch_invariant_under == []
    regimes = study.regimes()
    assert [r["setting"] for r in regimes] == [{"row": "first"}, {"row": "middle"}, {"row": "last"}]
    for regime in regimes:
        runs = [(r["span"], r["formula"]) for r in regime["runs"]]
        assert runs == [("1..4", "sequential"), ("5..8", "reverse")], regime
        assert regime["runs"][0]["tree"] == fprev.Tree.from_formula("sequential", 48)
        assert regime["runs"][1]["tree"] == fprev.Tree.from_formula("reverse", 48)
    with pytest.raises(AssertionError) as failed:
        assert_batch_invariant(backwards_from_five, 48, batch="1..8", rows=["first"])
    report = str(failed.value)
    assert "not batch-invariant" in report and "M = 1..4" in report and "M = 5..8" in report, report


def test_numpy_gemm_regimes_are_those_of_its_bits():
    batch = [1, 2, 16, 64]
    study = fprev.invariance("numpy:gemm", shape=(64, 64, 1000), batch=batch, rows=["first"], columns=[0])
    assert not study.batch_invariant and "batch" in study.changing
    (regimes,) = study.regimes()
    assert regimes["setting"] == {"row": "first", "column": "0"}
    group = {}
    for run in regimes["runs"]:
        assert run["found"] == "order", run
        for m in run["values"]:
            group[int(m)] = run["group"]
    assert sorted(group) == batch
    rng = np.random.default_rng(7)
    draws = [
        (rng.standard_normal((64, 1000)).astype(np.float32), rng.standard_normal((1000, 64)).astype(np.float32))
        for _ in range(3)
    ]
    bits = {m: b"".join((x[:m] @ w)[0, 0].tobytes() for x, w in draws) for m in batch}
    for a in batch:
        for b in batch:
            assert (group[a] == group[b]) == (bits[a] == bits[b]), (a, b, str(study))
    assert str(study).startswith("invariance: numpy:gemm, K = 1000, N = 64: 4 cases")


def test_numpy_sum_is_invariant_under_openblas_threads():
    study = assert_invariant_under("numpy:sum", 1000, env={"OPENBLAS_NUM_THREADS": ["1", "2"]})
    settings = [setting for setting, *_ in study.cases]
    # Each environment in two fresh processes, their repeats compared.
    assert settings == [
        {"OPENBLAS_NUM_THREADS": threads, "process": process} for threads in "12" for process in "12"
    ]
    assert all(found == "order" for _, found, _, _ in study.cases)
    # The study file round-trips.
    again = fprev.Study.from_json(study.to_json())
    assert [c[0] for c in again.cases] == settings and again.invariant


def test_openblas_dot_changes_with_its_core_type():
    # Haswell's (AVX2) and Prescott's (SSE3) kernels run on any CPU this
    # suite runs on; OpenBLAS runs a forced core type without asking it.
    with pytest.raises(AssertionError) as failed:
        assert_invariant_under("blas:dot@openblas", 4096, env={"OPENBLAS_CORETYPE": ["Haswell", "Prescott"]})
    report = str(failed.value)
    assert "OPENBLAS_CORETYPE" in report and "not invariant" in report, report
    study = fprev.invariance("blas:dot@openblas", 4096, env={"OPENBLAS_CORETYPE": ["Haswell", "Prescott"]})
    assert study.changing == ["OPENBLAS_CORETYPE"] and study.pin == ["OPENBLAS_CORETYPE"]
    trees = {setting["OPENBLAS_CORETYPE"]: tree for setting, _, tree, _ in study.cases}
    assert fprev.diff(trees["Haswell"], trees["Prescott"]) is not None


DRAWN_PER_PROCESS = """
import os
import numpy as np

START = int.from_bytes(os.urandom(2), "little") % 64


def f(x):
    t = np.float32(0)
    for k in range(len(x)):
        t = np.float32(t + x[(START + k) % len(x)])
    return t
"""


def test_an_order_drawn_per_process_blames_no_knob(tmp_path):
    # Left to right from a place drawn as each process starts: the variable
    # it never reads was named as changing the order, and to pin.
    path = tmp_path / "drawn.py"
    path.write_text(DRAWN_PER_PROCESS)
    # Three processes each, lest a setting's processes all draw the same
    # place (1 in 64 with two, 1 in 4,096 with three).
    study = fprev.invariance("python:%s:f" % path, 64, env={"DUMMY": ["1", "2"]}, processes=3)
    assert not study.invariant
    assert study.changing == [] and study.pin is None
    assert len(study.cases) == 6
    assert "between fresh processes at DUMMY=1, DUMMY=2): no knob can be blamed" in str(study), str(study)
    # Without an environment, the study runs in fresh processes too.
    # Three processes, lest two draw the same place (1 in 64).
    alone = fprev.invariance("python:%s:f" % path, 64, processes=3)
    assert [setting for setting, *_ in alone.cases] == [{"process": p} for p in "123"]
    assert not alone.invariant


def test_numpy_sums_an_unaligned_view_in_another_order():
    # NumPy buffers an unaligned array in chunks of 8,192 elements.
    study = fprev.invariance("numpy:sum", 20000, offsets="0,1B")
    assert [setting for setting, *_ in study.cases] == [{"offset": "0"}, {"offset": "1B"}]
    assert study.changing == ["offset"] and not study.invariant
    # A callable is handed its input at each offset too (it was refused).
    called = fprev.invariance(np.sum, 20000, offsets=["0", "1B"])
    assert called.changing == ["offset"] and not called.invariant


def test_env_needs_a_spec():
    with pytest.raises(TypeError, match="another process"):
        fprev.invariance(left_to_right, 48, batch=[1, 2], env={"OPENBLAS_NUM_THREADS": ["1", "2"]})


@pytest.mark.parametrize(
    "call, said",
    [
        (lambda: fprev.invariance(left_to_right, 48, batch=[0, 1]), "give batch from 1 to"),
        (lambda: fprev.invariance(left_to_right, 48, batch="0..4"), "batch: '0..4' is not a list of sizes"),
        (lambda: fprev.invariance(left_to_right, 48, batch=[1, 2], rows=["3"]), "row 3 of a batch of 1 rows"),
        (lambda: fprev.invariance("numpy:sum", 100, env={"threads": ["1", "2"]}), "a knob of its own"),
        (lambda: fprev.invariance("numpy:sum", 100, env={"NOT A NAME": ["1"]}), "is not a knob"),
        (lambda: fprev.invariance("numpy:gemm", 1000, batch=[1, 2]), "give shape"),
        (lambda: fprev.invariance(left_to_right, 48), "nothing varies"),
        (lambda: fprev.invariance("numpy:sum", 100, processes=17), "give processes from 1 to 16"),
        (lambda: fprev.invariance("numpy:sum", 100, offsets="2B,9999B"), "'9999B' is not an offset"),
        (lambda: fprev.invariance("numpy:sum", 100, processes=10**30), "give processes from 1 to 16"),
        (lambda: fprev.invariance(left_to_right, 48, threads=[1, 2]), "cannot set a callable's thread count"),
        (
            lambda: fprev.invariance("numpy:sum", 100, env={"OPENBLAS_NUM_THREADS": ["1"]}, rows=["3"]),
            "row 3 of a batch of 1 rows",
        ),
    ],
)
def test_bad_arguments_say_what_in_one_line(call, said):
    with pytest.raises(ValueError) as failed:
        call()
    message = str(failed.value)
    assert said in message and "\n" not in message, message


def test_the_console_script_runs_an_environment_study():
    script = os.path.join(os.path.dirname(sys.executable), "fprev")
    assert os.path.isfile(script), "the package's console script is not installed next to %s" % sys.executable
    args = [script, "invariance", "numpy:sum", "-n", "1000", "--env", "OPENBLAS_NUM_THREADS=1,2"]
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    # Each environment in two fresh processes.
    for threads in "12":
        for process in "12":
            line = "  [A] OPENBLAS_NUM_THREADS=%s process=%s\n" % (threads, process)
            assert line in done.stdout, done.stdout
    assert "invariant: every case gave the same order" in done.stdout, done.stdout
