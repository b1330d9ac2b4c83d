#!/usr/bin/env bash
# Tensor cores through MMA-Sim (pip install mmasim): each instruction's
# K-chain revealed at n = 256 with its arithmetic (NAME.json, NAME.out), then
# checked against the simulator on 1,000 random products (NAME.check). Each
# is given its own input format (fprev's default for an instruction).
# Usage: bash outputs/tensorcores/make.sh [FPREV_BINARY [PATTERN]]: PATTERN
# (grep -E) picks the instructions to redo.
set -uo pipefail
cd "$(dirname "$0")"
fprev="${1:-../../target/release/fprev}"
pattern="${2:-.}"
list=$(cat <<'LIST'
mma:volta:m8n8k4.f32.f16.f16.f32
mma:turing:m16n8k8.f32.f16.f16.f32
mma:ampere:m16n8k16.f32.bf16.bf16.f32
mma:ampere:m16n8k16.f16.f16.f16.f16
mma:ada:m16n8k16.f32.f16.f16.f32
mma:hopper:m16n8k16.f32.f16.f16.f32
mma:hopper:wgmma.m64n8k16.f32.f16.f16
mma:blackwell:m16n8k16.f32.bf16.bf16.f32
mma:rtx_blackwell:m16n8k16.f32.f16.f16.f32
mma:hopper:m8n8k4.f64.f64.f64.f64
mma:cdna1:f32_16x16x16f16
mma:cdna2:f32_32x32x8bf16_1k
mma:cdna3:f32_16x16x16_f16
mma:ampere:m16n8k8.f32.tf32.tf32.f32
mma:cdna3:f32_16x16x8_xf32
mma:ada:m16n8k32.f32.e4m3.e4m3.f32
mma:hopper:wgmma.m64n8k32.f32.e4m3.e4m3
mma:hopper:wgmma.m64n8k32.f32.e5m2.e4m3
mma:hopper:wgmma.m64n8k32.f16.e4m3.e4m3
mma:blackwell:tcgen05.m64n8k32.kind::f8f6f4.f32.e4m3.e4m3
mma:rtx_blackwell:m16n8k32.f16.e4m3.e4m3.f16
LIST
)
grep -E -- "$pattern" <<<"$list" | while read -r spec; do
  name="${spec#mma:}"; name="${name//:/_}"
  start=$(date +%s.%N)
  "$fprev" reveal "$spec" -n 256 -o "$name.json" >"$name.out" 2>&1
  echo "exit $? in $(echo "$(date +%s.%N) - $start" | bc) s" >>"$name.out"
  [ -f "$name.json" ] && "$fprev" check "$name.json" "$spec" --trials 1000 >"$name.check" 2>&1
done
# Will results change from an A100 to an H100? A survey of each simulated GPU
# (one instruction per input type, K = 3..40, each model checked against the
# simulator on 1,000 trials), then compare (exit 1: they differ). Redone when
# PATTERN matches "survey".
if grep -qE -- "$pattern" <<<"survey"; then
  for arch in ampere hopper; do
    start=$(date +%s.%N)
    "$fprev" survey --gpu "$arch" -o "survey_$arch" --fresh --no-draw >"survey_$arch.out" 2>&1
    echo "exit $? in $(echo "$(date +%s.%N) - $start" | bc) s" >>"survey_$arch.out"
  done
  "$fprev" compare survey_ampere survey_hopper >compare_ampere_hopper.txt
  echo "exit $?" >>compare_ampere_hopper.txt
fi
