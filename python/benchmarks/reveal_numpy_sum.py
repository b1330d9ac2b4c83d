"""Revealing numpy.sum through the package against the same reveal through
the CLI's embedded bridge, in the same session:

    python python/benchmarks/reveal_numpy_sum.py [N] [RUNS]

Runs alternate (CLI, package, package with np.add.reduce); each reports
the reveal's own time (stats.seconds: from the first query to the tree)
and the wall time of the whole command or call. Medians, and ratios to
the CLI. Needs target/release/fprev (cargo build --release) and the package
installed (pip install ./python).
"""

import json
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np

import fprev

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = ROOT / "target" / "release" / "fprev"


def cli(n):
    started = time.perf_counter()
    out = subprocess.run(
        [str(CLI), "reveal", "numpy:sum", "-n", str(n), "--format", "json", "--timings"],
        capture_output=True, text=True, check=True,
    ).stdout
    wall = time.perf_counter() - started
    doc = json.loads(out)
    return doc["stats"]["seconds"], wall, doc["stats"]["calls"], doc["tree"]


def package(fn, n):
    started = time.perf_counter()
    tree = fprev.reveal(fn, n)
    wall = time.perf_counter() - started
    return tree.stats["seconds"], wall, tree.stats["calls"], json.loads(tree.to_json())["tree"]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    ways = {
        "CLI: fprev reveal numpy:sum": lambda: cli(n),
        "package: fprev.reveal(np.sum)": lambda: package(np.sum, n),
        "package: fprev.reveal(np.add.reduce)": lambda: package(np.add.reduce, n),
    }
    results = {name: [] for name in ways}
    trees = {}
    for _ in range(runs):
        for name, way in ways.items():
            seconds, wall, calls, tree = way()
            results[name].append((seconds, wall, calls))
            trees[name] = tree
    assert len({json.dumps(t) for t in trees.values()}) == 1, "the ways revealed different trees"
    base = statistics.median(r[0] for r in results["CLI: fprev reveal numpy:sum"])
    base_wall = statistics.median(r[1] for r in results["CLI: fprev reveal numpy:sum"])
    print("numpy.sum, n = %d, float32, medians of %d alternating runs (numpy %s)\n" % (n, runs, np.__version__))
    print("| way | calls | reveal s | ratio | wall s | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, rs in results.items():
        seconds = statistics.median(r[0] for r in rs)
        wall = statistics.median(r[1] for r in rs)
        print("| %s | %d | %.3f | %.2fx | %.3f | %.2fx |" % (name, rs[0][2], seconds, seconds / base, wall, wall / base_wall))


if __name__ == "__main__":
    main()
