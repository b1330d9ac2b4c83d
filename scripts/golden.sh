#!/usr/bin/env bash
# scripts/golden.sh: a fixed, varied set of fprev commands and Python API calls
# whose outputs must not change across a restructuring.
#
#   bash scripts/golden.sh OUTDIR [FPREV_BINARY] [PYTHON]
#
# Runs every case below and writes, for each, one file OUTDIR/NAME.txt holding
# the command, its stdout, its stderr and its exit status (and the files it
# wrote, where they matter). The Python part (scripts/golden_api.py, run with
# PYTHON, which must have the fprev package installed) writes OUTDIR/py-NAME.txt
# the same way. Run it on the build before a change and on the build after,
# each with its own Python package, and compare:
#
#   cargo build --release && cp target/release/fprev /tmp/fprev-before
#   python3 -m venv /tmp/venv-before
#   /tmp/venv-before/bin/pip install numpy ml_dtypes jax pytest ./python
#   bash scripts/golden.sh /tmp/before /tmp/fprev-before /tmp/venv-before/bin/python
#   ... change, rebuild, reinstall the package into target/python-venv ...
#   bash scripts/golden.sh /tmp/after target/release/fprev target/python-venv/bin/python
#   diff -r /tmp/before /tmp/after
#
# Two runs of one build give identical directories. Only what changes from run
# to run is normalised: wall times (`0.012 s`, `"seconds": ...`), the memory
# available (named in a too-large -n's error), and the paths of the temporary
# directory the cases run in, OUTDIR, this folder and PYTHON's (<TMP>,
# <OUTDIR>, <SCRIPTS>, <PYTHON>). Trees, calls, queries, inputs, models and
# messages are kept as printed, so the diff shows every change of behaviour,
# and of wording for review. OUTDIR's old *.txt files are removed first.
#
# FPREV_BINARY defaults to target/release/fprev, PYTHON to python3. The CLI's
# Python black boxes (numpy:, jax:, python:) import from PYTHON's environment,
# which needs NumPy, ml_dtypes, JAX and pytest; the system OpenBLAS, BLIS and
# reference BLAS, Graphviz's dot and a C compiler are needed too. BLAS and XLA
# run pinned (OPENBLAS_CORETYPE=Haswell, one thread) so their kernels are the
# same on every run. About a minute.
set -u -o pipefail

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
    echo "usage: bash scripts/golden.sh OUTDIR [FPREV_BINARY] [PYTHON]" >&2
    exit 2
fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
mkdir -p "$1" || exit 2
OUTDIR="$(cd "$1" && pwd)"
FPREV="$(realpath "${2:-$ROOT/target/release/fprev}")"
PYTHON="${3:-python3}"
[ -x "$FPREV" ] || { echo "golden.sh: $FPREV is not an executable" >&2; exit 2; }
PYTHON="$(command -v "$PYTHON")" || { echo "golden.sh: no Python ${3:-python3}" >&2; exit 2; }
"$PYTHON" -c "import fprev, numpy, ml_dtypes, jax, pytest" || {
    echo "golden.sh: $PYTHON lacks fprev, numpy, ml_dtypes, jax or pytest" >&2
    exit 2
}
rm -f "$OUTDIR"/*.txt

# One environment for every case: PYTHON's packages for the embedded bridge,
# BLAS and XLA on one thread with fixed kernels, no logging.
PYPREFIX="$("$PYTHON" -c 'import sys; print(sys.prefix)')"
export VIRTUAL_ENV="$PYPREFIX"
export PATH="$(dirname "$PYTHON"):$PATH"
export OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
export JAX_PLATFORMS=cpu XLA_FLAGS=--xla_cpu_multi_thread_eigen=false
export TF_CPP_MIN_LOG_LEVEL=3 PYTHONHASHSEED=0 LC_ALL=C
unset RUST_LOG FPREV_BLAS FPREV_PROBES FPREV_UPDATE

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 2
# A formula cache of the run's own: what one run keeps, another never reads.
export FPREV_CACHE_DIR="$WORK/cache"
# A copy named fprev: its usage lines name argv[0], and a rebuild during the
# run cannot mix two builds.
mkdir bin && cp "$FPREV" bin/fprev || exit 2
FPREV="$WORK/bin/fprev"
PYBIN="$(dirname "$PYTHON")"
START=$SECONDS

# Wall times and the working directory; nothing else.
normalise() {
    sed -E \
        -e "s#$WORK#<TMP>#g" \
        -e "s#$OUTDIR#<OUTDIR>#g" \
        -e "s#$HERE#<SCRIPTS>#g" \
        -e "s#$PYBIN#<PYTHON>#g" \
        -e 's/[0-9]+(\.[0-9]+)? [kMGT]B available/<MEM> available/g' \
        -e 's/"(seconds|probe_seconds)": *[0-9.e+-]+/"\1": <T>/g' \
        -e 's/\b[0-9]+(\.[0-9]+)? s\b/<T> s/g' \
        -e 's/\b[0-9]+(\.[0-9]+)?s\b/<T>s/g'
}

# record NAME SHOWN COMMAND...: COMMAND's stdout, stderr and exit status, in
# OUTDIR/NAME.txt under the line SHOWN.
record() {
    local name="$1" shown="$2"
    shift 2
    {
        echo "\$ $shown"
        "$@" >"$WORK/.out" 2>"$WORK/.err"
        local rc=$?
        echo "--- stdout"
        cat "$WORK/.out"
        echo "--- stderr"
        cat "$WORK/.err"
        echo "--- exit $rc"
    } | normalise >"$OUTDIR/$name.txt"
}

# case_ NAME ARGS...: `fprev ARGS...` in the working directory.
case_() {
    local name="$1"
    shift
    record "$name" "fprev $*" "$FPREV" "$@"
}

# sh_ NAME COMMAND: a shell command line.
sh_() {
    record "$1" "$2" bash -c "$2"
}

# file_ NAME FILE...: the files a case wrote, appended to its output.
file_() {
    local name="$1"
    shift
    for f in "$@"; do
        echo "--- file $f"
        if [ -f "$f" ]; then cat "$f"; else echo "(missing)"; fi
    done | normalise >>"$OUTDIR/$name.txt"
}

# Small black boxes of one's own: a Python module and a C library.
cat >box.py <<'EOF'
import math

import numpy as np


def blocks3(x):
    """Blocks of three summands left to right, block sums left to right."""
    total = x.dtype.type(0)
    for i in range(0, len(x), 3):
        part = x.dtype.type(0)
        for v in x[i : i + 3]:
            part = part + v
        total = total + part
    return total


def fsum(x):
    """Exact: the same bits in every order."""
    return math.fsum(float(v) for v in x)


def shuffled(x):
    """Left to right in an order that depends on n by a seeded shuffle."""
    order = np.random.default_rng(len(x)).permutation(len(x))
    total = x.dtype.type(0)
    for i in order:
        total = total + x[i]
    return total
EOF
cat >box.c <<'EOF'
#include <stddef.h>
/* Two lanes, even and odd summands, each left to right, then added. */
float lanes2(const float *x, size_t n) {
    float a = 0.0f, b = 0.0f;
    for (size_t i = 0; i + 1 < n; i += 2) { a += x[i]; b += x[i + 1]; }
    if (n % 2) a += x[n - 1];
    return a + b;
}
/* Right to left, in double. */
double backwards(const double *x, size_t n) {
    double s = 0.0;
    for (size_t i = n; i-- > 0;) s += x[i];
    return s;
}
/* A dot product with a fused multiply-add, left to right. */
double fmadot(const double *x, const double *y, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s = __builtin_fma(x[i], y[i], s);
    return s;
}
EOF
cc -O1 -shared -fPIC -o box.so box.c || { echo "golden.sh: cc failed" >&2; exit 2; }
printf 'not a tree\n' >bad.json

# --- the command line, its help and its black boxes -----------------------
case_ help --help
case_ reveal-help help reveal
case_ probes probes

