#!/usr/bin/env bash
# Regenerates outputs/survey/: this machine surveyed in five settings that
# imitate other machines, each compared with the default one.
#
#   cargo build --release && bash outputs/survey/make.sh [SETTING...]
#
# SETTINGs: default (everything found, f32 and f64), then, each against it
# (NumPy and every BLAS, the four ops in f32):
#   prescott    OPENBLAS_CORETYPE=Prescott: OpenBLAS's kernels for an SSE3 CPU
#   sandybridge OPENBLAS_CORETYPE=Sandybridge: AVX without AVX2 and FMA
#   one-thread  OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1: one core
#   blis        FPREV_BLAS=blis: BLIS in place of OpenBLAS behind blas:
#   no-avx2     NPY_DISABLE_CPU_FEATURES=X86_V3: NumPy's own kernels without AVX2 and FMA
#               (NumPy 2.4 names its x86 levels; AVX2,FMA3 would change nothing)
# A setting's survey.json is resumed when present (delete it to start over).
set -uo pipefail
cd "$(dirname "$0")/../.."
fprev=${FPREV:-./target/release/fprev}
out=outputs/survey
settings=("$@")
[ ${#settings[@]} -eq 0 ] && settings=(default prescott sandybridge one-thread blis no-avx2)
unset OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS OMP_NUM_THREADS FPREV_BLAS NPY_DISABLE_CPU_FEATURES
for s in "${settings[@]}"; do
  case $s in
    default) env=() ;;
    prescott) env=(OPENBLAS_CORETYPE=Prescott) ;;
    sandybridge) env=(OPENBLAS_CORETYPE=Sandybridge) ;;
    one-thread) env=(OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1) ;;
    blis) env=(FPREV_BLAS=blis) ;;
    no-avx2) env=(NPY_DISABLE_CPU_FEATURES=X86_V3) ;;
    *) echo "unknown setting: $s" >&2; exit 2 ;;
  esac
  if [ "$s" = default ]; then
    args=()
  else
    args=(--only numpy,blas --dtypes f32)
  fi
  mkdir -p "$out/$s"
  start=$(date +%s.%N)
  env "${env[@]}" "$fprev" survey -o "$out/$s" "${args[@]}" > "$out/$s/summary.txt" 2> "$out/$s/progress.txt" \
    || echo "$s: survey exit $?" >&2
  end=$(date +%s.%N)
  echo "$s: $(echo "$end - $start" | bc) s, survey.json $(stat -c %s "$out/$s/survey.json") bytes, index.html $(stat -c %s "$out/$s/index.html") bytes" >&2
  if [ "$s" != default ]; then
    "$fprev" compare "$out/default" "$out/$s" --html "$out/compare-$s.html" > "$out/compare-$s.txt"
    echo "compare default $s: exit $?" >&2
  fi
done
