"""Reproducible reducers, on NumPy arrays.

>>> import numpy as np
>>> from fprev.reduce import binary_tree_sum, prerounded_sum
>>> x = np.random.default_rng(0).standard_normal(100_000)
>>> binary_tree_sum(x) == binary_tree_sum(x, threads=4)          # any thread count
True
>>> prerounded_sum(x) == prerounded_sum(np.random.default_rng(1).permutation(x))  # any order
True
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _fprev
from ._dtypes import format_name

__all__ = ["binary_tree_sum", "compatible", "prerounded_sum", "replay"]


def binary_tree_sum(x: np.ndarray, threads: Optional[int] = None) -> Any:
    """The Binary Tree Reduction of a 1-D float64 or float32 array: a fixed
    tree that depends only on ``len(x)`` (``S[0,n) = S[0,P) + S[P,n)``, ``P``
    the largest power of two below ``n``), so the same bits on any number
    of ``threads`` (default: this thread). Returns a scalar of ``x``'s
    dtype."""
    value = _fprev.binary_tree_sum(x, _threads(threads))
    return x.dtype.type(value)


def prerounded_sum(x: np.ndarray, threads: Optional[int] = None) -> Any:
    """An order-independent sum of a 1-D float64 or float32 array: summands
    are pre-rounded to a common grid, so the result has the same bits in
    any order, chunking or number of ``threads``."""
    value = _fprev.prerounded_sum(x, _threads(threads))
    return x.dtype.type(value)


def _threads(threads: Optional[int]) -> Optional[int]:
    from . import _count

    return None if threads is None else _count("threads", threads)


def replay(tree: Any, x: np.ndarray, accumulator: Any = None) -> Any:
    """``x`` summed in ``tree``'s order (an :class:`fprev.Tree` or a tree
    file's path), each partial sum rounded to ``accumulator``; by default
    as the tree's arithmetic model says (``tree.arithmetic``), else in
    ``x``'s dtype. Bit for bit what the black box the tree was revealed
    from returns, where ``fprev.check`` passed."""
    from . import _tree

    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be 1-D, got shape %s" % (x.shape,))
    fmt = format_name(x.dtype)
    acc = None if accumulator is None else format_name(accumulator)
    value = _fprev.replay(_tree(tree), x.astype(np.float64), fmt, acc)
    return x.dtype.type(value)


def compatible(spec: str, dtype: Any = "float32", *, check: Any = False) -> Any:
    """A callable that computes what the black box ``spec`` (``"numpy:sum"``,
    ``"blas:dot"``, ``"jax:sum"``) computes on this machine, bit for bit, in
    pure NumPy: elementwise operations and Python floats, never a library
    reduction (``np.sum``, ``np.dot``), so it gives this machine's bits on
    another machine, another NumPy or another BLAS. It takes ``x`` (and
    ``y``, of a dot) and returns a scalar of ``dtype``.

    The code is :func:`fprev.emit`'s in Python (``fprev.emit(spec,
    "python")`` shows it); ``check`` runs it against the black box first, as
    :func:`fprev.emit` does.

    >>> import numpy as np, fprev.reduce
    >>> numpy_sum = fprev.reduce.compatible("numpy:sum")   # doctest: +SKIP
    >>> x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    >>> numpy_sum(x) == np.sum(x)                          # doctest: +SKIP
    True
    """
    from . import emit

    name = "compatible"
    source = emit(spec, "python", dtype=dtype, name=name, check=check)
    namespace: dict = {}
    exec(compile(source, "<fprev.emit %s>" % spec, "exec"), namespace)
    return namespace[name]
