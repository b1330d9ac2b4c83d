"""fprev: in what order does this implementation add its floating-point numbers?

Numerical libraries never say, yet the order and the arithmetic of each
addition decide a result's bits. fprev feeds a black box (any callable that
sums a NumPy array, or a spec such as ``"numpy:sum"``) masked inputs,
rebuilds its summation tree, finds what each node computes, and confirms
both by replay against the black box, bit for bit.

Reveal an order, and see it::

    >>> import numpy as np, fprev
    >>> tree = fprev.reveal(np.sum, 32)
    >>> print(tree)                                 # doctest: +ELLIPSIS
    ((((((0+8)+16)+24)+(((1+9)+17)+25))+...
    >>> tree.confirmed                              # replayed against np.sum: the same bits
    True
    >>> fprev.explain(np.sum).formula               # the one formula behind every size
    'halves(128, 8, body(8, interleave(8, sequential, pairwise), then))'

``tree.save("t.json")`` writes the command line's tree file; in Jupyter a
tree draws itself (``tree.to_svg()``). ``fprev.reveal(fn, n, rows=M)``
reveals a GEMV or GEMM that sums ``M`` rows a call; a torch or JAX function
works wrapped, ``lambda x: torch.from_numpy(x.copy()).sum().item()``.

Will my results change? Under a batch size, thread count or environment
setting, :func:`invariance` says what changes the order and what to pin::

    fprev.invariance("numpy:gemm", 1025, env={"OPENBLAS_NUM_THREADS": ["1", "2"]}).pin

and :func:`diff` says where two trees (from two machines) part.

Assert it in CI: :mod:`fprev.testing` (``assert_same_order``,
``assert_order``, ``assert_deterministic``, ``assert_batch_invariant``)
raises ``AssertionError`` naming the subtree or input that differs, and the
pytest plugin's ``fprev_golden`` fixture pins an order to a golden file
(``pytest --fprev-update`` writes it)::

    def test_my_sum_order(fprev_golden):
        fprev_golden(my_sum, 1024)

Code that gives a library's bits anywhere: :func:`emit` writes it in C,
CUDA C, Rust or NumPy, checked against the black box; :mod:`fprev.reduce`
has ``compatible("numpy:sum")`` (NumPy's bits with no ``np.sum``), and
``binary_tree_sum`` and ``prerounded_sum``, the same bits on any number of
threads.

The black box is called as ``fn(x)`` with a 1-D array of ``n`` values of
``dtype`` and must return their sum. ``x`` is read-only and reused between
calls: copy it if the function keeps or changes it. The command line is
``python -m fprev`` (or the ``fprev`` script): ``python -m fprev --help``.
"""

from __future__ import annotations

import os as _os
import typing as _typing

from . import _fprev
from ._fprev import BlackBoxError, Check, OrderIndependentError, Study, Sweep, Tree, UnconfirmedWarning, VariesError
from ._dtypes import format_name as _format_name

if _typing.TYPE_CHECKING:  # annotations only: not names of the package
    import os
    from typing import Any, Callable, Optional, Union

__all__ = [
    "BlackBoxError",
    "Check",
    "Explanation",
    "OrderIndependentError",
    "VariesError",
    "Tree",
    "UnconfirmedWarning",
    "check",
    "diff",
    "emit",
    "explain",
    "invariance",
    "reduce",
    "reveal",
    "sweep",
    "Study",
    "Sweep",
    "testing",
]

__version__ = "0.1.0"

