#!/usr/bin/env bash
# outputs/coverage/make.sh: which of this machine's deterministic kernels
# fprev explains, how far each formula is proven, and whether the code
# `fprev emit` writes from it gives the kernel's bits.
#
# For every black box in $BOXES (one per line: SPEC [NAME=VALUE ...]; the
# variables are set for that box only, e.g. OPENBLAS_CORETYPE) and every
# dtype in $DTYPES, as a new user would, with a cache of its own (so every
# time is afresh):
#
#   1. fprev explain SPEC --dtype D [--shape ...]   (GEMV rows of 16 and
#      GEMM 16 x 16 along K: K is the size; the default sizes, proven at
#      4,096, 16,384 and 65,536 where a call takes under 30 s);
#   2. where it names a formula:
#      fprev emit SPEC --dtype D [--shape ...] --lang c --check
#      (C compiled and run against the black box, bit for bit, at every
#      n = 1..1,024 and 2^k, 2^k + 3 to 2^20, 3 random inputs each).
#
# It writes
#   outputs/coverage/coverage.tsv   one row per box and dtype
#   outputs/coverage/coverage.md    the same as a Markdown table
#   outputs/coverage/log/NAME.*     each command's output
#   outputs/coverage/environment.txt  machine, libraries, fprev commit
#
# Usage: bash outputs/coverage/make.sh        (about an hour on 2 cores)
#        BOXES="numpy:sum" DTYPES=f32 bash outputs/coverage/make.sh
#        APPEND=1 BOXES=... bash outputs/coverage/make.sh  (runs those again,
#        each row replacing the box's earlier one)
# Needs: target/release/fprev, and the libraries of the boxes it runs
# (scripts/test.sh installs them all).

set -u -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$ROOT/outputs/coverage"
FPREV="${FPREV:-$ROOT/target/release/fprev}"
DTYPES="${DTYPES:-f32 f64}"
BOXES="${BOXES:-numpy:sum
numpy:dot
numpy:gemv
numpy:gemm
jax:sum
jax:dot
jax:gemv
jax:gemm
torch:sum
torch:dot
torch:gemv
torch:gemm
blas:dot@openblas
blas:gemv@openblas
blas:gemm@openblas
blas:dot@openblas OPENBLAS_CORETYPE=Haswell
blas:gemv@openblas OPENBLAS_CORETYPE=Haswell
blas:gemm@openblas OPENBLAS_CORETYPE=Haswell
blas:dot@openblas OPENBLAS_CORETYPE=Sandybridge
blas:gemv@openblas OPENBLAS_CORETYPE=Sandybridge
blas:gemm@openblas OPENBLAS_CORETYPE=Sandybridge
blas:dot@openblas OPENBLAS_CORETYPE=Prescott
blas:gemv@openblas OPENBLAS_CORETYPE=Prescott
blas:gemm@openblas OPENBLAS_CORETYPE=Prescott
blas:dot@blis
blas:gemv@blis
blas:gemm@blis
blas:dot@mkl
blas:gemv@mkl
blas:gemm@mkl
blas:dot@refblas
blas:gemv@refblas
blas:gemm@refblas
ndarray:sum
ndarray:dot
ndarray:gemv
ndarray:gemm
polars:sum:1
duckdb:sum:1
rayon:sum:1
rayon:dot:1}"

[ -x "$FPREV" ] || { echo "make.sh: no $FPREV: run cargo build --release first" >&2; exit 2; }
mkdir -p "$OUT/log"
CACHE="$(mktemp -d)"
trap 'rm -rf "$CACHE"' EXIT
export FPREV_CACHE_DIR="$CACHE"

# Seconds since the epoch, to the millisecond.
now() { date +%s.%3N; }

TSV="$OUT/coverage.tsv"
if [ -z "${APPEND:-}" ]; then
    printf 'box\tsettings\tdtype\tformula\tproven_to\texplain_s\temit_check\temit_s\n' > "$TSV"
fi