# native: formulas
case_ reveal-default reveal
case_ native-sequential reveal native:sequential -n 8
case_ native-reverse-f64 reveal native:reverse -n 9 --dtype f64
case_ native-pairwise-json reveal native:pairwise -n 16 --format json
case_ native-strided4-f64 reveal native:strided:4 -n 24 --dtype f64
case_ native-blocked5-f16-acc reveal native:blocked:5 -n 20 --dtype f16 --acc f32
case_ native-binary-tree reveal native:binary-tree -n 13 --format text
case_ native-fused4-bf16 reveal native:fused:4 -n 16 --dtype bf16
case_ native-e4m3 reveal native:sequential -n 6 --dtype e4m3
case_ native-e5m2 reveal native:pairwise -n 6 --dtype e5m2
case_ native-e4m3-100 reveal native:sequential -n 100 --dtype e4m3 --no-arith
case_ native-formula reveal "native:halves(128, 8, body(8, interleave(8, sequential, pairwise), then))" -n 150
case_ native-formula-dot reveal "native:body(4, interleave(4, sequential, pairwise), then)" -n 11 --format dot
case_ native-algo-basic reveal native:pairwise -n 12 --algo basic
case_ native-algo-naive reveal native:strided:2 -n 6 --algo naive
case_ native-pivot-random reveal native:blocked:3 -n 17 --pivot random --seed 3
case_ native-pivot-min reveal native:blocked:3 -n 17 --pivot min
case_ native-no-pack reveal native:strided:4 -n 20 --no-pack
case_ native-no-guess reveal native:strided:4 -n 40 --no-guess
case_ native-every-node reveal native:pairwise -n 12 --dtype f16 --acc f32 --every-node
case_ native-no-arith reveal native:pairwise -n 12 --no-arith
case_ native-confirm0 reveal native:pairwise -n 12 --confirm 0
case_ native-timings reveal native:pairwise -n 8 --timings --format json
case_ native-large reveal native:strided:8 -n 4096 --no-arith --format json -o large.json
file_ native-large large.json

# files: JSON, text, DOT, SVG written, then rendered, replayed, checked, diffed
case_ write-json reveal native:pairwise -n 16 -o pair.json
file_ write-json pair.json
case_ write-seq reveal native:sequential -n 16 -o seq.json
case_ write-f64 reveal native:pairwise -n 16 --dtype f64 -o pair64.json
case_ write-acc reveal native:pairwise -n 16 --dtype f16 --acc f32 -o pair16.json
file_ write-acc pair16.json
case_ write-txt reveal native:blocked:4 -n 12 -o blk.txt
file_ write-txt blk.txt
case_ write-dot reveal native:blocked:4 -n 12 -o blk.dot
file_ write-dot blk.dot
case_ write-svg reveal native:blocked:4 -n 12 -o blk.svg
file_ write-svg blk.svg
case_ write-numpy-gemm reveal numpy:gemm -n 16 -o gemm.json
case_ render-text render pair.json
case_ render-json render pair16.json --format json
case_ render-dot render pair.json --format dot
case_ render-svg render pair.json --format svg
case_ render-svg-file render seq.json -o seq.svg
file_ render-svg-file seq.svg
case_ render-text-file render gemm.json
case_ render-large render large.json
case_ render-large-dot render large.json --format dot
case_ replay reveal replay:pair.json
case_ replay-model reveal replay:pair16.json
case_ replay-text reveal replay:blk.txt --dtype f64
case_ check-ok check pair.json native:pairwise
case_ check-json check pair.json native:pairwise --trials 200 --format json
case_ check-quiet check pair.json native:pairwise -q
case_ check-mismatch check pair.json native:sequential --trials 50 --mismatch-out mm.json
file_ check-mismatch mm.json
case_ check-mismatch-json check seq.json native:pairwise --format json --mismatch-out mm2.json
file_ check-mismatch-json mm2.json
case_ check-model check pair16.json native:pairwise --dtype f16 --acc f32 --trials 300
case_ check-numpy-gemm check gemm.json numpy:gemm --trials 100
case_ check-gemm-row check gemm.json blas:gemm --row 3 --trials 100
case_ check-seed check pair64.json native:pairwise --dtype f64 --seed 7 --trials 100
case_ diff-same diff pair.json pair.json
case_ diff-order diff pair.json seq.json
case_ diff-order-json diff pair.json seq.json --format json
case_ diff-quiet diff pair.json seq.json -q
case_ diff-arith diff pair.json pair16.json
case_ diff-arith-json diff pair.json pair64.json --format json
case_ diff-size diff pair.json blk.txt
case_ err-diff-dot diff blk.txt blk.dot