ALGORITHMS = ("insert", "fprev", "basic", "naive")


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
    algo: str = "insert",
    *,
    rows: Optional[int] = None,
    may_fuse: Optional[bool] = None,
    accumulator: Any = None,
    pack: bool = True,
    progress: Optional[bool] = None,
    confirm: int = 48,
    arith: bool = True,
    runs: int = 0,
    skeleton: Union[bool, int] = True,
    processes: Optional[int] = None,
    offset: Any = None,
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
        algo: ``"insert"`` (the default: places read from answers of
            many bits, guessed ones checked, FPRev's engine where it does
            not apply; a fraction of ``n`` calls for library orders),
            ``"fprev"`` (FPRev's engine alone, about ``n`` to ``3n``
            calls), ``"basic"`` (all pairs, binary trees only) or
            ``"naive"`` (``n <= 8``).
        rows: sums per call of the batched form.
        may_fuse: ``False`` if ``fn`` only ever adds two numbers at a time
            (IEEE additions): larger ``n`` become possible in narrow
            formats. Default: it may use fused multi-term adds.
        accumulator: the narrowest format ``fn`` rounds partial sums to,
            if known (NumPy sums float16 in float32).
        pack: pack queries of independent subproblems into one input
            (``False``: one query per call, as the FPRev paper).
        progress: a progress line on ``sys.stderr`` once a reveal takes
            over a second (under the cell, in Jupyter). Default: on in a
            Jupyter notebook, off elsewhere.
        confirm: random inputs the revealed tree is replayed on and
            compared with ``fn`` bit for bit (``0``: not confirmed).
            Masked inputs see only the order; a function that does not
            add in plain rounded additions (a compensated sum, a
            mixed-precision kernel) still gets a tree, marked
            ``tree.confirmed == False``, with an :class:`UnconfirmedWarning`.
        runs: before revealing, sum each of 8 random inputs ``runs`` times
            and compare the bits, to find a ``fn`` whose answers vary from
            call to call (``0``: only where a reveal or its replay fails,
            which costs a deterministic ``fn`` nothing). A ``fn`` that
            varies is summarised over ``runs`` calls of each (default 50).
        skeleton: where ``fn`` varies, find what every call shares (its
            skeleton, on the :class:`VariesError`): each masked query asked
            twice, and ``runs`` times (default ``min(50, max(4, 400000 //
            n))``) in a part whose answers disagree, for up to 20 seconds;
            a whole number: up to that many seconds (0 to 86,400; 0 looks
            at the whole sum's first level only), what is left unexplored
            said on the skeleton. ``False``: the spread only.
        arith: after the order, find what each node computes (its format
            and rounding) and confirm the tree with that model:
            ``tree.arithmetic``. A mixed-precision kernel is then confirmed;
            a compensated sum is named in the warning.
        processes: before revealing, sum each of 8 random inputs twice
            here and once in each of ``processes - 1`` fresh processes of
            this interpreter (2 to 16), as ``fprev reveal --processes``:
            an order chosen as each process starts (a hash seed, a thread
            pool's start-up, an allocation's address) raises
            :class:`VariesError`. ``fn`` must be a function defined at the
            top level of a ``.py`` file, which each process opens as
            ``python:PATH.py:FUNC``. Answers that already differ within
            this process are a ``RuntimeWarning`` (the processes are not
            compared) and the reveal goes on. Without it, each reveal looks
            within this one process only.
        offset: hand ``fn`` each input in an array starting this far past
            a 64-byte boundary (a copy of fprev's), as ``fprev reveal
            --offset``: a whole number of elements, or ``"4B"`` bytes, up
            to 4,096 (else ``ValueError``). NumPy sums an unaligned array
            in another order (in chunks of 8,192 elements); the tree holds
            for that alignment, and ``tree`` records it. Default: fprev's
            own array, where NumPy's allocation puts it.

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
        VariesError: ``fn`` answers the same input differently on different
            calls (another order each time); the message gives the spread
            and what stays fixed, its ``skeleton`` attribute the subtrees
            every call shares as a :class:`Tree` (``tree.varies``). With
            ``processes``, also where its answers differ between processes
            (``skeleton`` ``None``).
        Exception: whatever ``fn`` raised, with its traceback.
    """
    if algo not in ALGORITHMS:
        raise ValueError("algo must be one of %s, got %r" % (", ".join(ALGORITHMS), algo))
    n = _count("n", n)
    fmt = _format_name(dtype)
    described = _described(rows, may_fuse, accumulator, offset)
    fresh = None
    if processes is not None:
        processes = _count("processes", processes, "reveal processes")
        fresh = _fresh_process(fn, n, fmt, described)
    return _fprev.reveal(
        fn,
        n,
        fmt,
        algo,
        _label(fn),
        **described,
        pack=bool(pack),
        progress=_in_notebook() if progress is None else bool(progress),
        confirm=_count("confirm", confirm),
        arith=bool(arith),
        runs=_count("runs", runs),
        # A number of seconds, 0 among them, asks for a search.
        skeleton=skeleton if isinstance(skeleton, bool) else True,
        skeleton_seconds=_skeleton_seconds(skeleton),
        processes=processes,
        fresh=fresh,
    )


def _fresh_process(fn: Any, n: int, fmt: str, described: dict) -> Any:
    """A function returning the answers of ``fn`` in one fresh process of
    this interpreter (``fprev._child``) to the random inputs ``fprev
    reveal --processes`` compares processes on: what ``_fprev.reveal``
    compares with this process's answers."""
    import json
    import types

    label = _label(fn)
    code = getattr(fn, "__code__", None)
    top_level = isinstance(fn, types.FunctionType) and fn.__qualname__ == fn.__name__ != "<lambda>"
    if not (top_level and code.co_filename.endswith(".py") and _os.path.isfile(code.co_filename)):
        raise TypeError(
            "processes: each fresh process opens fn as python:PATH.py:FUNC, so fn must be a function "
            "defined at the top level of a .py file (wrap a library's function in one), got %s" % label
        )
    request = {
        "path": code.co_filename,
        "func": fn.__name__,
        "n": n,
        "dtype": fmt,
        "label": label,
        "rows": described["rows"],
        "accumulator": described["accumulator"],
        "offset": described["offset"],
    }

    def fresh() -> list:
        returncode, stdout, stderr = _in_child("answers", request, dict(_os.environ))
        if returncode == 2:
            raise ValueError(_last_line(stderr))
        if returncode != 0:
            raise BlackBoxError(
                "a fresh process asked %s's answers ended with exit status %d: %s"
                % (label, returncode, _last_line(stderr))
            )
        return json.loads(stdout)

    return fresh


class Explanation:
    """What :func:`explain` found.

    ``formula`` is the one formula of fprev's order language that
    regenerates every revealed tree (``None`` when none does), written as
    ``fprev explain`` prints it after ``native:``; ``sentence`` says it in
    words; ``sizes`` are the sizes revealed. ``verified`` are the sizes past
    those revealed where the formula's tree was checked to be ``fn``'s (the
    formula speaks for sizes up to the largest of them, or of ``sizes``).
    When no formula fits, ``closest`` is the one that explains the most
    sizes from the smallest and ``fails_at`` the first size it does not.
    ``gaps`` are ranges where a switch between two rules was not narrowed
    down. True when explained.
    """

    __slots__ = ("formula", "sentence", "sizes", "closest", "fails_at", "gaps", "verified", "_text")

    def __init__(self, found: Any, closest: Any, sizes: list, gaps: list, verified: list, text: str) -> None:
        self.formula, self.sentence = found if found else (None, None)
        self.closest, self.fails_at = closest if closest else (None, None)
        self.sizes = list(sizes)
        self.gaps = [tuple(g) for g in gaps]
        self.verified = list(verified)
        self._text = text

    def __bool__(self) -> bool:
        return self.formula is not None

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return "Explanation(formula=%r, sizes=%d)" % (self.formula, len(self.sizes))


def explain(
    fn: Callable[[Any], Any],
    sizes: Optional[Any] = None,
    dtype: Any = "float32",
    *,
    rows: Optional[int] = None,
    may_fuse: Optional[bool] = None,
    accumulator: Any = None,
    confirm: int = 48,
    verify: Optional[Any] = None,
    offset: Any = None,
) -> Explanation:
    """Reveal ``fn`` at several sizes and name the one formula behind every
    tree, checked at larger sizes, as ``fprev explain`` does.

    >>> import numpy as np, fprev
    >>> e = fprev.explain(np.sum, range(1, 41))  # doctest: +SKIP
    >>> e.formula                                 # doctest: +SKIP
    'halves(128, 8, body(8, interleave(8, sequential, pairwise), then))'

    Args:
        fn: as for :func:`reveal`.
        sizes: the sizes to reveal (any iterable of whole numbers); by
            default every size to 40 and around each power of two to
            2,048, as the command. Sizes between two rules are revealed
            too, by bisection, until the switch is exact.
        dtype, rows, may_fuse, accumulator, confirm, offset: as for
            :func:`reveal` (the arithmetic is not asked: formulas describe
            the order; the formula holds for that alignment).
        verify: sizes past those revealed at which the formula's tree is
            proven with masked checks before it is claimed (by default
            4,096, 16,384 and 65,536, as the command, each skipped where a
            timed call says its check would take over 30 s; sizes given
            are always checked; ``()`` for none); a formula one of them
            refutes is inferred again with that tree.

    Returns:
        An :class:`Explanation`, true when a formula regenerates every
        revealed tree; a size ``fn`` cannot be revealed at
        (:class:`BlackBoxError`, :class:`OrderIndependentError`) is left out.

    Raises:
        OrderIndependentError: every size past two summands is
            order-independent: no formula describes ``fn``.
        BlackBoxError: no size past two summands could be revealed.
        ValueError: the sizes hold nothing past two summands.
        Exception: whatever ``fn`` raised, with its traceback.
    """
    if not callable(fn):
        raise TypeError("fn must be callable, got %s" % type(fn).__name__)
    wanted = list(_fprev.EXPLAIN_SIZES if sizes is None else _sizes("sizes", sizes))
    if not wanted:
        raise ValueError("sizes must hold at least one size")

    checks = list(_fprev.VERIFY_SIZES if verify is None else _sizes("verify", verify))
    found, closest, revealed, gaps, verified, text = _fprev.explain(
        fn,
        wanted,
        checks,
        verify is None,
        _format_name(dtype),
        _label(fn),
        **_described(rows, may_fuse, accumulator, offset),
        confirm=_count("confirm", confirm),
    )
    return Explanation(found, closest, revealed, gaps, verified, text)


def emit(
    spec: str,
    lang: str = "c",
    *,
    dtype: Any = "float32",
    name: Optional[str] = None,
    formula: Optional[str] = None,
    check: Any = False,
    trials: int = 3,
    offset: Any = None,
    shape: Any = None,
) -> str:
    """The source of a function that computes what the black box ``spec``
    (``"numpy:sum"``, ``"blas:dot"``, ``"jax:sum"``, see ``fprev probes``)
    computes on this machine, bit for bit, in ``lang``: ``"c"``,
    ``"cuda"``, ``"rust"`` or ``"python"`` (NumPy only, never a library
    reduction). The function follows the black box's formula (``formula``,
    else the one ``fprev.explain`` finds) with each part's arithmetic as
    its reveals found it, so it holds at every size the formula does. A
    ``formula`` given is proven first where ``fprev explain`` checks its
    own (every size to 2,048, and past it within a budget); refuted there,
    it raises :class:`UnconfirmedWarning` naming the size.

    With ``check=True`` the code is compiled and run against the black box
    first, on ``trials`` random inputs at every size up to 1,024 and each
    power of two to 2^20 (a tensor core's chain ``fused:K``: every size up
    to four groups of ``K - 1`` and one more, then each power of two from
    128 to 4,096; or at the sizes ``check`` lists), and its
    comment says so; a difference raises :class:`UnconfirmedWarning`, as
    does a tree the formula's reveals did not confirm. No formula: raises
    ``ValueError``; an order-independent black box (told at the first sizes
    that show it): :class:`OrderIndependentError`.

    ``offset`` (as for :func:`reveal`) finds the order on an input array
    starting that far past a 64-byte boundary: the code matches the black
    box on such an input (its comment says which alignment it matches),
    and ``check`` runs it there.

    ``shape`` ``(M, N, K)`` finds a GEMV's or GEMM's order along K with
    ``M`` rows and ``N`` columns at every size (``K`` taking each size),
    as ``fprev explain --shape`` does, and ``check`` runs that shape.

    >>> print(fprev.emit("numpy:sum", "c"))          # doctest: +SKIP
    """
    if shape is not None:
        shape = [_count("shape", d) for d in shape]
        if len(shape) != 3:
            raise ValueError("shape is M, N, K: three whole numbers, got %d" % len(shape))
    source, _ = _fprev.emit_source(
        spec,
        lang,
        _format_name(dtype),
        name=name,
        formula=formula,
        check_sizes=_checked_sizes(check),
        trials=_count("trials", trials, "emit trials"),
        offset=None if offset is None else _offset(offset),
        shape=shape,
    )
    return source


def _checked_sizes(check: Any) -> Optional[list]:
    if check is False or check is None:
        return None
    if check is True:
        # The command's default sizes, which depend on the plan (a fused
        # chain's are fewer): chosen where it is known.
        return []
    sizes = _sizes("check", check)
    if not sizes:
        raise ValueError("check: no sizes listed (check=True checks at the default sizes)")
    return sizes


def check(
    tree: Union[Tree, str, "os.PathLike[str]"],
    fn: Callable[[Any], Any],
    trials: int = 1000,
    *,
    dtype: Any = None,
    rows: Optional[int] = None,
    row: int = 0,
    seed: int = 0,
    offset: Any = None,
) -> Check:
    """Confirm ``tree`` as ``fn``'s order: replay it on ``trials`` random
    inputs (close magnitudes, a wide exponent range, cancelling pairs, in
    turn) and compare with ``fn`` bit for bit.

    The replay rounds partial sums to ``dtype`` and, failing that, to each
    wider format (NumPy sums float16 in float32). ``dtype`` defaults to the
    tree's own. With ``rows``, ``fn`` is the batched form and ``row`` the
    row compared.

    ``trials`` defaults to the ``fprev check`` command's. ``offset`` (as
    for :func:`reveal`) hands ``fn`` its input that far past a 64-byte
    boundary; by default, where ``tree`` was found (its ``offset``).

    Returns:
        A :class:`Check` report, true when every trial matched:
        ``.trials`` run, ``.message`` (how it went), and where a trial
        did not match, ``.mismatch`` (its number, from 0), ``.input``,
        and ``.replayed`` and ``.returned`` (the tree's replay and
        ``fn``'s result).
    """
    return _fprev.check(
        _tree(tree),
        fn,
        _count("trials", trials),
        None if dtype is None else _format_name(dtype),
        _label(fn),
        rows=None if rows is None else _count("rows", rows),
        row=_count("row", row),
        seed=_count("seed", seed),
        offset=None if offset is None else _offset(offset),
    )


def sweep(
    fn: Callable[[Any], Any],
    sizes: Any,
    dtype: Any = "float32",
    *,
    rows: Optional[int] = None,
    may_fuse: Optional[bool] = None,
    accumulator: Any = None,
    confirm: int = 48,
    runs: int = 0,
    offset: Any = None,
) -> Sweep:
    """Reveal ``fn`` at every size of ``sizes`` and say where its order
    changes, as ``fprev sweep`` does.

    Args:
        fn: as for :func:`reveal`.
        sizes: ``"1..300"``, ``"1..1024:7"``, ``"1..64,128,256"`` (the
            command's ``-n``), or an iterable of sizes.
        dtype, rows, may_fuse, accumulator, offset: as for :func:`reveal`.
        confirm: random inputs each tree is replayed on (0: none); where
            plain additions do not give ``fn``'s bits, its arithmetic is
            found and replayed instead.
        runs: before each reveal, sum each of 8 random inputs ``runs`` times
            and compare the bits (0: look for variation only where a reveal
            fails or its replay differs); a size whose answers varied is
            ``"varies"``, with no tree.

    Returns:
        A :class:`Sweep`: ``str(s)`` is the command's table, ``s.sizes``,
        ``s.trees`` (each size's :class:`Tree`, ``None`` where ``fn`` was
        found broken, order-independent or varying), ``s.varies`` (``(n,
        what repeating the same inputs showed)`` for each size whose answers
        changed from call to call), ``s.change_points`` (``(n, from, to)``;
        none is claimed at or across a size that varied), ``s.formula`` (the
        one formula that regenerates every tree, if any) and
        ``s.to_json()``.
    """
    if isinstance(sizes, str):
        listed = _fprev.parse_sizes(sizes)
    else:
        listed = sorted(set(_sizes("sizes", sizes)))
    if not listed:
        raise ValueError("sizes: no size to reveal")
    return _fprev.sweep(
        fn,
        listed,
        _format_name(dtype),
        _label(fn),
        **_described(rows, may_fuse, accumulator, offset),
        confirm=_count("confirm", confirm),
        runs=_count("runs", runs),
    )


def invariance(
    black_box: Union[str, Callable[[Any], Any]],
    n: Optional[int] = None,
    *,
    shape: Optional[Any] = None,
    batch: Optional[Any] = None,
    rows: Optional[Any] = None,
    columns: Optional[Any] = None,
    threads: Optional[Any] = None,
    offsets: Optional[Any] = None,
    env: Optional[dict] = None,
    dtype: Any = "float32",
    confirm: int = 48,
    processes: Optional[int] = None,
) -> Study:
    """Reveal one output's order under each batch size, output position,
    thread count and environment, and say what changes it and what to pin,
    as ``fprev invariance`` does.

    >>> import numpy as np, fprev
    >>> s = fprev.invariance(lambda X: X.sum(axis=1), 48, batch="1..8")  # doctest: +SKIP
    >>> s.batch_invariant                                                  # doctest: +SKIP
    True

    Each case after the first proves a neighbouring case's tree (masked
    checks) and replays its arithmetic before revealing anew, so a batch
    study reveals each regime once.

    Args:
        black_box: a spec (``"numpy:gemm"``, ``"blas:dot@mkl"``,
            ``"python:PATH.py:FUNC"``) or a callable ``fn(X) -> numbers``
            summing each row of an ``(M, n)`` array (``M`` the batch size;
            ``M = 1`` where no batch varies).
        n: summands (a GEMM's ``K``; default: ``shape``'s).
        shape: a spec's product ``(M, N, K)``: ``batch`` varies its ``M``.
        batch: batch sizes: ``"1..64"``, ``"1,2,16,64"`` or an iterable.
        rows: the rows revealed: ``"first"``, ``"middle"``, ``"last"`` or
            indices; default first, middle and last where a batch varies
            or ``shape`` has more than one row.
        columns: a GEMM's output columns; default the first 16, the middle
            and the last of ``shape``'s ``N``.
        threads: thread counts, for specs that take one (``blas:``,
            ``reduce:``, ...).
        offsets: where the input array starts past a 64-byte boundary,
            ``"1B"`` (bytes) or ``1`` (elements), e.g. ``["0", "1B"]``:
            NumPy sums an unaligned view in another order; specs handed a
            NumPy array only (``numpy:``, ``python:PATH.py:FUNC``).
        env: environment variables and their values, e.g.
            ``{"OPENBLAS_NUM_THREADS": ["1", "2"]}`` (``"unset"``: not
            set); a library reads them when it loads, so each combination
            runs in a fresh process of this interpreter: specs only.
        dtype: as for :func:`reveal`.
        confirm: random inputs each tree is replayed on.
        processes: fresh processes each environment runs in (1 to 16;
            default 2 with ``env``, else 1: this process). Their studies
            are compared: an order that differs between processes of one
            setting (a hash seed, a thread pool's start-up) blames no knob.
            Specs only, as ``env``.

    Returns:
        A :class:`Study`: true when invariant; ``str(study)`` is the
        command's report.

    Raises:
        ValueError: a bad argument (a batch of 0, a row past the batch, a
            knob of no value, nothing that varies).
        TypeError: ``env`` with a callable, or a black box that is neither.
    """
    is_spec = isinstance(black_box, str)
    if not is_spec and not callable(black_box):
        raise TypeError("expected a spec (\"numpy:gemm\") or a callable, got %s" % type(black_box).__name__)
    if shape is not None:
        shape = [_count("shape", d) for d in shape]
        if len(shape) != 3:
            raise ValueError("shape is M, N, K: three whole numbers, got %d" % len(shape))
    if n is None:
        if shape is None:
            raise ValueError("give n (or a spec's shape M, N, K, whose K is n)")
        n = shape[2]
    n = _count("n", n)
    if batch is not None and shape is None and is_spec:
        raise ValueError("batch varies the M of a product's shape M, N, K: give shape")
    knobs = {
        "threads": [_count("threads", t) for t in _listed("threads", threads)],
        "batch": None if batch is None else _batch(batch),
        "rows": [str(r) if isinstance(r, str) else str(_count("a row", r, "row")) for r in _listed("rows", rows)],
        "columns": [_count("a column", c, "column") for c in _listed("columns", columns)],
        "offsets": [_offset(o) for o in _listed("offsets", offsets)],
    }
    fmt = _format_name(dtype)
    confirm = _count("confirm", confirm)
    label = black_box if is_spec else _label(black_box)
    processes = (2 if env else 1) if processes is None else _count("processes", processes)
    in_fresh = bool(env) or processes != 1
    if in_fresh and not is_spec:
        raise TypeError(
            "env and processes: a callable cannot be sent to another process, and each "
            "environment needs a process of its own: give a spec (\"numpy:sum\", "
            "\"python:PATH.py:FUNC\")"
        )
    if in_fresh and env is not None and not isinstance(env, dict):
        raise TypeError("env must be a dict of a variable's name to its values, got %s" % type(env).__name__)
    environment = []
    if in_fresh:
        environment = [(str(k), [str(v) for v in _listed(str(k), vs)]) for k, vs in (env or {}).items()]
    request = dict(spec=black_box, n=n, dtype=fmt, label=label, shape=shape, confirm=confirm, **knobs)
    return _fprev.invariance(
        black_box,
        n,
        fmt,
        label,
        shape=shape,
        confirm=confirm,
        env=environment,
        processes=processes,
        fresh=(lambda environ: _study_in_child(request, environ)) if in_fresh else None,
        **knobs,
    )


def _study_in_child(request: dict, setting: list) -> str:
    """The study file of ``request`` (one environment's study) made in a
    fresh process of this interpreter, with ``setting``'s environment
    variables set (or, at ``unset``, removed)."""
    env = dict(_os.environ)
    for name, value in setting:
        if value == "unset":
            env.pop(name, None)
        else:
            env[name] = value
    returncode, stdout, stderr = _in_child("study", request, env)
    if returncode == 0:
        return stdout
    where = " ".join("%s=%s" % kv for kv in setting)
    if returncode == 2:
        raise ValueError("%s (under %s)" % (_last_line(stderr), where))
    raise BlackBoxError("the study under %s ended with exit status %d: %s" % (where, returncode, _last_line(stderr)))


def _last_line(stderr: str) -> str:
    """What a child process said last, an ``fprev: error:`` cut."""
    said = [line for line in stderr.splitlines() if line.strip()]
    why = said[-1] if said else "no message"
    return why.removeprefix("fprev: ").removeprefix("error: ")


#: How long a child process may take to end what it started once told
#: to end.
_CHILD_GRACE = 10.0


class _Ending(BaseException):
    """SIGTERM or SIGHUP came while a child process ran."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _in_child(kind: str, request: dict, env: dict) -> tuple:
    """``(exit status, stdout, stderr)`` of ``request`` of ``kind`` answered
    (``fprev._child``) by this interpreter in a child process of its own
    process group, so that the child and what it starts end with this
    process, as at a terminal: on KeyboardInterrupt, SIGTERM, SIGHUP
    (where they would end this process) or any other exception while it
    runs, the child's group gets SIGINT (SIGTERM, SIGHUP; SIGTERM for an
    exception), and after ``_CHILD_GRACE`` what is left is killed. Then the exception goes on,
    or the signal ends this process as it would have. Where SIGKILL ends
    this process, the child gets SIGTERM (Linux)."""
    import json
    import signal
    import subprocess
    import sys
    import threading

    code = "import sys; from fprev._child import main; main(sys.argv[1], sys.argv[2])"
    if sys.platform.startswith("linux"):
        # SIGKILL ends this process with no word to the child: the kernel
        # then sends it SIGTERM, on which it stops what it started.
        code = (
            "import ctypes, os, signal; ctypes.CDLL(None).prctl(1, signal.SIGTERM); "
            "os.getppid() == %d or os._exit(1); " % _os.getpid()
        ) + code
    # A session of its own (a group of its own on every Python): a
    # terminal's Ctrl-C reaches this process alone, which passes it on once.
    child = subprocess.Popen(
        [sys.executable, "-c", code, kind, json.dumps(request)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    got = []

    def ending(signum: int, frame: Any) -> None:
        got.append(signum)
        if len(got) == 1:
            raise _Ending(signum)

    # Only signals that would end this process at once are caught, and
    # only where Python can (its main thread): a handler of the caller's
    # own runs as it did, and what it raises stops the child below.
    caught = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(signum) == signal.SIG_DFL:
                caught[signum] = signal.signal(signum, ending)
    try:
        try:
            stdout, stderr = child.communicate()
        except BaseException as e:
            if isinstance(e, _Ending):
                signum = e.signum
            elif isinstance(e, KeyboardInterrupt):
                signum = signal.SIGINT
            else:
                signum = signal.SIGTERM
            _stop(child, signum)
            if isinstance(e, _Ending):
                for s, handler in caught.items():
                    signal.signal(s, handler)
                caught = {}
                signal.raise_signal(e.signum)
            raise
    finally:
        for s, handler in caught.items():
            signal.signal(s, handler)
    return child.returncode, stdout, stderr


def _stop(child: Any, signum: int) -> None:
    """Sends ``child``'s process group ``signum``, waits ``_CHILD_GRACE``
    for the child to end (reading its output, so that a full pipe cannot
    hold it), then kills what is left of the group. A second Ctrl-C meanwhile
    does not cut this short."""
    import signal
    import subprocess
    import threading

    held = None
    if threading.current_thread() is threading.main_thread():
        held = signal.signal(signal.SIGINT, lambda signum, frame: None)
    try:
        try:
            _os.killpg(child.pid, signum)
        except ProcessLookupError:
            pass
        try:
            child.communicate(timeout=_CHILD_GRACE)
        except subprocess.TimeoutExpired:
            pass
        try:
            _os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        child.communicate()
    finally:
        if held is not None:
            signal.signal(signal.SIGINT, held)


def _listed(name: str, values: Any) -> list:
    """Knob ``name``'s values: None (none), a comma-separated string, one value
    or an iterable of them; refused at once past the reveals a study makes
    (``range(10**9)`` is not listed)."""
    import itertools

    if values is None:
        return []
    if isinstance(values, str):
        listed = [v.strip() for v in values.split(",", _fprev.MAX_REVEALS)]
    elif hasattr(values, "__iter__"):
        listed = list(itertools.islice(values, _fprev.MAX_REVEALS + 1))
    else:
        listed = [values]
    if len(listed) > _fprev.MAX_REVEALS:
        raise ValueError("%s: more than %d values, the most reveals a study makes: give fewer" % (name, _fprev.MAX_REVEALS))
    return listed


def _batch(batch: Any) -> list:
    """Batch sizes: ``"1..64"`` (``fprev sweep``'s sizes) or whole numbers."""
    if isinstance(batch, str):
        try:
            return _fprev.parse_sizes(batch, summands=False)
        except ValueError as e:
            raise ValueError("batch: %s" % e) from None
    return [_count("batch", m) for m in _listed("batch", batch)]


def diff(a: Union[Tree, str, "os.PathLike[str]"], b: Union[Tree, str, "os.PathLike[str]"]) -> Optional[str]:
    """``None`` when ``a`` and ``b`` agree in everything ``fprev diff``
    compares, else where they part, in one line, as ``fprev diff`` says
    it: their sizes, whether either varies from call to call, their orders
    (modulo the order of each node's children: ``"a has ((0+1)+2), b has
    (2+3)"``, the smallest subtree of each that the other lacks), then,
    where both carry an arithmetic model, what their nodes compute."""
    return _fprev.diff(_tree(a), _tree(b))


def _parts(a: Tree, b: Tree) -> Optional[tuple]:
    """Where trees part, as text: (a's subtree, b's subtree), or None."""
    if a.n != b.n:
        return ("%d summands" % a.n, "%d summands" % b.n)
    return _fprev.order_parts(a, b)


def _tree(tree: Any) -> Tree:
    """A Tree, or the tree file a path names."""
    if isinstance(tree, Tree):
        return tree
    if isinstance(tree, (str, _os.PathLike)):
        return Tree.load(_os.fspath(tree))
    raise TypeError("expected an fprev.Tree or the path of a tree file, got %s" % type(tree).__name__)


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (IPython's ZMQ shell)."""
    import sys

    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return type(shell).__name__ == "ZMQInteractiveShell"


def _described(rows: Any, may_fuse: Any, accumulator: Any, offset: Any = None) -> dict:
    """The keywords that describe a callable beyond itself, checked, as
    :func:`reveal`, :func:`explain` and :func:`sweep` pass them on."""
    return {
        "rows": None if rows is None else _count("rows", rows),
        "may_fuse": may_fuse,
        "accumulator": None if accumulator is None else _format_name(accumulator),
        "offset": None if offset is None else _offset(offset),
    }


def _sizes(name: str, values: Any) -> list:
    """Sizes, each bounded as :func:`_count` bounds one, refused at once
    past the most a list of sizes holds (``range(10**9)`` is not listed)."""
    import itertools

    listed = list(itertools.islice(values, _fprev.MAX_SIZES + 1))
    if len(listed) > _fprev.MAX_SIZES:
        raise ValueError("%s: more than the %d sizes a list may hold" % (name, _fprev.MAX_SIZES))
    return [_count("a size", n, "size") for n in listed]


def _offset(value: Any) -> str:
    """An offset as the command line writes it: ``"1B"`` (bytes) as given, a
    whole number (elements) as its digits; the library bounds both."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError("an offset must be a whole number or a string like '1B', got %r" % (value,))
    return str(value.__index__())


def _skeleton_seconds(skeleton: Any) -> Optional[int]:
    """The seconds a skeleton's search may take where ``skeleton`` names
    them (``None``: the default, or no search)."""
    if isinstance(skeleton, bool):
        return None
    return _count("skeleton", skeleton, "skeleton seconds")


def _count(name: str, value: Any, bound: Optional[str] = None) -> int:
    """``value``, a whole number within the library's bound for ``bound``
    (default: ``name``), the same as the command line's; else ``TypeError``
    or ``ValueError`` naming ``name``, never an ``OverflowError``."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError("%s must be a whole number, got %r" % (name, value))
    return _fprev.bounded(bound or name, name, value.__index__())


from . import reduce, testing  # noqa: E402  (they use the names above)

del annotations  # the __future__ import's name, not the package's
