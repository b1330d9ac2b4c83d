"""fprev.emit writes code that gives a library's bits; fprev.reduce.compatible
runs NumPy's sum in pure NumPy: checked here against np.sum itself, on inputs
and sizes of its own."""

import time

import numpy as np
import pytest

import fprev
import fprev.reduce


def test_compatible_gives_numpy_s_bits_without_its_sum():
    numpy_sum = fprev.reduce.compatible("numpy:sum")
    source = fprev.emit("numpy:sum", "python")
    assert "np.sum" not in source and ".sum(" not in source
    rng = np.random.default_rng(11)
    for n in (1, 2, 7, 8, 9, 127, 128, 129, 1000, 4097, 65_537):
        x = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(np.float32)
        got = numpy_sum(x)
        assert got.dtype == np.float32
        assert got.tobytes() == np.sum(x).tobytes(), n
    # Another order's code would not: pairwise halving differs somewhere.
    pairwise = fprev.reduce.compatible("native:pairwise")
    x = rng.standard_normal(1000).astype(np.float32)
    assert pairwise(x).tobytes() != np.sum(x).tobytes() or any(
        pairwise(y).tobytes() != np.sum(y).tobytes()
        for y in (rng.standard_normal(1000).astype(np.float32) for _ in range(20))
    )


def test_emit_writes_c_and_checks_it():
    source = fprev.emit("numpy:sum", "c", dtype="float64", check=[1, 2, 3, 100, 1000])
    assert "double numpy_sum_f64(const double *x, size_t n)" in source
    assert "Checked: compiled and run against numpy:sum" in source


def test_emit_refuses_bad_input():
    with pytest.raises(ValueError, match="language"):
        fprev.emit("numpy:sum", "fortran")
    with pytest.raises(ValueError, match="function name"):
        fprev.emit("numpy:sum", "c", name="9lives")
    with pytest.raises(fprev.UnconfirmedWarning, match="is not native:sequential's"):
        fprev.emit("numpy:sum", "c", formula="sequential")


def test_a_formula_given_by_hand_is_proven_where_explain_checks():
    # Pairwise is this black box's tree at the reference size 1,000 only.
    with pytest.raises(fprev.UnconfirmedWarning, match="at n = 2048, the black box's tree"):
        fprev.emit("native:below(2000, pairwise, fold)", "c", formula="pairwise")


def test_an_order_independent_box_is_told_at_the_first_sizes(tmp_path):
    path = tmp_path / "fsum.py"
    path.write_text("import math\n\ndef f(x):\n    return math.fsum(x)\n")
    started = time.monotonic()
    with pytest.raises(fprev.OrderIndependentError, match=r"at n = 3\.\.6,128: "):
        fprev.reduce.compatible("python:%s:f" % path)
    # It revealed every size to 2,048 first: over five minutes.
    assert time.monotonic() - started < 30


def test_emit_check_true_checks_a_tensor_cores_chain_at_its_own_default_sizes():
    # A chain's defaults are every size to four groups and one more, then
    # the powers of two from 128 to 4,096, not 2^20 simulator calls.
    source = fprev.emit("mma:hopper:m16n8k16.f32.f16.f16.f32", "python", dtype="f16",
                        formula="fused:17", check=True)
    assert "n = 1..65,128,256,512,1024,2048,4096" in source
    ns = {}
    exec(source, ns)
    chain = ns["mma_hopper_m16n8k16_f32_f16_f16_f32_f16"]
    x = np.array([1.0, 2.0 ** -30], dtype=np.float16)
    assert chain(x, np.ones(2, dtype=np.float16)).dtype == np.float32
    with pytest.raises(ValueError, match="no sizes"):
        fprev.emit("native:sequential", "c", check=[])


def test_a_gemv_is_emitted_and_checked_along_k_with_its_rows():
    # Rows of 16, K the size: the square default would be past memory at
    # the check's large sizes.
    source = fprev.emit(
        "blas:gemv@blis", "c", shape=(16, 1, 1), check=[1, 2, 3, 40, 1000, 4099]
    )
    assert "Checked: compiled and run against blas:gemv@blis" in source
    with pytest.raises(ValueError):
        fprev.emit("blas:gemv@blis", "c", shape=(16, 1))
