"""pytest plugin (entry point ``pytest11``, on once the package is installed):
assert a black box's order, and its bits, against a golden tree file.

::

    import numpy as np

    def test_numpy_sum_order(fprev_golden):
        fprev_golden(np.sum, 1024)

The first run fails, naming the file it wants; ``pytest --fprev-update``
reveals the order and writes it, ``fprev_golden/test_numpy_sum_order.json``
beside the test file (commit it). Every later run reveals the order again
and fails when it is not the golden one, or when a replay of the golden
tree (with its arithmetic) on random inputs no longer gives the black box's
bits. The failure names the files it wrote to the test's temporary
folder: both trees (JSON, and SVG where Graphviz's ``dot`` is installed,
else DOT) and the first subtree where they part.

Golden files are written without timings, so refreshing an unchanged order
leaves them byte for byte the same.

A black box whose order varies from call to call (``fprev.VariesError``)
has no one tree: its golden file holds its skeleton, the subtrees every
call shares and the joins that vary (``Tree.varies``). Later runs find the
skeleton again and fail when it changed, or when the black box no longer
varies (or starts to); its bits are not replayed, having no one order.
"""

from __future__ import annotations

import pathlib
import re
import warnings
from typing import Any, Callable, Optional

import pytest

from . import Tree, UnconfirmedWarning, VariesError, _parts, check, reveal

__all__ = ["Golden"]


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("fprev", "fprev golden summation orders")
    group.addoption(
        "--fprev-update",
        action="store_true",
        default=False,
        help="write or refresh the golden tree files of the fprev_golden fixture "
        "instead of comparing with them",
    )


class Golden:
    """The ``fprev_golden`` fixture: call it with a black box to assert its
    order against the test's golden file."""

    def __init__(self, request: Any) -> None:
        self._request = request
        self._update = bool(request.config.getoption("fprev_update"))
        self._folder = pathlib.Path(str(request.node.fspath)).parent / "fprev_golden"
        self._calls = 0

    def path(self, name: Optional[str] = None) -> pathlib.Path:
        """The golden file of ``name`` (default: the test's name, then
        ``-2``, ``-3`` for later calls in one test)."""
        if name is None:
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", self._request.node.name)
            if self._calls > 1:
                name += "-%d" % self._calls
        return self._folder / ("%s.json" % name)

    def __call__(
        self,
        fn: Callable[[Any], Any],
        n: int,
        dtype: Any = "float32",
        *,
        name: Optional[str] = None,
        trials: int = 1000,
        **reveal_options: Any,
    ) -> Tree:
        """Reveal ``fn``'s order over ``n`` values of ``dtype`` and assert it
        is the golden file's, then replay the golden tree on ``trials``
        random inputs and assert ``fn`` gives its bits. ``reveal_options``
        go to :func:`fprev.reveal` (``rows=``, ``accumulator=``, ...).
        Returns the order revealed. With ``--fprev-update`` the golden file
        is written instead."""
        self._calls += 1
        path = self.path(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnconfirmedWarning)
            try:
                got = reveal(fn, n, dtype, **reveal_options)
            except VariesError as e:
                if e.skeleton is None:
                    raise
                got = e.skeleton
        if self._update:
            path.parent.mkdir(parents=True, exist_ok=True)
            got.save(path)
            return got
        if not path.exists():
            pytest.fail(
                "no golden file %s for %s: run pytest --fprev-update to reveal the order and "
                "write it" % (path, got.label),
                pytrace=False,
            )
        want = Tree.load(path)
        if (want.varies is None) != (got.varies is None):
            written = self._write(want, got, None)
            now = "now varies from call to call" if got.varies else "no longer varies"
            pytest.fail(
                "%s %s, unlike the golden file %s.\nwritten: %s\n(pytest --fprev-update "
                "accepts it)" % (got.label, now, path, ", ".join(map(str, written))),
                pytrace=False,
            )
        parts = _parts(got, want)
        if parts is not None:
            written = self._write(want, got, parts)
            pytest.fail(
                "%s no longer sums in the golden order of %s: it has %s where the golden tree "
                "has %s.\nwritten: %s\n(pytest --fprev-update accepts the new order)"
                % (got.label, path, parts[0], parts[1], ", ".join(map(str, written))),
                pytrace=False,
            )
        if want.varies is not None:
            return got
        report = check(want, fn, trials, dtype=dtype, rows=reveal_options.get("rows"))
        if not report:
            written = self._write(want, got, None)
            pytest.fail(
                "%s sums in the golden order of %s, but not with its bits: %s\nwritten: %s"
                % (got.label, path, report.message, ", ".join(map(str, written))),
                pytrace=False,
            )
        return got

    def _write(self, want: Tree, got: Tree, parts: Optional[tuple]) -> list:
        """Both trees, drawn, and where they part, into the test's tmp dir."""
        folder = pathlib.Path(str(self._request.getfixturevalue("tmp_path")))
        written = []
        for stem, tree in (("golden", want), ("revealed", got)):
            json_path = folder / ("%s.json" % stem)
            tree.save(json_path)
            written.append(json_path)
            try:
                drawing, ext = tree.to_svg(), "svg"
            except Exception:  # no Graphviz: the DOT source draws it elsewhere
                drawing, ext = tree.to_dot(), "dot"
            picture = folder / ("%s.%s" % (stem, ext))
            picture.write_text(drawing)
            written.append(picture)
        if parts is not None:
            first = folder / "first-difference.txt"
            first.write_text("golden:   %s\nrevealed: %s\n" % (parts[1], parts[0]))
            written.append(first)
        return written


@pytest.fixture
def fprev_golden(request: Any) -> Golden:
    """Asserts a black box's summation order (and bits) against a golden
    tree file beside the test; ``pytest --fprev-update`` writes it."""
    return Golden(request)
