"""The Python part of scripts/golden.sh: the fprev package's public API on
small callables and NumPy, each case's results printed into OUTDIR/py-NAME.txt.

    python scripts/golden_api.py OUTDIR

Prints trees, confirmations, arithmetic models, call and query counts, and
the type and message of every exception and warning; wall times are left out.
"""

import json
import math
import os
import re
import sys
import tempfile
import warnings

import numpy as np

import fprev
from fprev import reduce as fr
from fprev import testing

OUTDIR = sys.argv[1]
WORK = tempfile.mkdtemp()
os.chdir(WORK)


def no_times(value):
    """A stats dict, or a tree's JSON, without its wall times."""
    if isinstance(value, dict):
        return {k: no_times(v) for k, v in value.items() if k not in ("seconds", "probe_seconds")}
    if isinstance(value, str):
        return re.sub(r'"(seconds|probe_seconds)": *[0-9.e+-]+', r'"\1": <T>', value)
    return value


def tree_facts(tree):
    """Everything a Tree says of itself, times left out."""
    return "\n".join(
        [
            "text: %s" % tree.text(),
            "n: %r, dtype: %r, label: %r, depth: %r, binary: %r" % (tree.n, tree.dtype, tree.label, tree.depth, tree.is_binary),
            "confirmed: %r" % tree.confirmed,
            "confirmation: %s" % json.dumps(tree.confirmation, sort_keys=True),
            "arithmetic: %s" % json.dumps(tree.arithmetic, sort_keys=True),
            "stats: %s" % json.dumps(no_times(tree.stats), sort_keys=True),
            "repr: %r" % tree,
        ]
    )


def check_facts(c):
    return "bool: %r, ok: %r, trials: %r, accumulator: %r, mismatch: %r, replayed: %r, returned: %r\nmessage: %s\ninput: %r" % (
        bool(c),
        c.ok,
        c.trials,
        c.accumulator,
        c.mismatch,
        c.replayed,
        c.returned,
        c.message,
        c.input,
    )


def case(name):
    """Runs the decorated function at once; its printed lines, warnings and
    any exception go into OUTDIR/py-NAME.txt."""

    def run(fn):
        lines = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = fn()
                if result is not None:
                    lines.append(str(result))
            except Exception as e:  # the exception is the result
                lines.append("raised %s.%s: %s" % (type(e).__module__, type(e).__name__, e))
        for w in caught:
            lines.append("warning %s: %s" % (w.category.__name__, w.message))
        text = "\n".join(lines) + "\n"
        text = text.replace(WORK, "<TMP>")
        text = re.sub(r"\b[0-9]+(\.[0-9]+)? s\b", "<T> s", text)
        with open(os.path.join(OUTDIR, "py-%s.txt" % name), "w") as f:
            f.write(text)
        return fn

    return run


def sequential(x):
    total = x.dtype.type(0)
    for v in x:
        total = total + v
    return total


def reverse(x):
    return sequential(x[::-1])


def kahan(x):
    s = x.dtype.type(0)
    c = x.dtype.type(0)
    for v in x:
        y = v - c
        t = s + y
        c = (t - s) - y
        s = t
    return s


def fsum(x):
    return math.fsum(float(v) for v in x)


# --- reveal ------------------------------------------------------------------


@case("reveal-numpy-sum")
def _():
    return tree_facts(fprev.reveal(np.sum, 64))


@case("reveal-numpy-sum-f64")
def _():
    return tree_facts(fprev.reveal(np.sum, 40, "float64"))


@case("reveal-numpy-sum-f16")
def _():
    return tree_facts(fprev.reveal(np.sum, 32, np.float16))


@case("reveal-numpy-sum-f16-acc")
def _():
    return tree_facts(fprev.reveal(np.sum, 32, "f16", accumulator="f32"))


@case("reveal-numpy-sum-bf16")
def _():
    return tree_facts(fprev.reveal(np.sum, 16, "bfloat16"))