# libraries through the embedded Python bridge
case_ numpy-sum reveal numpy:sum -n 64
case_ numpy-sum-1024 reveal numpy:sum -n 1024
case_ numpy-sum-f16-2048 reveal numpy:sum -n 2048 --dtype f16
case_ numpy-sum-f64 reveal numpy:sum -n 40 --dtype f64
case_ numpy-sum-f16 reveal numpy:sum -n 32 --dtype f16
case_ numpy-sum-bf16 reveal numpy:sum -n 16 --dtype bf16
case_ numpy-sum-f16-every-node reveal numpy:sum -n 64 --dtype f16 --every-node
case_ numpy-dot reveal numpy:dot -n 32
case_ numpy-dot-512 reveal numpy:dot -n 512
case_ numpy-gemv reveal numpy:gemv -n 16
case_ numpy-gemv-256 reveal numpy:gemv -n 256
case_ numpy-gemv-shape reveal numpy:gemv -n 24 --shape 8,1,24 --dtype f64
case_ numpy-gemm reveal numpy:gemm -n 16 --format json
case_ numpy-gemm-row reveal numpy:gemm -n 16 --shape 16,16,16 --row 7
case_ numpy-gemm-batch1 reveal numpy:gemm -n 12 --batch 1
case_ numpy-gemm-128 reveal numpy:gemm -n 128
case_ jax-sum reveal jax:sum -n 32
case_ jax-sum-f64 reveal jax:sum -n 20 --dtype f64
case_ jax-sum-512 reveal jax:sum -n 512
case_ jax-dot reveal jax:dot -n 64
case_ jax-gemv reveal jax:gemv -n 24
case_ jax-gemm reveal jax:gemm -n 32

# libraries in Rust and BLAS loaded at run time
case_ ndarray-sum reveal ndarray:sum -n 40
case_ ndarray-dot reveal ndarray:dot -n 24 --dtype f64
case_ ndarray-gemv reveal ndarray:gemv -n 20
case_ ndarray-gemm reveal ndarray:gemm -n 16
case_ ndarray-gemm-128 reveal ndarray:gemm -n 128 --dtype f64
case_ blas-dot reveal blas:dot -n 48
case_ blas-dot-f64 reveal blas:dot -n 33 --dtype f64
case_ blas-gemv reveal blas:gemv -n 24
case_ blas-gemv-512 reveal blas:gemv -n 512
case_ blas-gemm reveal blas:gemm -n 16
case_ blas-gemm-256 reveal blas:gemm -n 256
case_ blas-dot-blis reveal blas:dot@blis -n 40
case_ blas-gemv-refblas reveal blas:gemv@refblas -n 20 --dtype f64
case_ blas-gemm-threads reveal blas:gemm@openblas -n 16 --threads 1 --format json

# fprev's own reducers; Python and C black boxes of one's own
case_ reduce-binary-tree reveal reduce:binary-tree -n 20
case_ reduce-binary-tree-threads reveal reduce:binary-tree:3 -n 20 --dtype f64
case_ reduce-prerounded reveal reduce:prerounded -n 16
case_ python-blocks3 reveal python:box.py:blocks3 -n 14
case_ python-blocks3-f64 reveal python:box.py:blocks3 -n 10 --dtype f64 --format json
case_ python-fsum reveal python:box.py:fsum -n 12 --dtype f64
case_ dylib-lanes2 reveal dylib:box.so:lanes2 -n 15
case_ dylib-backwards reveal dylib:box.so:backwards -n 10 --dtype f64
case_ dylib-dot-fma reveal dylib-dot:box.so:fmadot -n 12 --dtype f64

