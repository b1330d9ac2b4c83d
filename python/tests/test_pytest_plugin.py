"""The pytest plugin as a user's test suite meets it, run by pytester in a
fresh folder: no golden file (fails, naming it), --fprev-update (writes
it), unchanged (passes, file unchanged), a changed order (fails, naming
the trees and drawings it wrote), and --fprev-update again (accepts it)."""

import json
import os
import re

import fprev

pytest_plugins = ["pytester"]

# The black box's order is read from a file the test changes between runs:
# left to right, or right to left.
TEST = '''
import pathlib
import numpy as np

def add(x):
    forward = pathlib.Path(__file__).with_name("direction").read_text() == "forward"
    values = list(x) if forward else list(x)[::-1]
    s = values[0]
    for v in values[1:]:
        s = np.float32(s + v)
    return s

def test_my_sum(fprev_golden):
    fprev_golden(add, 12)
'''


def outcome(result):
    return result.parseoutcomes()


def test_a_golden_file_is_written_kept_and_enforced(pytester):
    pytester.makepyfile(test_sums=TEST)
    direction = pytester.path / "direction"
    direction.write_text("forward")
    golden = pytester.path / "fprev_golden" / "test_my_sum.json"

    # No golden file: a failure that says how to make one.
    result = pytester.runpytest()
    assert outcome(result).get("failed") == 1, result.stdout.str()
    result.stdout.fnmatch_lines(["*no golden file*test_my_sum.json*--fprev-update*"])

    result = pytester.runpytest("--fprev-update")
    assert outcome(result).get("passed") == 1, result.stdout.str()
    written = golden.read_text()
    assert json.loads(written)["tree"] == sequential(12)

    # Unchanged: passes, and the file is not touched.
    result = pytester.runpytest()
    assert outcome(result).get("passed") == 1, result.stdout.str()
    result = pytester.runpytest("--fprev-update")
    assert golden.read_text() == written

    # A changed order fails, with both trees and drawings written.
    direction.write_text("backward")
    result = pytester.runpytest("--basetemp", str(pytester.path / "tmp"))
    assert outcome(result).get("failed") == 1, result.stdout.str()
    text = result.stdout.str()
    assert "no longer sums in the golden order" in text, text
    files = re.search(r"written: (.*)", text).group(1).split(", ")
    by_name = {os.path.basename(f): f for f in files}
    assert {"golden.json", "revealed.json", "first-difference.txt"} <= set(by_name), by_name
    assert {"golden.svg", "revealed.svg"} <= set(by_name) or {"golden.dot", "revealed.dot"} <= set(by_name)
    assert all(os.path.exists(f) for f in files), files
    with open(by_name["first-difference.txt"]) as f:
        first = f.read()
    assert first.startswith("golden:   ") and "revealed: " in first, first
    # The tree written as revealed is the new order, right to left.
    assert fprev.Tree.load(by_name["revealed.json"]) == fprev.Tree.from_json(reverse_sequential(12))

    # --fprev-update accepts the new order; then it passes.
    result = pytester.runpytest("--fprev-update")
    assert outcome(result).get("passed") == 1
    assert golden.read_text() != written
    result = pytester.runpytest()
    assert outcome(result).get("passed") == 1, result.stdout.str()


def sequential(n):
    """The JSON tree of ((0+1)+2)+..., written out here."""
    tree = 0
    for i in range(1, n):
        tree = [tree, i]
    return tree


def reverse_sequential(n):
    """The text form of ((11+10)+9)+... for n = 12."""
    text = str(n - 1)
    for i in range(n - 2, -1, -1):
        text = "(%s+%d)" % (text, i)
    return text


# Chunks of 4 added left to right, the chunk sums joined in a random order
# (or, once the file says so, chunks of 8).
VARYING = '''
import pathlib
import random
import numpy as np

def joins(x):
    size = int(pathlib.Path(__file__).with_name("chunk").read_text())
    chunks = []
    for k in range(0, len(x), size):
        s = x[k]
        for v in x[k + 1 : k + size]:
            s = np.float32(s + v)
        chunks.append(s)
    random.shuffle(chunks)
    t = chunks[0]
    for c in chunks[1:]:
        t = np.float32(t + c)
    return t

def test_joins(fprev_golden):
    fprev_golden(joins, 32)
'''


def test_a_varying_black_box_has_its_skeleton_as_golden_file(pytester):
    pytester.makepyfile(test_joins=VARYING)
    chunk = pytester.path / "chunk"
    chunk.write_text("4")
    golden = pytester.path / "fprev_golden" / "test_joins.json"
    result = pytester.runpytest("--fprev-update")
    assert outcome(result).get("passed") == 1, result.stdout.str()
    saved = json.loads(golden.read_text())
    chains = ["(((%d+%d)+%d)+%d)" % (a, a + 1, a + 2, a + 3) for a in range(0, 32, 4)]
    assert fprev.Tree.load(golden) == fprev.Tree.from_json("(%s)" % "+".join(chains))
    assert saved["varies"]["skeleton"]["varying"] == [[0, 32]], saved["varies"]

    # The same skeleton found again passes; other chunks fail.
    result = pytester.runpytest()
    assert outcome(result).get("passed") == 1, result.stdout.str()
    chunk.write_text("8")
    result = pytester.runpytest()
    assert outcome(result).get("failed") == 1, result.stdout.str()
    assert "no longer sums in the golden order" in result.stdout.str()
