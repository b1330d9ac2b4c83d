"""The fprev package against real NumPy (and JAX and PyTorch where they are
installed), with trees known independently of fprev: orders written out
in Python here, from their formulas."""

import importlib.util
import re
import shutil
import traceback

import numpy as np
import pytest

import fprev
from fprev import BlackBoxError, OrderIndependentError, Tree
from fprev.reduce import binary_tree_sum, prerounded_sum, replay
from fprev.testing import assert_order, assert_same_order


# Orders written out in Python, each with its tree's text built from the
# same formula independently of fprev.

def sequential(x):
    s = x[0]
    for v in x[1:]:
        s = s + v
    return s


def sequential_text(lo, hi):
    text = str(lo)
    for i in range(lo + 1, hi):
        text = "(%s+%d)" % (text, i)
    return text


def pairwise(x):
    """Recursive halving at n // 2."""
    if len(x) == 1:
        return x[0]
    h = len(x) // 2
    return pairwise(x[:h]) + pairwise(x[h:])


def pairwise_text(lo, hi):
    if hi - lo == 1:
        return str(lo)
    h = lo + (hi - lo) // 2
    return "(%s+%s)" % (pairwise_text(lo, h), pairwise_text(h, hi))


def binary_tree_text(lo, hi):
    """S[lo,hi) = S[lo,lo+P) + S[lo+P,hi), P the largest power of two below hi - lo."""
    if hi - lo == 1:
        return str(lo)
    p = 1
    while p * 2 < hi - lo:
        p *= 2
    return "(%s+%s)" % (binary_tree_text(lo, lo + p), binary_tree_text(lo + p, hi))


def binary_tree_python(x):
    if len(x) == 1:
        return x[0]
    p = 1
    while p * 2 < len(x):
        p *= 2
    return binary_tree_python(x[:p]) + binary_tree_python(x[p:])


@pytest.mark.parametrize("n", [1, 2, 3, 17, 100])
@pytest.mark.parametrize("dtype", ["float32", "float64", np.float16])
def test_orders_written_in_python_are_revealed(n, dtype):
    assert fprev.reveal(sequential, n, dtype) == Tree.from_json(sequential_text(0, n))
    assert fprev.reveal(pairwise, n, dtype) == Tree.from_json(pairwise_text(0, n))


def test_numpy_sum_is_revealed_and_confirmed_by_replay():
    n = 1000
    tree = fprev.reveal(np.sum, n)
    assert tree.n == n and tree.dtype == "f32" and tree.label == "numpy.sum"
    assert tree.stats["calls"] <= 3 * n
    check = fprev.check(tree, np.sum, trials=100)
    assert check and check.ok and check.trials == 100, check.message
    # NumPy's sum is not left to right at this size: the check would see it.
    assert not fprev.check(Tree.from_json(sequential_text(0, n)), np.sum, trials=30)
    # The replay gives NumPy's bits on data of every kind.
    rng = np.random.default_rng(7)
    for _ in range(20):
        x = (rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, n)).astype(np.float32)
        assert replay(tree, x).tobytes() == np.sum(x).tobytes()


def test_numpy_matmul_is_revealed_row_by_row():
    m, k = 16, 64
    b = np.ones((k, 1), dtype=np.float32)

    def gemv(a):
        return (a @ b)[:, 0]

    tree = fprev.reveal(gemv, k, rows=m)
    assert tree.n == k
    # One call answers many queries.
    assert tree.stats["calls"] < tree.stats["inputs"]
    assert fprev.check(tree, gemv, rows=m, trials=50), "matmul's order did not replay"


def test_a_mismatch_reports_the_input_that_shows_it():
    check = fprev.check(Tree.from_json(pairwise_text(0, 64)), sequential, trials=50, dtype="float32")
    assert not check
    assert check.message.startswith("mismatch on trial")
    assert len(check.input) == 64