# predicting: --infer
case_ infer-strided reveal native:strided:4 -n 100 --infer
case_ infer-numpy reveal numpy:sum -n 300 --infer
case_ infer-numpy-proven reveal numpy:sum -n 20000 --infer --format json -o inferred-numpy.json
file_ infer-numpy-proven inferred-numpy.json
case_ infer-blas-dot reveal blas:dot -n 4096 --infer
case_ infer-unproven reveal native:pairwise -n 3000 --infer --prove-up-to 100 --format json -o inferred.json
file_ infer-unproven inferred.json
case_ infer-blocks3 reveal python:box.py:blocks3 -n 60 --infer
case_ infer-order-independent reveal reduce:prerounded -n 50 --infer

# explaining and sweeping
case_ explain-native explain native:strided:4 -n 1..20
case_ explain-numpy explain numpy:sum -n 1..48
case_ explain-numpy-default explain numpy:sum
case_ explain-blas-gemv explain blas:gemv
case_ explain-blas-dot explain blas:dot -n 1..40
case_ explain-python explain python:box.py:blocks3 -n 1..20
case_ explain-not-explained explain python:box.py:shuffled -n 1..8
case_ explain-order-independent explain reduce:prerounded -n 1..8
case_ explain-fsum explain python:box.py:fsum -n 1..6 --dtype f64
case_ sweep-native sweep native:blocked:4 -n 1..12
case_ sweep-numpy-dot sweep numpy:dot -n 1..64
case_ sweep-threads sweep reduce:binary-tree -n 4..12 --threads 1,2
case_ sweep-json sweep native:strided:2 -n 2,4,8,16 --format json
case_ sweep-file sweep ndarray:dot -n 8..64:8 -o sweep.json
file_ sweep-file sweep.json
case_ sweep-order-independent sweep python:box.py:fsum -n 3..5 --dtype f64

# emitting code that reproduces a black box's bits, in each language
case_ emit-pairwise-c emit native:pairwise --lang c
case_ emit-pairwise-cuda emit native:pairwise --lang cuda
case_ emit-pairwise-rust emit native:pairwise --lang rust
case_ emit-pairwise-python emit native:pairwise --lang python
case_ emit-numpy-c emit numpy:sum --lang c --check --check-sizes 1..300
case_ emit-numpy-f64-rust emit numpy:sum --dtype f64 --lang rust
case_ emit-numpy-dot-python emit numpy:dot --lang python
case_ emit-blas-dot-c emit blas:dot --lang c --check --check-sizes 1..200
case_ emit-blas-gemv-rust emit blas:gemv --lang rust
case_ emit-formula-c emit native:sequential --formula "body(8, interleave(8, sequential, pairwise), then)" --lang c
case_ emit-windows-python emit native:sequential --formula "windows(4, pairwise)" --lang python
case_ emit-dylib-fma-c emit dylib-dot:box.so:fmadot --dtype f64 --lang c
case_ emit-fused-c emit mma:volta:m8n8k4.f32.f16.f16.f32 -n 64 --lang c
case_ emit-fused-python emit mma:ampere:m16n8k16.f32.bf16.bf16.f32 --lang python
case_ emit-tree-file emit inferred-numpy.json --lang c
case_ emit-err-name emit native:pairwise --lang c --name "int"
case_ emit-err-unexplained emit python:box.py:shuffled --lang c

# surveys and comparing them
cp box.py box_saved.py
case_ survey-a survey -o sa --spec native:pairwise --spec reduce:prerounded --spec python:box.py:blocks3 \
    --spec numpy:sum --dtypes f32,f64 -n 1..16 --large 64 --no-threads --no-draw
file_ survey-a sa/survey.json sa/index.html
# The same black boxes, but box.py's blocks3 now adds blocks of four.
sed -i 's/range(0, len(x), 3)/range(0, len(x), 4)/; s/x\[i : i + 3\]/x[i : i + 4]/' box.py
case_ survey-b survey -o sb --spec native:pairwise --spec reduce:prerounded --spec python:box.py:blocks3 \
    --spec numpy:sum --dtypes f32,f64 -n 1..16 --large 64 --no-threads --no-draw
file_ survey-b sb/survey.json
cp box_saved.py box.py
case_ survey-rerun survey -o sa --spec native:pairwise --spec reduce:prerounded --spec python:box.py:blocks3 \
    --spec numpy:sum --dtypes f32,f64 -n 1..16 --large 64 --no-threads --no-draw
