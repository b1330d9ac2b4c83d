#!/usr/bin/env bash
# Regenerates outputs/arith/sweeps/: every real library op swept over
# n = 1..1024 (every n for sum and dot, every 7th for GEMV and GEMM, whose
# calls sum 64 rows each) and a spread of larger n up to 65,536 (to 16,384
# for GEMV and GEMM, with 64 rows), each size's tree confirmed by 200 random replays bit
# for bit: in plain additions where those reproduce the black box, else
# with the arithmetic model found for that size. A black box that
# multiplies (dot, GEMV, GEMM) is always given a model, its products
# included, and replayed on random x and y. Then summary.md, the table per
# op (summary.py).
#
#   cargo build --release && bash outputs/arith/make.sh [GROUP...]
#
# GROUPs: products (dots, matrices and large_matrices: dot, GEMV, GEMM of
# blas, ndarray, numpy in f32 and f64), sums, jax, torch (PyTorch's CPU
# sum, dot, mv, mm in f32, f16 and bf16 over 1..256 and, for sum and dot,
# a few larger n; set FPREV_TORCH_VENV to a virtualenv holding torch, or
# have it importable by python3). Default: all of them. The table is made
# again after each group; a sweep already made by the same binary is kept.
set -uo pipefail
cd "$(dirname "$0")/../.."
fprev=${FPREV:-./target/release/fprev}
out=outputs/arith/sweeps
mkdir -p "$out"
spread=2048,4096,8192,16384,32768,65536
run() {
  local spec=$1 dtype=$2 sizes=$3 tag=$4
  shift 4
  local name
  name=$(echo "$spec-$dtype-$tag" | tr ':@/' '---')
  # A sweep already made by this binary is kept (a rerun resumes).
  if [ "$out/$name.json" -nt "$fprev" ]; then
    echo "$spec $dtype n = $sizes: kept"
    return
  fi
  local started=$SECONDS
  "$fprev" sweep "$spec" --dtype "$dtype" -n "$sizes" --confirm 200 "$@" \
    -o "$out/$name.json" 2>"$out/$name.log"
  local code=$?
  echo "$spec $dtype n = $sizes: exit $code ($((SECONDS - started)) s)"
}
products() {
  dots
  matrices
  large_matrices
}
dots() {
  for dtype in f32 f64; do
    for spec in blas:dot ndarray:dot numpy:dot; do
      run "$spec" "$dtype" 1..1024 small
      run "$spec" "$dtype" "$spread" large
    done
  done
}
matrices() {
  for dtype in f32 f64; do
    for spec in blas:gemv blas:gemm ndarray:gemv ndarray:gemm numpy:gemv numpy:gemm; do
      run "$spec" "$dtype" 1..1024:7 small
    done
  done
}
large_matrices() {
  # 64 rows (and 64 columns of B for GEMM) at every K: square operands of
  # 16,384 would make each GEMM call 9 TFLOP.
  for dtype in f32 f64; do
    for spec in blas:gemv ndarray:gemv numpy:gemv; do
      run "$spec" "$dtype" 2048,4096,8192,16384 large --shape 64,1,2048
    done
    for spec in blas:gemm ndarray:gemm numpy:gemm; do
      run "$spec" "$dtype" 2048,4096,8192,16384 large --shape 64,64,2048
    done
  done
}
sums() {
  for dtype in f32 f64; do
    for spec in ndarray:sum numpy:sum; do
      run "$spec" "$dtype" 1..1024 small
      run "$spec" "$dtype" "$spread" large
    done
  done
}
jax() {
  for spec in jax:sum jax:dot; do
    run "$spec" f32 1..1024 small
    run "$spec" f32 "$spread" large
  done
}
torch() {
  if [ -n "${FPREV_TORCH_VENV:-}" ]; then
    export VIRTUAL_ENV=$FPREV_TORCH_VENV PATH=$FPREV_TORCH_VENV/bin:$PATH
  fi
  for dtype in f32 f16 bf16; do
    for spec in torch:sum torch:dot; do
      run "$spec" "$dtype" 1..256 small
      run "$spec" "$dtype" 1024,4096,16384 large
    done
    # torch's mv and mm take square operands (n x n): small n only.
    for spec in torch:gemv torch:gemm; do
      run "$spec" "$dtype" 1..256:5 small
    done
  done
}
for group in "${@:-products sums jax torch}"; do
  for g in $group; do
    "$g"
    python3 outputs/arith/summary.py > outputs/arith/summary.md
  done
done