def test_assert_same_order_passes_for_one_kernel_and_fails_for_another():
    tree = assert_same_order(np.sum, np.add.reduce, n=300)
    assert tree.n == 300
    with pytest.raises(AssertionError, match=r"sequential .* has \(") as caught:
        assert_same_order(sequential, pairwise, n=8)
    # The smallest subtree each lacks: sequential's ((0+1)+2), pairwise's (2+3).
    assert "((0+1)+2)" in str(caught.value) and "(2+3)" in str(caught.value)


def test_assert_order_against_a_saved_tree(tmp_path):
    path = tmp_path / "pairwise.json"
    Tree.from_json(pairwise_text(0, 40)).save(str(path))
    assert_order(pairwise, path)
    assert_order(pairwise, str(path), n=40, dtype="float64")
    with pytest.raises(AssertionError, match="does not sum in the expected order"):
        assert_order(sequential, path)
    with pytest.raises(ValueError, match="sums 40 values"):
        assert_order(pairwise, path, n=41)


def test_reducers_give_the_same_bits_under_threads_and_permutation():
    rng = np.random.default_rng(3)
    for n in [1, 2, 1000, 100_003]:
        for dtype in [np.float64, np.float32]:
            x = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)).astype(dtype)
            one = binary_tree_sum(x)
            assert one.dtype == dtype
            for threads in [1, 2, 3, 8]:
                assert binary_tree_sum(x, threads=threads).tobytes() == one.tobytes()
            # The formula, summed in Python in the same precision.
            if n <= 1000:
                assert binary_tree_python(list(x)).tobytes() == one.tobytes()
            exact = prerounded_sum(x)
            for seed in range(3):
                shuffled = np.random.default_rng(seed).permutation(x)
                assert prerounded_sum(shuffled).tobytes() == exact.tobytes()
                assert prerounded_sum(shuffled, threads=4).tobytes() == exact.tobytes()
            # Strided arrays are read as they are.
            assert binary_tree_sum(x[::2]).tobytes() == binary_tree_sum(x[::2].copy()).tobytes()


def test_binary_tree_sum_is_revealed_as_its_formula():
    tree = fprev.reveal(lambda x: binary_tree_sum(x, threads=2), 77, "float64")
    assert tree == Tree.from_json(binary_tree_text(0, 77))


def test_tree_forms_and_equality():
    t = Tree.from_json("((1+0)+(3+2))")
    assert t == Tree.from_json("((0+1)+(2+3))")  # modulo child order
    assert hash(t) == hash(Tree.from_json("((2+3)+(0+1))"))
    assert t != Tree.from_json("(((0+1)+2)+3)")
    assert t.text() == str(t) == "((0+1)+(2+3))"
    assert Tree.from_json(t.to_json()) == t
    assert t.n == 4 and t.depth == 2 and t.is_binary
    assert "digraph" in t.to_dot()
    assert "n=4" in repr(t)
    fused = Tree.from_json("(0+1+2+3)")
    assert not fused.is_binary and fused != t
    assert fprev.diff(t, t) is None
    assert fprev.diff(t, Tree.from_json("(((0+1)+2)+3)")) == "a has (2+3), b has ((0+1)+2)"
    with pytest.raises(ValueError, match="not a tree"):
        Tree.from_json("((0+1)+")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_svg_and_the_jupyter_picture():
    t = Tree.from_json("((0+1)+2)")
    assert "<svg" in t.to_svg()
    assert t._repr_svg_() == t.to_svg()


def test_a_callable_that_raises_surfaces_with_its_traceback():
    def broken_black_box(x):
        raise KeyError("from inside the black box")

    with pytest.raises(KeyError, match="from inside the black box") as caught:
        fprev.reveal(broken_black_box, 8)
    frames = [f.name for f in traceback.extract_tb(caught.value.__traceback__)]
    assert "broken_black_box" in frames