@case("reveal-sequential")
def _():
    return tree_facts(fprev.reveal(sequential, 10, "float64"))


@case("reveal-reverse-f32")
def _():
    return tree_facts(fprev.reveal(reverse, 9))


@case("reveal-lambda-fp8")
def _():
    return tree_facts(fprev.reveal(lambda x: sequential(x), 6, "float8_e4m3fn", may_fuse=False, arith=False))


@case("err-fp8-arith")
def _():
    return fprev.reveal(sequential, 6, "float8_e5m2")


@case("reveal-rows-gemv")
def _():
    a = np.ones(20, dtype=np.float32)
    return tree_facts(fprev.reveal(lambda X: X @ a, 20, rows=8))


@case("reveal-numpy-dot")
def _():
    y = np.ones(24, dtype=np.float64)
    return tree_facts(fprev.reveal(lambda x: np.dot(x, y), 24, "f64"))


@case("reveal-algo-basic")
def _():
    return tree_facts(fprev.reveal(np.sum, 12, algo="basic"))


@case("reveal-algo-naive")
def _():
    return tree_facts(fprev.reveal(reverse, 5, algo="naive"))


@case("reveal-no-pack")
def _():
    return tree_facts(fprev.reveal(np.sum, 24, pack=False))


@case("reveal-no-arith-confirm0")
def _():
    return tree_facts(fprev.reveal(np.sum, 24, arith=False, confirm=0))


@case("reveal-kahan")
def _():
    return tree_facts(fprev.reveal(kahan, 12, "float64"))


@case("reveal-jax")
def _():
    import jax.numpy as jnp

    return tree_facts(fprev.reveal(lambda x: float(jnp.sum(jnp.asarray(x))), 32))


# --- the Tree ----------------------------------------------------------------


@case("tree-forms")
def _():
    t = fprev.reveal(np.sum, 16)
    t.save("t.json")
    with open("t.json") as f:
        saved = f.read()
    loaded = fprev.Tree.load("t.json")
    return "\n".join(
        [
            "to_json:\n%s" % no_times(t.to_json()),
            "saved:\n%s" % no_times(saved),
            "to_dot:\n%s" % t.to_dot(),
            "to_svg:\n%s" % t.to_svg(),
            "loaded == t: %r, hash equal: %r" % (loaded == t, hash(loaded) == hash(t)),
            tree_facts(loaded),
        ]
    )


@case("tree-from")
def _():
    a = fprev.Tree.from_json("((0+1)+(2+3))")
    b = fprev.Tree.from_json('{"tree": [[1,0],[3,2]]}')
    c = fprev.Tree.from_formula("interleave(4, sequential, pairwise)", 12)
    d = fprev.Tree.from_formula("halves(128, 8, body(8, interleave(8, sequential, pairwise), then))", 150)
    return "\n".join(
        [
            tree_facts(a),
            "a == b: %r" % (a == b),
            tree_facts(c),
            "svg of formula tree:\n%s" % c.to_svg(),
            tree_facts(d),
            "repr svg: %r" % (a._repr_svg_() is not None),
        ]
    )


@case("tree-errors")
def _():
    out = []
    for text in ["((0+1)+", "((0+1)+(1+2))", '{"n": 3, "tree": [0,1]}', ""]:
        try:
            fprev.Tree.from_json(text)
            out.append("%r: read" % text)
        except Exception as e:
            out.append("%r: %s: %s" % (text, type(e).__name__, e))
    for formula, n in [("nonsense", 4), ("pairwise", 0)]:
        try:
            fprev.Tree.from_formula(formula, n)
            out.append("%r, %d: read" % (formula, n))
        except Exception as e:
            out.append("%r, %d: %s: %s" % (formula, n, type(e).__name__, e))
    try:
        fprev.Tree.load("missing.json")
    except Exception as e:
        out.append("load missing: %s: %s" % (type(e).__name__, e))
    return "\n".join(out)