case_ survey-blas survey -o sblas --only blas --ops dot,gemv --dtypes f32 -n 1..12 --large 128 \
    --threads 1,2 --thread-sizes 64 --shape 4,4 --no-draw
file_ survey-blas sblas/survey.json
case_ compare-same compare sa sa
case_ compare-differ compare sa sb
case_ compare-json compare sa/survey.json sb/survey.json --format json
case_ compare-quiet compare sa sb -q
case_ compare-html compare sa sb --html cmp.html --no-draw
file_ compare-html cmp.html

# the console script of the Python package runs the same command line
sh_ console-script-reveal "$PYBIN/fprev reveal numpy:sum -n 24 --dtype f64"

# errors: bad input (exit 2) and broken black boxes (exit 3)
case_ err-spec reveal nosuch:sum
case_ err-spec-native reveal native:strided:x
case_ err-spec-formula reveal "native:halves(8, sequential"
case_ err-n-zero reveal native:pairwise -n 0
case_ err-n-word reveal native:pairwise -n many
case_ err-n-huge reveal native:pairwise -n 99999999999999
case_ err-n-format reveal native:sequential -n 5000 --dtype e4m3
case_ err-sizes explain native:pairwise -n 5..1
case_ err-dtype reveal native:pairwise --dtype x87
case_ err-confirm reveal native:pairwise --confirm 2000000
case_ err-blas-lib reveal blas:dot@nolib
case_ err-threads sweep native:pairwise -n 1..3 --threads 2
case_ err-explain-small explain native:pairwise -n 1,2
case_ err-dtype-reduce reveal reduce:prerounded --dtype f16
case_ err-file-missing render missing.json
case_ err-file-bad render bad.json
case_ err-file-check check missing.json native:pairwise
case_ err-replay-n reveal replay:pair.json -n 17
case_ err-check-n check pair.json native:pairwise -n 17
case_ err-row reveal numpy:gemm -n 16 --shape 4,4,16 --row 9
case_ err-row-check check gemm.json numpy:gemm --row 40
case_ err-shape reveal numpy:gemv -n 16 --shape 4,1,8
case_ numpy-sum-shape reveal numpy:sum -n 16 --shape 4,4,16
case_ err-format-ext reveal native:pairwise -o t.png
case_ err-format-clash reveal native:pairwise -o t.json --format dot
case_ err-out-dir reveal native:pairwise -o nodir/t.json
case_ err-quiet-format diff pair.json seq.json -q --format json
case_ err-python-missing reveal python:nobox.py:f
case_ err-python-func reveal python:box.py:nofunc
case_ err-dylib-missing reveal dylib:nolib.so:f
case_ err-survey-spec survey -o sx --spec nosuch:op --no-draw
case_ err-survey-file compare bad.json sa
case_ err-mpi reveal mpi:allreduce

# --- the Python API ---------------------------------------------------------
# The pytest plugin's fixture: golden file missing, written, matched, broken.
mkdir pt && cat >pt/test_golden.py <<'EOF'
import os

import numpy as np


def reverse(x):
    total = x.dtype.type(0)
    for v in x[::-1]:
        total = total + v
    return total


def test_numpy_sum(fprev_golden):
    fprev_golden(reverse if os.environ.get("GOLDEN_BREAK") else np.sum, 48)
EOF
PYTEST="COLUMNS=2000 \"$PYTHON\" -m pytest -q --tb=no -rA -p no:cacheprovider --basetemp=$WORK/ptbase pt/test_golden.py"
sh_ pytest-missing "$PYTEST"
sh_ pytest-update "$PYTEST --fprev-update"
file_ pytest-update pt/fprev_golden/test_numpy_sum.json
sh_ pytest-match "$PYTEST"
sh_ pytest-break "GOLDEN_BREAK=1 $PYTEST"
sh_ python-api "\"$PYTHON\" \"$HERE/golden_api.py\" \"$OUTDIR\""

echo "golden.sh: $(ls "$OUTDIR" | wc -l) files in $OUTDIR, $((SECONDS - START)) s" >&2