@pytest.mark.parametrize(
    "call, kwargs, error, message",
    [
        (3, {}, TypeError, "expected a callable"),
        (lambda x: "seven", {}, TypeError, "not a number"),
        (lambda x: x, {}, TypeError, "array of shape"),
        (lambda x: x.sort(), {}, ValueError, "read-only"),
        (lambda a: a.sum(axis=1)[:2], {"rows": 4}, TypeError, "expected 4 sums"),
        (np.sum, {"n": 0}, ValueError, "0 is out of range; give n from 1 to"),
        (np.sum, {"n": 2.5}, TypeError, "whole number"),
        (np.sum, {"dtype": "int8"}, ValueError, "unsupported dtype"),
        (np.sum, {"algo": "magic"}, ValueError, "algo must be one of"),
        (np.sum, {"algo": "naive", "n": 9}, ValueError, 'stops at n = 8; give algo="fprev"'),
        (np.sum, {"rows": 0}, ValueError, "give rows from 1 to"),
        (lambda x: float("nan"), {}, BlackBoxError, "NaN"),
    ],
)
def test_bad_callables_and_arguments(call, kwargs, error, message):
    args = {"n": 16, **kwargs}
    with pytest.raises(error, match=message):
        fprev.reveal(call, **args)


def test_an_exact_sum_has_no_order():
    import math

    with pytest.raises(OrderIndependentError):
        fprev.reveal(lambda x: math.fsum(x.astype(np.float64)), 16)


def test_a_sum_that_sorts_by_magnitude_depends_on_the_values():
    # Its masks, the largest summands, always come last: one fused node of
    # all 24 in masked answers, another order on random inputs.
    def sorted_sum(x):
        s = np.float32(0)
        for v in sorted(x.tolist(), key=abs):
            s = np.float32(s + np.float32(v))
        return s

    with pytest.raises(BlackBoxError, match="order depends on the values"):
        fprev.reveal(sorted_sum, 24)


def test_reducers_reject_what_they_cannot_sum():
    with pytest.raises(TypeError, match="1-D NumPy array of float64 or float32"):
        binary_tree_sum([1.0, 2.0])
    with pytest.raises(TypeError, match="2-D array"):
        prerounded_sum(np.ones((2, 2)))
    with pytest.raises(ValueError, match="sums 3 values, x holds 4"):
        replay(Tree.from_json("((0+1)+2)"), np.ones(4))
    with pytest.raises(ValueError, match="give threads from 1 to 1024"):
        binary_tree_sum(np.ones(4), threads=0)


@pytest.mark.skipif(importlib.util.find_spec("ml_dtypes") is None, reason="ml_dtypes is not installed")
def test_bfloat16_through_ml_dtypes():
    import ml_dtypes

    tree = fprev.reveal(pairwise, 24, ml_dtypes.bfloat16)
    assert tree == Tree.from_json(pairwise_text(0, 24)) and tree.dtype == "bf16"


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="JAX is not installed (pip install jax)")
def test_a_wrapped_jax_function():
    import jax.numpy as jnp

    def jax_sum(x):
        return float(jnp.sum(x))

    tree = fprev.reveal(jax_sum, 256)
    assert fprev.check(tree, jax_sum, trials=50)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed (3 GB; pip install torch to run this)")
def test_a_wrapped_torch_function():
    import torch

    def torch_sum(x):
        return torch.from_numpy(x.copy()).sum().item()

    tree = fprev.reveal(torch_sum, 256)
    assert fprev.check(tree, torch_sum, trials=50)


# explain: formulas of orders written out here.

def four_lanes(x):
    """Four lanes left to right (lane r holds x[r], x[r+4], ...), the lane
    sums combined pairwise: fprev's strided:4."""
    lanes = [sequential(x[r::4]) for r in range(min(4, len(x)))]
    return pairwise(lanes)


def switches_at_10(x):
    """Left to right below 10 summands, right to left from 10 on."""
    return sequential(x) if len(x) < 10 else sequential(x[::-1])


