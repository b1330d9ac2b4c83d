"""Type stubs of the extension module (python/src/lib.rs)."""

from os import PathLike
from typing import Any, Callable, Optional, Union

class BlackBoxError(RuntimeError):
    """The black box broke an assumption of the method: no tree is returned."""

class UnconfirmedWarning(RuntimeWarning):
    """The order is revealed, but its replay does not reproduce the black box's bits."""

class OrderIndependentError(Exception):
    """The black box gives the same bits in every order: no tree describes it."""

class VariesError(Exception):
    """The black box answers the same input differently on different calls: no one tree describes it."""

    skeleton: Optional[Tree]
    """The subtrees every call shares, joined at the joins that vary (``Tree.varies``), where found."""

class Tree:
    """A summation tree, with the black box and format it was revealed from."""

    @staticmethod
    def from_json(text: str) -> Tree:
        """Parses the JSON form or the text form ``((0+1)+2)``."""
    @staticmethod
    def from_formula(formula: str, n: int) -> Tree:
        """The tree a formula of the order language gives at ``n`` summands."""
    @staticmethod
    def load(path: Union[str, PathLike[str]]) -> Tree:
        """Reads a tree file (``Tree.save``, ``fprev reveal -o t.json``)."""
    @property
    def n(self) -> int:
        """Number of summands."""
    @property
    def dtype(self) -> Optional[str]:
        """fprev's name of the input format (``f32``), if known."""
    @property
    def label(self) -> Optional[str]:
        """What it was revealed from (``numpy.sum``), if known."""
    @property
    def offset(self) -> Optional[str]:
        """Where its input array started past a 64-byte boundary (``"1B"``, ``"1"``), if not NumPy's own place."""
    @property
    def depth(self) -> int:
        """Longest root-to-leaf path, in additions."""
    @property
    def is_binary(self) -> bool:
        """Whether every node adds two numbers (no fused multi-term adds)."""
    @property
    def stats(self) -> Optional[dict[str, float]]:
        """queries, inputs, calls, seconds, probe_seconds of the reveal."""
    @property
    def confirmation(self) -> Optional[dict[str, Any]]:
        """trials, passed, accumulator of the reveal's replay confirmation."""
    @property
    def arithmetic(self) -> Optional[dict[str, Any]]:
        """version, default, nodes and summary of what each node computes."""
    @property
    def varies(self) -> Optional[dict[str, Any]]:
        """For a varying black box's skeleton: inputs, runs, varied, most_distinct, spread_ulps,
        spread_relative, condition, varying_joins ((smallest summand, summands) each), repeats,
        most_answers, queries, calls and skeleton (one sentence a varying join)."""
    @property
    def confirmed(self) -> Optional[bool]:
        """Whether a replay matched the black box on every random input tried."""
    def to_json(self) -> str: ...
    def text(self) -> str:
        """The canonical text form, ``(((0+1)+2)+3)``; fused nodes ``(0+1+2)``."""
    def to_dot(self) -> str:
        """Graphviz source."""
    def to_svg(self) -> str:
        """The drawing (needs Graphviz's ``dot``)."""
    def save(self, path: Union[str, PathLike[str]]) -> None:
        """Writes the JSON form, which the ``fprev`` CLI reads too."""
    def _repr_svg_(self) -> Optional[str]: ...
    def __eq__(self, other: object) -> bool:
        """Equal modulo the order of each node's children."""
    def __hash__(self) -> int: ...

class Check:
    """How ``fprev.check`` ended; true when every trial matched."""

    ok: bool
    trials: int
    accumulator: Optional[str]
    message: str
    mismatch: Optional[int]
    input: Optional[list[float]]
    replayed: Optional[float]
    returned: Optional[float]
    def __bool__(self) -> bool: ...

class Sweep:
    """The reveals of :func:`fprev.sweep`; ``str()`` is ``fprev sweep``'s table."""

    sizes: list[int]
    trees: list[Optional[Tree]]
    varies: list[tuple[int, str]]
    change_points: list[tuple[int, str, str]]
    formula: Optional[str]
    def to_json(self) -> str: ...