while IFS= read -r line; do
    [ -n "${line// }" ] || continue
    read -r spec settings <<< "$line"
    settings="${settings:-}"
    shape=()
    case "$spec" in
        *gemv*) shape=(--shape 16,1,1) ;;
        *gemm*) shape=(--shape 16,16,1) ;;
    esac
    for d in $DTYPES; do
        name="$(printf '%s_%s_%s' "$spec" "${settings##*=}" "$d" | tr -c 'A-Za-z0-9_\n' '_')"
        echo "coverage: $spec ${settings:+($settings) }$d" >&2
        t0=$(now)
        # shellcheck disable=SC2086
        env $settings "$FPREV" explain "$spec" --dtype "$d" "${shape[@]}" \
            > "$OUT/log/$name.explain" 2> "$OUT/log/$name.explain.err"
        rc=$?
        t1=$(now)
        explain_s=$(echo "$t1 - $t0" | bc)
        first="$(head -n 1 "$OUT/log/$name.explain")"
        if [ "$rc" = 0 ]; then
            formula="$first"
            proven="$(grep -o 'to n = [0-9]*' "$OUT/log/$name.explain" | tail -n 1 | grep -o '[0-9]*$')"
            [ -n "$proven" ] || proven="$(grep -o 'n <= [0-9]*' "$OUT/log/$name.explain" | tail -n 1 | grep -o '[0-9]*$')"
            t0=$(now)
            # shellcheck disable=SC2086
            env $settings "$FPREV" emit "$spec" --dtype "$d" "${shape[@]}" --lang c --check \
                -o "$CACHE/$name.c" > "$OUT/log/$name.emit" 2> "$OUT/log/$name.emit.err"
            erc=$?
            t1=$(now)
            emit_s=$(echo "$t1 - $t0" | bc)
            case "$erc" in
                0) check="same bits at $(grep -o 'at each n = [^ ]*' "$OUT/log/$name.emit.err" | tail -n 1 | sed 's/at each n = //; s/,$//' | awk -F, '{print $1 ", ..., " $NF}')" ;;
                *) check="$(grep 'fprev: error:' "$OUT/log/$name.emit.err" | tail -n 1 | sed 's/^fprev: error: //')" ;;
            esac
        else
            # "no formula …; the closest, F, gives every revealed tree below n = A but not …"
            closest="$(echo "$first" | sed -n 's/.*the closest, \(.*\), gives every revealed tree below n = \([0-9]*\).*/closest \1, which fails at n = \2/p')"
            formula="none${closest:+: $closest}"
            [ -n "$closest" ] || formula="none: $(echo "$first" | sed 's/^# //')"
            [ "$rc" = 1 ] || formula="error (exit $rc): $(grep 'fprev: error:' "$OUT/log/$name.explain.err" | tail -n 1 | sed 's/^fprev: error: //')"
            proven="-"
            check="-"
            emit_s="-"
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$spec" "${settings:--}" "$d" "$formula" \
            "${proven:--}" "$explain_s" "$check" "$emit_s" >> "$TSV"
    done
done <<< "$BOXES"

python3 - "$TSV" > "$OUT/coverage.md" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
# A box run again (APPEND=1) replaces its earlier row, in its place.
latest = {(r["box"], r["settings"], r["dtype"]): r for r in rows}
rows = list({k: latest[k] for k in ((r["box"], r["settings"], r["dtype"]) for r in rows)}.values())
with open(sys.argv[1], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), delimiter="\t", lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
cell = lambda s: s.replace("|", "\\|")
print("| black box | settings | dtype | formula | proven to n | explain (s) | emit --lang c --check | emit (s) |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(cell(r[k]) for k in
          ["box", "settings", "dtype", "formula", "proven_to", "explain_s", "emit_check", "emit_s"]) + " |")
explained = sum(not r["formula"].startswith(("none", "error")) for r in rows)
same = sum(r["emit_check"].startswith("same bits") for r in rows)
print(f"\n{explained} of {len(rows)} explained; the emitted C gives the same bits for {same}.")
EOF

{
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "fprev: $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet || echo ' (modified)')"
    echo "cpu: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) cores)"
    python3 -c 'import numpy, jax, torch; print("numpy", numpy.__version__, "jax", jax.__version__, "torch", torch.__version__)' 2>/dev/null
} > "$OUT/environment.txt"
echo "coverage: wrote $OUT/coverage.md" >&2
