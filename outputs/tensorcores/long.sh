#!/usr/bin/env bash
# Long GEMMs: each instruction's K-chain at K = 16,384 by `reveal --infer`:
# the formula is explained first where the cache holds none (sizes up to
# 5,001), then its tree predicted at 16,384 and proven with one masked check
# a node, and the model found at the smaller sizes replayed and confirmed
# there. Writes long/NAME.out: what reveal said, its exit status and time,
# and the tree's summary lines (the tree file itself is not kept).
# Usage: bash outputs/tensorcores/long.sh [FPREV_BINARY [PATTERN]]
set -uo pipefail
cd "$(dirname "$0")"
fprev="${1:-../../target/release/fprev}"
pattern="${2:-.}"
mkdir -p long
list=$(cat <<'LIST'
mma:turing:m16n8k8.f32.f16.f16.f32
mma:ada:m16n8k16.f32.f16.f16.f32
mma:blackwell:m16n8k16.f32.bf16.bf16.f32
mma:rtx_blackwell:m16n8k16.f32.f16.f16.f32
mma:hopper:wgmma.m64n8k32.f32.e5m2.e5m2
LIST
)
tree=$(mktemp --suffix=.json)
trap 'rm -f "$tree"' EXIT
grep -E -- "$pattern" <<<"$list" | while read -r spec; do
  name="${spec#mma:}"; name="${name//:/_}"
  start=$(date +%s.%N)
  "$fprev" reveal "$spec" -n 16384 --infer -o "$tree" >"long/$name.out" 2>&1
  echo "exit $? in $(echo "$(date +%s.%N) - $start" | bc) s" >>"long/$name.out"
  "$fprev" render "$tree" --format text 2>/dev/null | grep '^#' >>"long/$name.out"
done
