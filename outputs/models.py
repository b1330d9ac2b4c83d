#!/usr/bin/env python3
"""Name the revealed trees that fprev's summary leaves unnamed.

Usage: python3 outputs/models.py outputs/results.tsv > outputs/models.tsv
(make.sh runs it)

Each model below builds, for a given n, the summation tree of one
hypothesised order (nested lists; leaves are summand indices). A revealed
tree (outputs/<lib>/<op>/n<N>.json) matches a model when the two are equal
modulo the order of children (both put in canonical form: children sorted
by their smallest leaf), the same equality `fprev diff` tests. The output
lists, per spec and n, every model that matches (several can coincide at a
given n, e.g. 8 lanes over 8 summands is also pairwise halving).

The models are hypotheses written after looking at the trees; a match is
exact equality, not a fit.
"""

import csv
import json
import sys

sys.setrecursionlimit(1_000_000)


def chain(items):
    """Left to right: ((a+b)+c)+..."""
    t = items[0]
    for x in items[1:]:
        t = [t, x]
    return t


def halving(items):
    """Recursive halving at floor(len/2) (fprev's native:pairwise)."""
    if len(items) == 1:
        return items[0]
    h = len(items) // 2
    return [halving(items[:h]), halving(items[h:])]


def binary_tree(items):
    """S[0,n) = S[0,P) + S[P,n), P the largest power of two below n."""
    n = len(items)
    if n == 1:
        return items[0]
    p = 1
    while p * 2 < n:
        p *= 2
    return [binary_tree(items[:p]), binary_tree(items[p:])]


def slots(idx, k):
    """Element i goes to slot i mod k; each slot left to right (None if empty)."""
    return [chain(idx[s::k]) if idx[s::k] else None for s in range(k)]


def drop_none(xs):
    return [x for x in xs if x is not None]


def sequential(n):
    return chain(list(range(n)))


def pairwise(n):
    return halving(list(range(n)))


def btree(n):
    return binary_tree(list(range(n)))


def strided(k):
    """k interleaved lanes, each left to right, lanes combined by halving."""
    def f(n):
        return halving(drop_none(slots(list(range(n)), k)))
    f.__name__ = f"strided:{k}"
    return f


def blocked(b, inner=sequential, inner_name="sequential"):
    """Blocks of b summed by `inner`, block sums left to right."""
    def f(n):
        blocks = []
        for s in range(0, n, b):
            t = inner(min(b, n - s))
            blocks.append(shift(t, s))
        return chain(blocks)
    f.__name__ = f"blocked:{b}" + ("" if inner is sequential else f"[{inner_name}]")
    return f


def shift(t, d):
    return t + d if isinstance(t, int) else [shift(c, d) for c in t]


def numpy_pairwise(n, idx=None):
    """NumPy's pairwise_sum (numpy/_core/src/umath/loops_utils.h.src):
    n < 8 left to right; n <= 128: 8 accumulators r[j] (summands j, j+8, ...),
    combined ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), the n % 8 tail added left to
    right; n > 128: split at n2 = n/2 rounded down to a multiple of 8, recurse."""
    if idx is None:
        idx = list(range(n))
    if n < 8:
        return chain(idx)
    if n <= 128:
        m = n - n % 8
        r = [chain(idx[j:m:8]) for j in range(8)]
        t = [[[r[0], r[1]], [r[2], r[3]]], [[r[4], r[5]], [r[6], r[7]]]]
        return chain([t] + idx[m:])
    n2 = n // 2
    n2 -= n2 % 8
    return [numpy_pairwise(n2, idx[:n2]), numpy_pairwise(n - n2, idx[n2:])]


def acc_lanes(accs, lanes, acc_combine):
    """accs * lanes partial sums, summand i in slot i mod (accs*lanes), slot s =
    lanes*a + j (accumulator a, lane j); each slot left to right; per lane j
    the accumulators combined by `acc_combine`, then the lanes by halving.
    Defined for n a multiple of accs*lanes."""
    k = accs * lanes

    def f(n):
        if n % k:
            return None
        s = slots(list(range(n)), k)
        per_lane = [acc_combine([s[lanes * a + j] for a in range(accs)]) for j in range(lanes)]
        return halving(per_lane)
    f.__name__ = f"{accs}acc-x-{lanes}lanes[{acc_combine.__name__}]"
    return f


def ndarray_unrolled(n):
    """ndarray's unrolled_fold (numeric_util.rs): n < 8 left to right; else 8
    accumulators p[j] (summands j, j+8, ... up to the last multiple of 8),
    combined (((p0+p4)+(p1+p5))+(p2+p6))+(p3+p7), then the tail left to right."""
    if n < 8:
        return sequential(n)
    m = n - n % 8
    p = [chain(list(range(j, m, 8))) for j in range(8)]
    t = chain([[p[0], p[4]], [p[1], p[5]], [p[2], p[6]], [p[3], p[7]]])
    return chain([t] + list(range(m, n)))


def gemv_openblas(n):
    """8 slots (i mod 8) left to right, slot j + slot j+4, the four pairs by halving
    (2 accumulators x 4 lanes). n a multiple of 8."""
    return acc_lanes(2, 4, halving)(n)


def dot_openblas(n):
    """32 slots (i mod 32) left to right: 8 accumulators x 4 lanes, accumulators
    by halving per lane, lanes by halving. n a multiple of 32."""
    return acc_lanes(8, 4, halving)(n)


MODELS = [
    ("sequential", sequential),
    ("pairwise", pairwise),
    ("binary-tree", btree),
    ("strided:2", strided(2)),
    ("strided:4", strided(4)),
    ("strided:8", strided(8)),
    ("blocked:32", blocked(32)),
    ("blocked:256", blocked(256)),
    ("blocked:256[strided:2]", blocked(256, strided(2), "strided:2")),
    ("numpy-pairwise-sum", numpy_pairwise),
    ("ndarray-unrolled-8", ndarray_unrolled),
    ("8-slots:2acc-x-4lanes", gemv_openblas),
    ("32-slots:8acc-x-4lanes", dot_openblas),
]


def canon(t):
    """Canonical form: children sorted by smallest leaf; returns (tree, min leaf)."""
    if isinstance(t, int):
        return t, t
    kids = sorted((canon(c) for c in t), key=lambda x: x[1])
    return tuple(k[0] for k in kids), kids[0][1]


def main():
    tsv = sys.argv[1]
    base = tsv.rsplit("/", 1)[0] if "/" in tsv else "."
    out = csv.writer(sys.stdout, delimiter="\t", lineterminator="\n")
    out.writerow(["spec", "options", "n", "file", "models"])
    for r in csv.DictReader(open(tsv), delimiter="\t"):
        if r["reveal"] != "ok":
            out.writerow([r["spec"], r["options"], r["n"], r["file"], ""])
            continue
        n = int(r["n"])
        tree = json.load(open(f"{base}/{r['file']}"))["tree"]
        got = canon(tree)[0]
        names = []
        for name, f in MODELS:
            m = f(n)
            if m is not None and canon(m)[0] == got:
                names.append(name)
        out.writerow([r["spec"], r["options"], r["n"], r["file"],
                      ", ".join(names) if names else "none of the models"])


if __name__ == "__main__":
    main()
