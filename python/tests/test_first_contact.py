"""What a first user meets: every reveal ends by replaying its tree on
random inputs (tree.confirmed), Kahan's sum is confirmed as compensated
steps and one fprev cannot model is revealed but not confirmed, the testing helpers compare bits as well as orders, sizes the
memory cannot hold are refused before allocating, and bad arguments are
named. The expected trees are built here as text, independently of fprev."""

import re
import time
import warnings

import numpy as np
import pytest

import fprev
from fprev import Tree, UnconfirmedWarning
from fprev.testing import assert_order, assert_same_order


def left_to_right_text(n):
    """'((((0+1)+2)+3)...)': the text form of a left-to-right sum of n leaves."""
    text = "0"
    for i in range(1, n):
        text = "(" + text + "+" + str(i) + ")"
    return text


def sequential_sum(x):
    """Plain float32 additions, left to right."""
    s = np.float32(0)
    for i in range(len(x)):
        s = s + x[i]
    return s


def kahan(x):
    """Kahan's compensated summation in float32: left to right, with the
    rounding error of each addition carried into the next."""
    s, c = np.float32(0), np.float32(0)
    for i in range(len(x)):
        y = x[i] - c
        t = s + y
        c = (t - s) - y
        s = t
    return s


def kahan_right_to_left(x):
    """Kahan's summation from the last summand to the first: its running
    sum is the second operand of each addition in canonical order."""
    return kahan(x[::-1])


def cascade(x):
    """A float32 running sum whose rounding errors are summed apart in
    float64 and added at the end: a compensated sum that no arithmetic
    model of fprev's holds."""
    s = np.float32(0)
    e = 0.0
    for v in x:
        t = np.float32(s + v)
        e += (float(s) + float(v)) - float(t)
        s = t
    return np.float32(float(s) + e)


def right_to_left_text(n):
    """'(0+(1+(2+3)))' for n = 4: a right-to-left sum of n leaves."""
    text = str(n - 1)
    for i in reversed(range(n - 1)):
        text = "(" + str(i) + "+" + text + ")"
    return text


def test_the_expected_text_and_the_two_sums_are_what_they_claim():
    assert left_to_right_text(1) == "0"
    assert left_to_right_text(4) == "(((0+1)+2)+3)"
    # Kahan really compensates: 1 + 63 halves of an ulp of 1 is lost by
    # the plain sum (each addition rounds back to 1), kept by Kahan's.
    x = np.array([1.0] + [2.0**-24] * 63, dtype=np.float32)
    assert sequential_sum(x) == np.float32(1.0)
    assert kahan(x) == np.float32(1.0) + np.float32(63 * 2.0**-24)
    assert kahan(x).dtype == sequential_sum(x).dtype == np.float32
    assert kahan_right_to_left(x[::-1]) == kahan(x)
    assert right_to_left_text(3) == "(0+(1+2))"


def test_numpy_sum_is_confirmed_by_replay():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnconfirmedWarning)
        tree = fprev.reveal(np.sum, 1000, "float32")
    assert tree.n == 1000
    assert tree.confirmed is True
    c = tree.confirmation
    assert isinstance(c, dict)
    assert c["trials"] == 48 and c["passed"] == 48
    # The confirmation travels with the tree's JSON.
    again = Tree.from_json(tree.to_json())
    assert again == tree and again.confirmed is True
    assert again.confirmation["trials"] == 48


def test_confirm_zero_skips_the_replay():
    tree = fprev.reveal(np.sum, 1000, "float32", confirm=0)
    assert tree.confirmed is None
    assert tree.confirmation is None
    # The order is revealed all the same.
    assert tree == fprev.reveal(np.sum, 1000, "float32")


def test_confirm_takes_the_number_of_trials():
    tree = fprev.reveal(np.sum, 100, "float32", confirm=5)
    assert tree.confirmed is True
    assert tree.confirmation["trials"] == 5 and tree.confirmation["passed"] == 5


def test_a_kahan_sum_is_confirmed_as_compensated_steps():
    n = 64
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnconfirmedWarning)
        tree = fprev.reveal(kahan, n, "float32")
    assert tree.text() == left_to_right_text(n)
    assert tree.confirmed is True
    a = tree.arithmetic
    assert a["version"] == 5
    assert a["default"]["compensated"] is True
    # The last step returns its sum, its error dropped.
    assert [(node["size"], node["drops_error"]) for node in a["nodes"]] == [(n, True)]
    assert "compensated" in a["summary"]


def test_kahan_s_sum_right_to_left_is_confirmed_as_compensated_steps():
    n = 64
    tree = fprev.reveal(kahan_right_to_left, n, "float32")
    assert tree.text() == right_to_left_text(n)
    assert tree.confirmed is True
    assert "compensated" in tree.arithmetic["summary"]


def test_a_compensated_sum_fprev_cannot_model_is_revealed_but_not_confirmed():
    n = 64
    with pytest.warns(UnconfirmedWarning, match="tree.confirmed is False"):
        tree = fprev.reveal(cascade, n, "float32")
    # Masked inputs see the order: left to right.
    assert tree.text() == left_to_right_text(n)
    assert tree == Tree.from_json(left_to_right_text(n))
    assert tree.depth == n - 1 and tree.is_binary
    # Its bits are not those of plain additions in that order.
    assert tree.confirmed is False
    c = tree.confirmation
    assert 0 <= c["passed"] < c["trials"] <= 48
    # A plain left-to-right sum, for comparison, is confirmed.
    plain = fprev.reveal(sequential_sum, n, "float32")
    assert plain == tree and plain.confirmed is True