# --- check, diff -------------------------------------------------------------


@case("check-ok")
def _():
    t = fprev.reveal(np.sum, 32)
    return check_facts(fprev.check(t, np.sum))


@case("check-mismatch")
def _():
    t = fprev.reveal(sequential, 12)
    return check_facts(fprev.check(t, reverse, trials=100, seed=3))


@case("check-file-dtype")
def _():
    fprev.reveal(sequential, 12).save("s.json")
    return check_facts(fprev.check("s.json", sequential, trials=50, dtype="float64"))


@case("check-rows")
def _():
    a = np.ones(16, dtype=np.float32)
    t = fprev.reveal(lambda X: X @ a, 16, rows=4)
    return check_facts(fprev.check(t, lambda X: X @ a, 100, rows=4, row=2))


@case("diff")
def _():
    a = fprev.reveal(sequential, 8)
    b = fprev.reveal(reverse, 8)
    c = fprev.reveal(np.sum, 8)
    return "\n".join(
        [
            "seq vs rev: %r" % fprev.diff(a, b),
            "seq vs np.sum: %r" % fprev.diff(a, c),
            "seq vs seq: %r" % fprev.diff(a, a),
            "sizes: %r" % fprev.diff(a, fprev.reveal(sequential, 9)),
        ]
    )


# --- explain, sweep ----------------------------------------------------------


@case("explain-numpy")
def _():
    e = fprev.explain(np.sum, range(1, 41))
    return "%s\n%r\nbool %r formula %r sentence %r sizes %r closest %r fails_at %r gaps %r" % (
        e,
        e,
        bool(e),
        e.formula,
        e.sentence,
        e.sizes,
        e.closest,
        e.fails_at,
        e.gaps,
    )


@case("explain-not-explained")
def _():
    def alternating(x):
        """Left to right at even sizes, right to left at odd ones."""
        return sequential(x if len(x) % 2 == 0 else x[::-1])

    e = fprev.explain(alternating, range(1, 9))
    return "%s\nbool %r closest %r fails_at %r sizes %r gaps %r" % (e, bool(e), e.closest, e.fails_at, e.sizes, e.gaps)


@case("explain-order-independent")
def _():
    e = fprev.explain(fsum, range(1, 7), "float64")
    return "%s\nbool %r sizes %r" % (e, bool(e), e.sizes)


@case("sweep")
def _():
    s = fprev.sweep(sequential, "1..12", "float64")
    return "%s\nsizes %r\nchange_points %r\nformula %r\ntrees %r\njson:\n%s" % (
        s,
        s.sizes,
        s.change_points,
        s.formula,
        [t.text() if t is not None else None for t in s.trees],
        no_times(s.to_json()),
    )


@case("sweep-numpy")
def _():
    s = fprev.sweep(np.sum, [4, 8, 16, 24, 32], confirm=10)
    return "%s\nchange_points %r\nformula %r" % (s, s.change_points, s.formula)


# --- reduce, testing ---------------------------------------------------------


@case("reduce")
def _():
    x = np.random.default_rng(0).standard_normal(10_000)
    x32 = x.astype(np.float32)
    t = fprev.reveal(np.sum, 16)
    y = np.random.default_rng(1).standard_normal(16).astype(np.float32)
    return "\n".join(
        [
            "binary_tree_sum: %r %r" % (fr.binary_tree_sum(x), fr.binary_tree_sum(x, threads=3)),
            "binary_tree_sum f32: %r" % fr.binary_tree_sum(x32),
            "prerounded_sum: %r %r" % (fr.prerounded_sum(x), fr.prerounded_sum(x[::-1].copy(), threads=2)),
            "prerounded_sum f32: %r" % fr.prerounded_sum(x32),
            "replay: %r, np.sum: %r" % (fr.replay(t, y), np.sum(y)),
            "replay f64 acc: %r" % fr.replay(t, y, accumulator="float64"),
        ]
    )


