#!/usr/bin/env bash
# Each instruction's K-loop emitted as code in each language and checked
# against the simulator (fprev emit --check), one line a run in emit.log.
# Usage: bash outputs/tensorcores/emit.sh [FPREV_BINARY]
set -uo pipefail
cd "$(dirname "$0")"
fprev="${1:-../../target/release/fprev}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
: >emit.log
while read -r spec dtype formula langs; do
  for lang in ${langs//,/ }; do
    start=$(date +%s.%N)
    "$fprev" emit "$spec" --dtype "$dtype" --formula "$formula" --lang "$lang" --check \
      --check-sizes 1..64,256,1024 -o "$dir/code.$lang" >"$dir/err" 2>&1
    code=$?
    said=$(grep -E '^fprev: (error|note: Checked)' "$dir/err" | tail -1)
    printf '%s %s: exit %d in %.1f s: %s\n' "$spec" "$lang" "$code" \
      "$(echo "$(date +%s.%N) - $start" | bc)" "$said" >>emit.log
  done
done <<'LIST'
mma:volta:m8n8k4.f32.f16.f16.f32 f16 fused:5 c,cuda,rust,python
mma:ampere:m16n8k16.f32.bf16.bf16.f32 bf16 fused:9 c,cuda,rust,python
mma:ampere:m16n8k16.f16.f16.f16.f16 f16 fused:9 c,cuda,rust,python
mma:hopper:m16n8k16.f32.f16.f16.f32 f16 native:fused:17 c,cuda,rust,python
mma:hopper:m8n8k4.f64.f64.f64.f64 f64 sequential c,rust,python
LIST
