"""Assertions for test suites: pin a summation order in CI.

.. code-block:: python

    import numpy as np
    from fprev.testing import assert_order, assert_same_order

    def test_my_sum_adds_like_numpy():
        assert_same_order(my_sum, np.sum, n=1024)

    def test_the_order_did_not_change():
        assert_order(my_sum, "tests/my_sum_1024.json", n=1024)

Both raise ``AssertionError`` naming the smallest subtree where the orders
part, or the input on which the bits differ (masked inputs see only the
order: a compensated sum and a plain one share a tree but not their bits),
so pytest shows what changed.

``assert_batch_invariant`` and ``assert_invariant_under`` gate on an
invariance study (:func:`fprev.invariance`): their ``AssertionError`` is
the study's report, with the regimes, where they part and what to pin.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Union
import os

import warnings

from . import Study, Tree, UnconfirmedWarning, _count, _fprev, _label, _parts, _tree, invariance, reveal
from ._dtypes import format_name

__all__ = [
    "assert_batch_invariant",
    "assert_deterministic",
    "assert_invariant_under",
    "assert_order",
    "assert_same_order",
]


def assert_same_order(
    fn_a: Callable[[Any], Any],
    fn_b: Callable[[Any], Any],
    n: int,
    dtype: Any = "float32",
    trials: int = 48,
    **reveal_options: Any,
) -> Tree:
    """Assert that ``fn_a`` and ``fn_b`` add ``n`` values of ``dtype`` in
    one order (modulo the order of each node's children) and return the
    same bits on ``trials`` random inputs. Returns the order.
    ``reveal_options`` go to :func:`fprev.reveal` for both."""
    a = _quiet_reveal(fn_a, n, dtype, reveal_options)
    b = _quiet_reveal(fn_b, n, dtype, reveal_options)
    parts = _parts(a, b)
    if parts is not None:
        raise AssertionError(
            "%s and %s sum %d values of %s in different orders: %s has %s where %s has %s"
            % (a.label, b.label, n, dtype, a.label, parts[0], b.label, parts[1])
        )
    differ = _fprev.same_bits(
        fn_a, fn_b, n, format_name(dtype), _label(fn_a), _label(fn_b), _count("trials", trials)
    )
    if differ is not None:
        raise AssertionError("%s and %s: %s" % (a.label, b.label, differ))
    return a


def assert_deterministic(
    fn: Callable[[Any], Any],
    n: int,
    dtype: Any = "float32",
    runs: int = 20,
    rows: Optional[int] = None,
    skeleton: bool = True,
) -> None:
    """Assert that ``fn`` answers the same input with the same bits on every
    call: each of 8 random inputs of ``n`` values is summed ``runs`` times.

    Raises ``AssertionError`` saying how many inputs varied, the most
    distinct results for one input and the spread (in ulps, and against
    the sum's condition number), and, with ``skeleton``, what stays fixed:
    the subtrees every call shares (found with masked inputs, each asked
    ``runs`` times, about ``runs * n`` calls or more) and the joins whose
    order varies. Equal bits on ``8 * runs`` calls do not prove ``fn``
    fixed; raise ``runs`` to look harder.

    >>> import numpy as np
    >>> from fprev.testing import assert_deterministic
    >>> assert_deterministic(np.sum, 1000)
    """
    runs = _count("runs", runs)
    if runs == 0:
        raise ValueError("runs must be at least 2: one call shows no variation")
    varied = _fprev.variation(
        fn,
        _count("n", n),
        format_name(dtype),
        _label(fn),
        runs,
        rows=None if rows is None else _count("rows", rows),
        skeleton=skeleton,
    )
    if varied is not None:
        raise AssertionError("%s is not deterministic: %s" % (_label(fn), "\n".join(varied)))


def _quiet_reveal(fn: Callable[[Any], Any], n: int, dtype: Any, options: dict) -> Tree:
    """A reveal whose unconfirmed order is this module's to report."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnconfirmedWarning)
        return reveal(fn, n, dtype, **options)


def assert_order(
    fn: Callable[[Any], Any],
    tree_or_path: Union[Tree, str, "os.PathLike[str]"],
    n: Optional[int] = None,
    dtype: Any = None,
    **reveal_options: Any,
) -> Tree:
    """Assert that ``fn`` adds in the order of ``tree_or_path`` (an
    :class:`fprev.Tree`, or a tree file written by ``Tree.save`` or
    ``fprev reveal -o``). ``n`` and ``dtype`` default to the tree's.
    Fails too when a replay of the order does not reproduce ``fn``'s bits
    (the reveal's confirmation). Returns the order revealed."""
    want = _tree(tree_or_path)
    if n is not None and n != want.n:
        raise ValueError("n = %d, but the expected tree sums %d values" % (n, want.n))
    got = _quiet_reveal(fn, want.n, dtype or want.dtype or "float32", reveal_options)
    parts = _parts(got, want)
    if parts is not None:
        raise AssertionError(
            "%s does not sum in the expected order: it has %s where the expected tree has %s"
            % (got.label, parts[0], parts[1])
        )
    if got.confirmed is False:
        c = got.confirmation
        raise AssertionError(
            "%s sums in the expected order, but its bits are not that order's replay "
            "(random input %d differed, the first %d matched): it does not add in plain "
            "rounded additions" % (got.label, c["trials"], c["passed"])
        )
    return got


def assert_batch_invariant(
    black_box: Union[str, Callable[[Any], Any]],
    n: Optional[int] = None,
    *,
    batch: Any,
    rows: Any = None,
    **options: Any,
) -> Study:
    """Assert that each output of ``black_box`` is added in one order,
    confirmed by replay, at every batch size of ``batch``: row ``rows``
    (default first, middle and last) of ``M`` rows sent together sums as
    it does alone. ``black_box`` is a spec (``"numpy:gemm"``, with
    ``shape=(M, N, K)``) or a callable summing each row of an ``(M, n)``
    array; ``options`` go to :func:`fprev.invariance`. Returns the study.

    >>> from fprev.testing import assert_batch_invariant
    >>> assert_batch_invariant(lambda X: X.sum(axis=1), 48, batch="1..8")  # doctest: +SKIP
    """
    study = invariance(black_box, n, batch=batch, rows=rows, **options)
    if not study.batch_invariant:
        raise AssertionError(str(study))
    return study


def assert_invariant_under(
    spec: str,
    n: Optional[int] = None,
    *,
    env: dict,
    **options: Any,
) -> Study:
    """Assert that ``spec`` finds one confirmed order (and arithmetic)
    under every combination of the environment variables ``env`` (name to
    values; ``"unset"``: not set), each run in a process of its own, and
    of any other knob ``options`` give :func:`fprev.invariance`. Fails with
    the study's report, which names the variables that change the order
    and what to pin. Returns the study.

    >>> from fprev.testing import assert_invariant_under
    >>> assert_invariant_under("numpy:sum", 1000, env={"OPENBLAS_NUM_THREADS": ["1", "2"]})  # doctest: +SKIP
    """
    if not env:
        raise ValueError("env: give at least one variable and its values")
    study = invariance(spec, n, env=env, **options)
    if not study.invariant:
        raise AssertionError(str(study))
    return study