def test_the_confirmation_counts_agree_with_the_input_the_warning_names():
    with pytest.warns(UnconfirmedWarning) as record:
        tree = fprev.reveal(cascade, 64, "float32")
    message = next(str(w.message) for w in record if issubclass(w.category, UnconfirmedWarning))
    first_differing = int(re.search(r"on random input (\d+)", message).group(1))
    c = tree.confirmation
    # Input k differed, so the first k - 1 matched: what assert_order reports.
    assert (c["trials"], c["passed"]) == (first_differing, first_differing - 1), (message, c)


def test_assert_same_order_compares_bits_too():
    with pytest.raises(AssertionError, match="same order, different bits"):
        assert_same_order(kahan, sequential_sum, n=64)


def test_assert_same_order_passes_for_one_function_twice():
    tree = assert_same_order(np.sum, np.sum, n=256)
    assert tree.n == 256


def test_assert_order_fails_when_the_bits_are_not_the_orders_replay():
    n = 64
    def reversed_sum(x):
        return sequential_sum(x[::-1])

    tree_of_reversed_sum = fprev.reveal(reversed_sum, n, "float32")
    assert tree_of_reversed_sum.text() == right_to_left_text(n)
    # The plain sum passes against its own order ...
    assert_order(reversed_sum, tree_of_reversed_sum)
    # ... a compensated sum fprev cannot model has the order but not the bits.
    with pytest.raises(AssertionError, match="its bits are not that order's replay"):
        assert_order(cascade, fprev.reveal(sequential_sum, n, "float32"))
    # Kahan's left to right has the plain sum's order, and its own model
    # (compensated steps) replays its bits.
    assert_order(kahan, fprev.reveal(sequential_sum, n, "float32"))


def test_a_size_the_memory_cannot_hold_is_refused_before_allocating():
    start = time.monotonic()
    with pytest.raises(ValueError, match="memory"):
        fprev.reveal(np.sum, 10**12)
    assert time.monotonic() - start < 5.0
    # The interpreter is still here, and fprev still works.
    tree = fprev.reveal(np.sum, 16)
    assert tree.n == 16 and tree.confirmed is True


def test_a_negative_confirm_is_refused():
    with pytest.raises(ValueError, match="confirm"):
        fprev.reveal(np.sum, 16, confirm=-1)


def test_a_mixed_precision_sum_is_confirmed_with_its_arithmetic():
    # Eight values added in float32, the rest in float64: no single format
    # replays it, the model of each node's format does.
    def body_and_tail(x):
        head = np.float32(0)
        for v in x[:8]:
            head = np.float32(head + v)
        tail = np.float64(0)
        for v in x[8:]:
            tail = tail + np.float64(v)
        return np.float32(np.float64(head) + tail)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tree = fprev.reveal(body_and_tail, 12, "float32")
    assert tree.confirmed
    a = tree.arithmetic
    assert a["version"] == 5 and a["default"]["format"] == "f32"
    assert {(node["format"], node["rounding"]) for node in a["nodes"]} == {("f64", "nearest-even")}
    # Its nodes: the first eight summands' in float32, those with the tail in float64.
    assert all(node["first"] >= 8 or node["size"] > 8 for node in a["nodes"])
    assert fprev.check(tree, body_and_tail)
    # Its replay follows the model, bit for bit; in float32 throughout it does not.
    from fprev.reduce import replay

    rng = np.random.default_rng(5)
    xs = [rng.standard_normal(12).astype(np.float32) * 1e4 for _ in range(200)]
    assert all(replay(tree, x) == body_and_tail(x) for x in xs)
    assert any(replay(tree, x, accumulator="float32") != body_and_tail(x) for x in xs)
    with pytest.warns(fprev.UnconfirmedWarning):
        plain = fprev.reveal(body_and_tail, 12, "float32", arith=False)
    assert plain.arithmetic is None and not plain.confirmed


def test_diff_compares_arithmetic_as_fprev_diff_does():
    # One order (left to right), two arithmetics: float32 throughout, and
    # float64 from the ninth summand on. `fprev.diff` says what `fprev
    # diff` says: the same order, another arithmetic at a node.
    def in_float32(x):
        s = np.float32(0)
        for v in x:
            s = np.float32(s + v)
        return s

    def body_and_tail(x):
        s = np.float32(0)
        for v in x[:8]:
            s = np.float32(s + v)
        s = np.float64(s)
        for v in x[8:]:
            s = s + np.float64(v)
        return np.float32(s)

    a = fprev.reveal(in_float32, 12, "float32")
    b = fprev.reveal(body_and_tail, 12, "float32")
    assert a == b  # the same tree
    assert fprev.diff(a, a) is None
    said = fprev.diff(a, b)
    assert said is not None and said.startswith("same order, different arithmetic"), said
    assert "f64" in said, said