class Study:
    """An invariance study (:func:`fprev.invariance`); ``str()`` is
    ``fprev invariance``'s report, ``bool()`` whether it is invariant."""

    invariant: bool
    batch_invariant: bool
    changing: list[str]
    pin: Optional[list[str]]
    batch_invariant_under: list[dict[str, str]]
    cases: list[tuple[dict[str, str], str, Optional[Tree], bool]]
    @staticmethod
    def from_json(text: str, title: str = "a study file") -> Study: ...
    def regimes(self, axis: str = "batch") -> list[dict[str, Any]]: ...
    def to_json(self) -> str: ...
    def __bool__(self) -> bool: ...

def invariance(
    black_box: Any,
    n: int,
    dtype: str,
    label: str,
    shape: Optional[list[int]] = None,
    threads: list[int] = ...,
    batch: Optional[list[int]] = None,
    rows: list[str] = ...,
    columns: list[int] = ...,
    offsets: list[str] = ...,
    confirm: int = 48,
    one_process: bool = False,
    env: list[tuple[str, list[str]]] = ...,
    processes: int = 1,
    fresh: Optional[Callable[[list[tuple[str, str]]], str]] = None,
) -> Study: ...
def parse_sizes(text: str, summands: bool = True) -> list[int]: ...
def bounded(bound: str, name: str, value: int) -> int: ...
def sweep(
    call: Callable[[Any], Any],
    sizes: list[int],
    dtype: str,
    label: str,
    rows: Optional[int] = None,
    may_fuse: Optional[bool] = None,
    accumulator: Optional[str] = None,
    offset: Optional[str] = None,
    confirm: int = 48,
    runs: int = 0,
) -> Sweep: ...
def reveal(
    call: Callable[[Any], Any],
    n: int,
    dtype: str,
    algo: str,
    label: str,
    rows: Optional[int] = None,
    may_fuse: Optional[bool] = None,
    accumulator: Optional[str] = None,
    offset: Optional[str] = None,
    pack: bool = True,
    progress: bool = False,
    confirm: int = 48,
    arith: bool = True,
    runs: int = 0,
    skeleton: bool = True,
    processes: Optional[int] = None,
    fresh: Optional[Callable[[], list[int]]] = None,
) -> Tree: ...
def variation(
    call: Callable[[Any], Any],
    n: int,
    dtype: str,
    label: str,
    runs: int,
    rows: Optional[int] = None,
    skeleton: bool = True,
) -> Optional[list[str]]: ...
def answers(
    spec: str,
    n: int,
    dtype: str,
    rows: Optional[int] = None,
    accumulator: Optional[str] = None,
    offset: Optional[str] = None,
) -> Optional[list[int]]: ...

VARIATION_INPUTS: int
def check(
    tree: Tree,
    call: Callable[[Any], Any],
    trials: int,
    dtype: Optional[str],
    label: str,
    rows: Optional[int] = None,
    row: int = 0,
    seed: int = 0,
    offset: Optional[str] = None,
) -> Check: ...
def diff(a: Tree, b: Tree) -> Optional[str]: ...
def order_parts(a: Tree, b: Tree) -> Optional[tuple[str, str]]: ...
def same_bits(
    call_a: Any, call_b: Any, n: int, dtype: str, label_a: str, label_b: str, trials: int, seed: int = 0
) -> Optional[str]: ...
def replay(tree: Tree, x: Any, dtype: str, accumulator: Optional[str] = None) -> float: ...
def binary_tree_sum(x: Any, threads: Optional[int] = None) -> float: ...
def prerounded_sum(x: Any, threads: Optional[int] = None) -> float: ...
EXPLAIN_SIZES: list[int]
VERIFY_SIZES: list[int]
MAX_REVEALS: int
MAX_SIZES: int
def explain(
    call: Any,
    sizes: list[int],
    verify: list[int],
    budget: bool,
    dtype: str,
    label: str,
    rows: Optional[int] = None,
    may_fuse: Optional[bool] = None,
    accumulator: Optional[str] = None,
    offset: Optional[str] = None,
    confirm: int = 48,
) -> tuple[Optional[tuple[str, str]], Optional[tuple[str, int]], list[int], list[tuple[int, int]], list[int], str]: ...