def parity(x):
    """Left to right for odd counts, right to left for even ones: no rule
    of the order language."""
    return sequential(x) if len(x) % 2 else sequential(x[::-1])


def test_explain_names_the_formula_of_an_order_written_out():
    e = fprev.explain(four_lanes, [1, 2, 3, 5, 8, 13, 21, 40], verify=[100])
    assert e, str(e)
    assert e.formula == "strided:4"
    assert "4 interleaved lanes" in e.sentence
    assert e.sizes == [1, 2, 3, 5, 8, 13, 21, 40, 100]
    assert e.verified == [100]
    assert "checked to n = 100" in str(e)


def test_explain_finds_a_switch_and_its_formula_holds_at_sizes_it_never_saw():
    e = fprev.explain(switches_at_10, [2, 4, 6, 8, 9, 10, 11, 12, 16, 24, 32], verify=())
    assert e, str(e)
    assert e.gaps == []
    # The formula gives the order at sizes it never saw, on both sides.
    for n in [3, 7, 15, 50]:
        predicted = Tree.from_formula(e.formula, n)
        assert predicted.text() == fprev.reveal(switches_at_10, n, confirm=0).text(), n


def test_a_formula_gives_its_tree_at_any_size():
    assert Tree.from_formula("strided:4", 8).text() == "(((0+4)+(1+5))+((2+6)+(3+7)))"
    assert Tree.from_formula("native:sequential", 3).text() == "((0+1)+2)"
    with pytest.raises(ValueError):
        Tree.from_formula("lanes(4)", 8)


def switches_at_3000(x):
    """Left to right below 3,000 summands, NumPy's pairwise sum from there."""
    return np.add.reduce(x) if len(x) >= 3000 else sequential(x)


def test_explain_checks_its_formula_past_the_sizes_it_reveals():
    e = fprev.explain(switches_at_3000, [3, 5, 8, 16, 33, 100, 1000], verify=[4096])
    assert not e, str(e)
    assert e.closest == "sequential" and e.fails_at == 4096
    e = fprev.explain(switches_at_3000, [3, 5, 8, 16, 33, 100, 1000], verify=())
    assert e.formula == "sequential" and e.verified == []
    assert "checked to n = 1000" in str(e)


def test_explain_says_when_no_formula_fits():
    e = fprev.explain(parity, range(2, 12))
    assert not e
    assert e.formula is None and e.closest is not None
    assert e.fails_at in range(3, 12)
    assert str(e).startswith("# not explained")


def test_explain_refuses_bad_sizes():
    with pytest.raises(ValueError):
        fprev.explain(np.sum, [])
    with pytest.raises(ValueError):
        fprev.explain(np.sum, [0])
    with pytest.raises(TypeError):
        fprev.explain(None, [4])


def test_numpy_sum_is_explained_and_its_formula_gives_the_tree_at_16384():
    e = fprev.explain(np.sum)
    assert e, str(e)
    assert len(e.sizes) >= 60
    assert Tree.from_formula(e.formula, 16384) == fprev.reveal(np.sum, 16384, confirm=0, arith=False)


def test_the_package_exports_only_its_own_names():
    import types

    # Submodules (the pytest plugin, loaded by pytest) and names pytest's
    # assertion rewriting adds (not identifiers) aside.
    public = {
        n
        for n in dir(fprev)
        if n.isidentifier() and not n.startswith("_") and not isinstance(getattr(fprev, n), types.ModuleType)
    }
    # Helper imports (os, typing's Any, Union, ...) are not the package's.
    assert public - {"ALGORITHMS"} <= set(fprev.__all__), public - set(fprev.__all__)
    for helper in ("Any", "Callable", "Optional", "Union", "os", "format_name"):
        assert not hasattr(fprev, helper), helper


