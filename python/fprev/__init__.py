"""fprev: in what order does this implementation add its floating-point numbers?

Reveal the summation tree of any Python callable that sums a NumPy array,
compare it with another's, confirm it by replay, and sum reproducibly.

>>> import numpy as np, fprev
>>> tree = fprev.reveal(np.sum, 16)
>>> tree.text()                                 # doctest: +SKIP
'((((((((0+1)+2)+3)+4)+5)+6)+7)+...)'
>>> bool(fprev.check(tree, np.sum))
True

The black box is called as ``fn(x)`` with a 1-D array of ``n`` values of
``dtype`` and must return their sum. ``x`` is read-only and reused between
calls: copy it if the function keeps or changes it. A torch or JAX
function works once wrapped::

    fprev.reveal(lambda x: torch.from_numpy(x.copy()).sum().item(), 1024)

With ``rows=M``, ``fn(X)`` gets an ``(M, n)`` array and returns the ``M``
row sums in one call (a GEMV or GEMM), so one call answers many queries.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional, Union

from . import _fprev
from ._fprev import BlackBoxError, Check, OrderIndependentError, Tree, UnconfirmedWarning
from ._dtypes import format_name

__all__ = [
    "BlackBoxError",
    "Check",
    "OrderIndependentError",
    "Tree",
    "UnconfirmedWarning",
    "check",
    "diff",
    "reduce",
    "reveal",
    "testing",
]

__version__ = "0.1.0"

ALGORITHMS = ("fprev", "basic", "naive")


def _label(fn: Any) -> str:
    """A readable name of a callable, for messages and tree files."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    module = getattr(fn, "__module__", None)
    if name and module and module != "builtins":
        return "%s.%s" % (module, name)
    if name:
        return name
    return type(fn).__name__


def reveal(
    fn: Callable[[Any], Any],
    n: int,
    dtype: Any = "float32",
    algo: str = "fprev",
    *,
    rows: Optional[int] = None,
    may_fuse: Optional[bool] = None,
    accumulator: Any = None,
    pack: bool = True,
    progress: bool = False,
    confirm: int = 48,
    arith: bool = True,
) -> Tree:
    """Reveal the summation tree of ``fn`` summing ``n`` values of ``dtype``.

    Args:
        fn: ``fn(x) -> number`` summing a 1-D NumPy array, or, with
            ``rows``, ``fn(X) -> numbers`` summing each row of an
            ``(rows, n)`` array.
        n: how many summands.
        dtype: ``"float64"``, ``"float32"``, ``"float16"``, ``"bfloat16"``,
            ``"float8_e4m3fn"``, ``"float8_e5m2"`` (fprev's short names
            ``f64``, ``bf16``, ... and NumPy dtypes work too; bf16 and fp8
            need ``ml_dtypes``).
        algo: ``"fprev"`` (any tree, about ``2n`` to ``3n`` calls),
            ``"basic"`` (all pairs, binary trees only) or ``"naive"``
            (``n <= 8``).
        rows: sums per call of the batched form.
        may_fuse: ``False`` if ``fn`` only ever adds two numbers at a time
            (IEEE additions): larger ``n`` become possible in narrow
            formats. Default: it may use fused multi-term adds.
        accumulator: the narrowest format ``fn`` rounds partial sums to,
            if known (NumPy sums float16 in float32).
        pack: pack queries of independent subproblems into one input
            (``False``: one query per call, as the FPRev paper).
        progress: draw a progress bar on stderr once a reveal takes over a
            second.
        confirm: random inputs the revealed tree is replayed on and
            compared with ``fn`` bit for bit (``0``: not confirmed).
            Masked inputs see only the order; a function that does not
            add in plain rounded additions (a compensated sum, a
            mixed-precision kernel) still gets a tree, marked
            ``tree.confirmed == False``, with an :class:`UnconfirmedWarning`.
        arith: after the order, find what each node computes (its format
            and rounding) and confirm the tree with that model:
            ``tree.arithmetic``. A mixed-precision kernel is then confirmed;
            a compensated sum is named in the warning.

    Returns:
        The :class:`Tree`; ``tree.stats`` says how many calls it took,
        ``tree.confirmed`` whether its replay reproduced ``fn``'s bits.

    Raises:
        TypeError: ``fn`` is not callable, or returned something that is
            not a number (or not ``rows`` numbers).
        ValueError: a bad ``n``, ``dtype``, ``algo`` or ``rows``.
        BlackBoxError: ``fn`` broke an assumption of the method (NaN, a
            fraction, an inconsistent answer); no tree is returned.
        OrderIndependentError: ``fn`` gives the same bits in every order.
        Exception: whatever ``fn`` raised, with its traceback.
    """
    if algo not in ALGORITHMS:
        raise ValueError("algo must be one of %s, got %r" % (", ".join(ALGORITHMS), algo))
    return _fprev.reveal(
        fn,
        _count("n", n),
        format_name(dtype),
        algo,
        _label(fn),
        rows=None if rows is None else _count("rows", rows),
        may_fuse=may_fuse,
        accumulator=None if accumulator is None else format_name(accumulator),
        pack=bool(pack),
        progress=bool(progress),
        confirm=_count("confirm", confirm, least=0),
        arith=bool(arith),
    )


