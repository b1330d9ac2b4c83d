#!/usr/bin/env bash
# Regenerates outputs/arith/sweeps/: every real library op swept over
# n = 1..1024 (every n for sum and dot, every 7th for GEMV and GEMM, whose
# calls sum 64 rows each) and a spread of larger n up to 65,536 (to 16,384
# for GEMV and GEMM), each size's tree
# confirmed by 200 random replays bit for bit: in plain additions where
# those reproduce the black box, else with the arithmetic model found for
# that size. Then summary.md, the table per op (summary.py).
#
#   cargo build --release && bash outputs/arith/make.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
fprev=./target/release/fprev
out=outputs/arith/sweeps
mkdir -p "$out"
spread=2048,4096,8192,16384,32768,65536
run() {
  local spec=$1 dtype=$2 sizes=$3 tag=$4
  local name
  name=$(echo "$spec-$dtype-$tag" | tr ':@/' '---')
  local started=$SECONDS
  "$fprev" sweep "$spec" --dtype "$dtype" -n "$sizes" --confirm 200 \
    -o "$out/$name.json" 2>"$out/$name.log"
  local code=$?
  echo "$spec $dtype n = $sizes: exit $code ($((SECONDS - started)) s)"
}
for dtype in f32 f64; do
  for spec in blas:dot ndarray:sum ndarray:dot numpy:sum numpy:dot; do
    run "$spec" "$dtype" 1..1024 small
    run "$spec" "$dtype" "$spread" large
  done
  for spec in blas:gemv blas:gemm ndarray:gemv ndarray:gemm numpy:gemv numpy:gemm; do
    run "$spec" "$dtype" 1..1024:7 small
    run "$spec" "$dtype" 2048,4096,8192,16384 large
  done
done
for spec in jax:sum jax:dot; do
  run "$spec" f32 1..1024 small
  run "$spec" f32 "$spread" large
done
python3 outputs/arith/summary.py > outputs/arith/summary.md
