#!/usr/bin/env bash
# Emitted code for numpy:sum (f32, f64), blas:dot (OpenBLAS's sdot, its
# Haswell kernel), jax:sum (f32) in C, CUDA C, Rust and Python, each written by
# `fprev emit --check` (compiled and run against the library at n = 1..1024 and
# each power of two to 2^20, 3 random inputs each: nothing is written where
# one differs), then the speed of the emitted C against the library at 2^20.
# Writes outputs/emit/<name>.<ext>, check.md (each check's line) and bench.md.
#   bash outputs/emit/make.sh [FPREV_BINARY]
set -euo pipefail
cd "$(dirname "$0")"
fprev="${1:-../../target/release/fprev}"
export OPENBLAS_NUM_THREADS=1 FPREV_CACHE_DIR="$(mktemp -d)"
trap 'rm -rf "$FPREV_CACHE_DIR"' EXIT
# OpenBLAS picks its sdot kernel by CPU: the Haswell one's order is a formula
# of the language; the SkylakeX/Cooperlake one's is not (fprev explain
# blas:dot exits 1 there), so it is pinned for blas:dot.
boxes=(
  "numpy:sum f32 numpy_sum_f32"
  "numpy:sum f64 numpy_sum_f64"
  "blas:dot f32 blas_dot_f32 OPENBLAS_CORETYPE=Haswell"
  "jax:sum f32 jax_sum_f32"
)
{
  echo "# Emitted code, checked against the library"
  echo
  echo "Made by \`bash outputs/emit/make.sh\` on $(date -u +%F), fprev $(git rev-parse --short HEAD)."
  echo "Each line: the command, its exit status, its check line (stderr)."
  echo
} > check.md
for entry in "${boxes[@]}"; do
  read -r spec dtype name env <<<"$entry"
  for lang in c cuda rust python; do
    ext=$(case $lang in c) echo c;; cuda) echo cu;; rust) echo rs;; python) echo py;; esac)
    cmd="fprev emit $spec --dtype $dtype --lang $lang --check -o $name.$ext"
    [ -n "${env:-}" ] && cmd="$env $cmd"
    start=$(date +%s.%N)
    set +e
    err=$(env ${env:-} "$fprev" emit "$spec" --dtype "$dtype" --lang "$lang" --check -o "$name.$ext" 2>&1)
    rc=$?
    set -e
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    line=$(echo "$err" | grep -E "Checked:|error:" | tail -1 | sed 's/^fprev: //')
    printf -- '- `%s`: exit %s, %.1f s. %s\n' "$cmd" "$rc" "$secs" "$line" >> check.md
  done
done
# Speed: the emitted C, compiled as its comment says, against the library.
lib=$(mktemp -d)
cc -std=c99 -O3 -march=native -shared -fPIC -o "$lib/libnumpy_sum.so" numpy_sum_f32.c -lm
cc -std=c99 -O3 -march=native -shared -fPIC -o "$lib/libsdot.so" blas_dot_f32.c -lm
{
  echo "# Emitted C against the library, one thread, 2^20 float32 values"
  echo
  echo "\`python3 bench.py\`: medians of 201 alternating calls each, on $(date -u +%F)."
  echo
  echo '```'
  python3 bench.py "$lib/libnumpy_sum.so" numpy_sum_f32 numpy-sum
  OPENBLAS_CORETYPE=Haswell python3 bench.py "$lib/libsdot.so" blas_dot_f32 openblas-sdot
  echo '```'
} > bench.md
rm -rf "$lib"
cat check.md bench.md