def check(
    tree: Union[Tree, str, "os.PathLike[str]"],
    fn: Callable[[Any], Any],
    trials: int = 200,
    *,
    dtype: Any = None,
    rows: Optional[int] = None,
    row: int = 0,
    seed: int = 0,
) -> Check:
    """Confirm ``tree`` as ``fn``'s order: replay it on ``trials`` random
    inputs (close magnitudes, a wide exponent range, cancelling pairs, in
    turn) and compare with ``fn`` bit for bit.

    The replay rounds partial sums to ``dtype`` and, failing that, to each
    wider format (NumPy sums float16 in float32). ``dtype`` defaults to the
    tree's own. With ``rows``, ``fn`` is the batched form and ``row`` the
    row compared.

    Returns:
        A :class:`Check`, true when every trial matched; ``.message`` says
        how it went, ``.input`` holds the first input that did not match.
    """
    return _fprev.check(
        _tree(tree),
        fn,
        _count("trials", trials),
        None if dtype is None else format_name(dtype),
        _label(fn),
        rows=None if rows is None else _count("rows", rows),
        row=_count("row", row, least=0),
        seed=_count("seed", seed, least=0),
    )


def diff(a: Union[Tree, str, "os.PathLike[str]"], b: Union[Tree, str, "os.PathLike[str]"]) -> Optional[str]:
    """``None`` when ``a`` and ``b`` are the same order (modulo the order of
    each node's children), else where they part: the smallest subtree of
    each that the other lacks, as ``"a has ((0+1)+2), b has (2+3)"``.
    Trees of different sizes differ by their size."""
    parts = _parts(_tree(a), _tree(b))
    return None if parts is None else "a has %s, b has %s" % parts


def _parts(a: Tree, b: Tree) -> Optional[tuple]:
    """Where trees part, as text: (a's subtree, b's subtree), or None."""
    if a.n != b.n:
        return ("%d summands" % a.n, "%d summands" % b.n)
    return _fprev.diff(a, b)


def _tree(tree: Any) -> Tree:
    """A Tree, or the tree file a path names."""
    if isinstance(tree, Tree):
        return tree
    if isinstance(tree, (str, os.PathLike)):
        return Tree.load(os.fspath(tree))
    raise TypeError("expected an fprev.Tree or the path of a tree file, got %s" % type(tree).__name__)


def _count(name: str, value: Any, least: int = 1) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError("%s must be a whole number, got %r" % (name, value))
    value = value.__index__()
    if value < least:
        raise ValueError("%s must be at least %d, got %d" % (name, least, value))
    return value


from . import reduce, testing  # noqa: E402  (they use the names above)