def test_check_defaults_to_the_commands_trials_and_reports_its_mismatch():
    import inspect
    import subprocess

    default = inspect.signature(fprev.check).parameters["trials"].default
    command = shutil.which("fprev")
    if command is None:
        pytest.skip("the fprev command is not on PATH (install the package: pip install ./python)")
    help_text = subprocess.run([command, "check", "--help"], capture_output=True, text=True).stdout
    trials = re.search(r"--trials <TRIALS>\s+Random inputs to try.*?\[default: (\d+)\]", help_text, re.S)
    assert trials is not None and int(trials.group(1)) == default, help_text

    def backward(x):
        s = x[-1]
        for v in x[-2::-1]:
            s = np.float32(s + v)
        return s

    forward = fprev.Tree.from_json("((((0+1)+2)+3)+4)")
    report = fprev.check(forward, backward, dtype="float32")
    assert not report and report.mismatch is not None and report.mismatch < report.trials
    assert len(report.input) == 5 and report.replayed != report.returned


def test_sweep_finds_the_switch_of_an_order_written_out():
    s = fprev.sweep(switches_at_10, "2..16")
    assert s.sizes == list(range(2, 17))
    # Each size's tree is that size's reveal.
    for n, tree in zip(s.sizes, s.trees):
        assert tree == fprev.reveal(switches_at_10, n, confirm=0), n
    # The order's name changes once, at 10, where the function switches.
    assert [n for n, _, _ in s.change_points] == [10], s.change_points
    # One formula regenerates every size, and holds past them.
    assert s.formula is not None
    assert Tree.from_formula(s.formula, 40) == fprev.reveal(switches_at_10, 40, confirm=0)
    table = str(s)
    assert ["10..16", "reverse"] in [line.split() for line in table.splitlines()], table
    assert '"change_points"' in s.to_json()
    assert fprev.sweep(four_lanes, [8, 3, 8]).sizes == [3, 8]
    with pytest.raises(ValueError):
        fprev.sweep(four_lanes, "")


def test_a_formula_tree_file_is_checked_streamed_and_drawn_only_where_it_fits():
    """A tree file that holds a formula and n, not leaves (what
    `reveal --infer` writes past 65,536), reads without building its
    nodes: n, repr and the file round-trip; fprev.check replays it straight
    from the formula against a real callable (NumPy's cumsum adds left to
    right, so blocks of 8 then their sums are blocked:8) and tells NumPy's
    pairwise sum from it."""
    n = 1 << 22
    text = (
        '{"n": %d, "dtype": "f32", "inferred": {"formula": "blocked:8", "from": [8, 16]}}' % n
    )
    tree = Tree.from_json(text)
    assert tree.n == n
    assert "native:blocked:8" in repr(tree)
    assert '"tree"' not in tree.to_json()

    def blocked8(x):
        blocks = np.cumsum(x.reshape(-1, 8), axis=1, dtype=np.float32)[:, -1]
        return np.cumsum(blocks, dtype=np.float32)[-1]

    assert fprev.check(tree, blocked8, trials=6)
    assert not fprev.check(tree, np.sum, trials=6)
    # More summands than a tree of fits here: its nodes are refused, in a
    # MemoryError that says why, and nothing else is.
    try:
        huge = Tree.from_json(text.replace(str(n), str(1 << 28)))
    except ValueError as e:  # a machine without 9 GB free refuses it as read
        assert "of memory to replay" in str(e)
        return
    assert huge.n == 1 << 28
    with pytest.raises(MemoryError, match="of memory to reveal"):
        huge.depth


def test_a_users_function_is_never_changed_by_being_revealed():
    # np.sum is every caller's: a study that hands it rows (wrongly, as a
    # batched function) must leave it as it was, so that a later plain
    # reveal of np.sum still sums one vector a call.
    with pytest.raises(Exception):
        fprev.invariance(np.sum, 16, batch=[1, 2])
    assert not hasattr(np.sum, "rows")
    assert fprev.reveal(np.sum, 16).n == 16