@case("reduce-errors")
def _():
    out = []
    for call in [
        lambda: fr.binary_tree_sum(np.ones(4), threads=0),
        lambda: fr.replay(fprev.Tree.from_json("((0+1)+2)"), np.ones((2, 2))),
        lambda: fr.replay(fprev.Tree.from_json("((0+1)+2)"), np.ones(4)),
        lambda: fr.prerounded_sum(np.ones(4, dtype=np.float16)),
    ]:
        try:
            out.append("returned %r" % call())
        except Exception as e:
            out.append("%s: %s" % (type(e).__name__, e))
    return "\n".join(out)


@case("testing")
def _():
    out = []
    testing.assert_same_order(np.sum, lambda x: np.add.reduce(x), 32)
    out.append("np.sum and np.add.reduce: same order")
    try:
        testing.assert_same_order(sequential, reverse, 8)
    except AssertionError as e:
        out.append("AssertionError: %s" % e)
    fprev.reveal(np.sum, 24).save("snap.json")
    got = testing.assert_order(np.sum, "snap.json")
    out.append("np.sum matches its saved order: %s" % got.text())
    for call in [
        lambda: testing.assert_order(reverse, "snap.json"),
        lambda: testing.assert_order(np.sum, "snap.json", n=25),
        lambda: testing.assert_order(kahan, fprev.Tree.from_json("((0+1)+2)"), dtype="float32"),
    ]:
        try:
            out.append("returned %s" % call().text())
        except Exception as e:
            out.append("%s: %s" % (type(e).__name__, e))
    return "\n".join(out)


# --- errors ------------------------------------------------------------------


@case("err-order-independent")
def _():
    return fprev.reveal(fsum, 12, "float64")


@case("err-nan")
def _():
    return fprev.reveal(lambda x: float("nan"), 8)


@case("err-fraction")
def _():
    return fprev.reveal(lambda x: 0.5, 8)


@case("err-raises")
def _():
    def broken(x):
        raise KeyError("inside the black box")

    return fprev.reveal(broken, 8)


@case("err-not-a-number")
def _():
    return fprev.reveal(lambda x: "three", 8)


@case("err-arguments")
def _():
    out = []
    for args, kwargs in [
        ((np.sum, 0), {}),
        ((np.sum, "a"), {}),
        ((np.sum, True), {}),
        ((123, 8), {}),
        ((np.sum, 8, "x87"), {}),
        ((np.sum, 8, "float128"), {}),
        ((np.sum, 8), {"algo": "fast"}),
        ((np.sum, 8), {"rows": 0}),
        ((np.sum, 8), {"confirm": -1}),
        ((np.sum, 8), {"accumulator": "nonsense"}),
        ((np.sum, 16), {"algo": "naive"}),
    ]:
        try:
            fprev.reveal(*args, **kwargs)
            out.append("%r %r: returned" % (args[1:], kwargs))
        except Exception as e:
            out.append("%r %r: %s: %s" % (args[1:], kwargs, type(e).__name__, e))
    for call in [
        lambda: fprev.check(fprev.reveal(np.sum, 8), np.sum, trials=0),
        lambda: fprev.check(42, np.sum),
        lambda: fprev.sweep(np.sum, "5..1"),
        lambda: fprev.sweep(np.sum, []),
        lambda: fprev.explain(np.sum, []),
        lambda: fprev.explain("np.sum"),
        lambda: fprev.diff("missing.json", "missing.json"),
    ]:
        try:
            call()
            out.append("returned")
        except Exception as e:
            out.append("%s: %s" % (type(e).__name__, e))
    return "\n".join(out)


@case("err-rows-shape")
def _():
    return fprev.reveal(lambda X: X.sum(axis=1)[:2], 8, rows=4)
