"""Assertions for test suites: pin a summation order in CI.

.. code-block:: python

    import numpy as np
    from fprev.testing import assert_order, assert_same_order

    def test_my_sum_adds_like_numpy():
        assert_same_order(my_sum, np.sum, n=1024)

    def test_the_order_did_not_change():
        assert_order(my_sum, "tests/my_sum_1024.json", n=1024)

Both raise ``AssertionError`` naming the smallest subtree where the orders
part, so pytest shows what changed.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Union
import os

from . import Tree, _parts, _tree, reveal

__all__ = ["assert_order", "assert_same_order"]


def assert_same_order(
    fn_a: Callable[[Any], Any],
    fn_b: Callable[[Any], Any],
    n: int,
    dtype: Any = "float32",
    **reveal_options: Any,
) -> Tree:
    """Assert that ``fn_a`` and ``fn_b`` add ``n`` values of ``dtype`` in
    one order (modulo the order of each node's children). Returns the
    order. ``reveal_options`` go to :func:`fprev.reveal` for both."""
    a = reveal(fn_a, n, dtype, **reveal_options)
    b = reveal(fn_b, n, dtype, **reveal_options)
    parts = _parts(a, b)
    if parts is not None:
        raise AssertionError(
            "%s and %s sum %d values of %s in different orders: %s has %s where %s has %s"
            % (a.label, b.label, n, dtype, a.label, parts[0], b.label, parts[1])
        )
    return a


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
    Returns the order revealed."""
    want = _tree(tree_or_path)
    if n is not None and n != want.n:
        raise ValueError("n = %d, but the expected tree sums %d values" % (n, want.n))
    got = reveal(fn, want.n, dtype or want.dtype or "float32", **reveal_options)
    parts = _parts(got, want)
    if parts is not None:
        raise AssertionError(
            "%s does not sum in the expected order: it has %s where the expected tree has %s"
            % (got.label, parts[0], parts[1])
        )
    return got
