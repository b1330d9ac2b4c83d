#!/usr/bin/env bash
# Side by side with the published FPRev tool, in one run: NumPy's float32 sum
# revealed at 16,384 summands (the engine's own time, and the whole process,
# with a cold and a warm cache of formulas for --infer), and --infer at 2^20,
# 2^24 and 2^27 (and JAX's sum at 2^20) with peak memory. Writes
# outputs/scale/README.md.
#
#   bash outputs/scale/run.sh [FPREV] [FPREV_REFERENCE_DIR]
#
# FPREV_REFERENCE_DIR is a checkout of https://github.com/peichenxie/FPRev (its
# fprev.py, with NumPy's sum wrapped as in its experiments); without it the
# reference column is left out. Medians of 3 runs.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
fprev="${1:-$here/../../target/release/fprev}"
reference="${2:-}"
python="${PYTHON:-python3}"
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT
export FPREV_CACHE_DIR="$cache"
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# Wall seconds and peak KiB of a command, "S KIB".
measure() {
    /usr/bin/time -f "%e %M" -o "$cache/time" "$@" > "$cache/out" 2> /dev/null
    cat "$cache/time"
}
rows=""
row() { rows+="| $1 | $2 | $3 | $4 |\n"; }

# fprev's engine at 16,384 (stats.seconds of the reveal, no confirmation):
# as it ships (the known formula's tree proven), and revealing afresh.
engine() {
    for _ in 1 2 3; do
        "$fprev" reveal numpy:sum -n 16384 --format json --timings --confirm 0 "$@" 2> /dev/null |
            "$python" -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["stats"]["seconds"], d["stats"]["calls"])'
    done
}
shipped=$(engine)
engine_s=$(printf '%.3f' "$(echo "$shipped" | cut -d' ' -f1 | median)")
row "numpy:sum f32, n = 16,384" "fprev's engine (\`reveal --confirm 0\`, stats.seconds): the known formula's tree proven" \
    "$engine_s s" "$(echo "$shipped" | head -1 | cut -d' ' -f2) calls"
afresh=$(engine --afresh)
afresh_s=$(printf '%.3f' "$(echo "$afresh" | cut -d' ' -f1 | median)")
row "numpy:sum f32, n = 16,384" "fprev's engine revealing afresh (\`--afresh\`)" \
    "$afresh_s s" "$(echo "$afresh" | head -1 | cut -d' ' -f2) calls"
whole=$(for _ in 1 2 3; do measure "$fprev" reveal numpy:sum -n 16384; done)
row "numpy:sum f32, n = 16,384" "whole process, \`fprev reveal numpy:sum -n 16384\` (confirmed, arithmetic)" \
    "$(echo "$whole" | cut -d' ' -f1 | median) s" "$(echo "$whole" | cut -d' ' -f2 | median) KiB"
rm -rf "${cache:?}"/*.json
cold=$(measure "$fprev" reveal numpy:sum -n 16384 --infer)
row "numpy:sum f32, n = 16,384" "whole process, \`--infer\`, cold cache (explains 60 sizes first)" \
    "$(echo "$cold" | cut -d' ' -f1) s" "$(echo "$cold" | cut -d' ' -f2) KiB"
warm=$(for _ in 1 2 3; do measure "$fprev" reveal numpy:sum -n 16384 --infer; done)
warm_s=$(echo "$warm" | cut -d' ' -f1 | median)
row "numpy:sum f32, n = 16,384" "whole process, \`--infer\`, warm cache (proves the cached formula)" \
    "$warm_s s" "$(echo "$warm" | cut -d' ' -f2 | median) KiB"
if [ -n "$reference" ] && [ -f "$reference/fprev.py" ]; then
    ref=$(for _ in 1 2 3; do
        PYTHONPATH="$reference:$reference/experiments" "$python" - <<'PY'
import time
from fprev import fprev
from accumimpls.numpy import NumpySum
impl = NumpySum(16384)
start = time.perf_counter()
fprev(impl)
print(time.perf_counter() - start)
PY
    done)
    ref_s=$(printf '%.3f' "$(echo "$ref" | median)")
    row "numpy:sum f32, n = 16,384" "the FPRev reference, \`fprev(NumpySum(16384))\` in-process" "$ref_s s" ""
    refwhole=$(for _ in 1 2 3; do
        /usr/bin/time -f "%e" -o "$cache/t" env PYTHONPATH="$reference:$reference/experiments" \
            "$python" -c 'from fprev import fprev; from accumimpls.numpy import NumpySum; fprev(NumpySum(16384))' \
            > /dev/null 2>&1
        cat "$cache/t"
    done)
    refwhole_s=$(echo "$refwhole" | median)
    row "numpy:sum f32, n = 16,384" "the FPRev reference, whole process" "$refwhole_s s" ""
    ratios="Engine against the reference's in-process time: $(echo "$ref_s / $engine_s" | bc -l | xargs printf '%.1f')x as it ships, $(echo "$ref_s / $afresh_s" | bc -l | xargs printf '%.1f')x revealing afresh; whole process with a warm cache against the reference's whole process: $(echo "$refwhole_s / $warm_s" | bc -l | xargs printf '%.1f')x."
else
    ratios="The reference was not run (give its checkout as the second argument)."
fi
# Past 65,536 nothing is proven: the prediction is confirmed by 48 replays
# streamed from the formula, no node built (docs/ALGORITHMS.md, Streamed
# predictions). Medians of 3 to 2^24, one run at 2^27.
for n in 1048576 16777216 134217728; do
    runs=3
    [ "$n" -gt 16777216 ] && runs=1
    t=$(for _ in $(seq $runs); do measure "$fprev" reveal numpy:sum -n "$n" --infer -o "$cache/tree.json"; done)
    size=$(stat -c %s "$cache/tree.json" 2> /dev/null || echo 0)
    confirmed=$("$python" -c 'import json,sys; c=json.load(open(sys.argv[1]))["confirmation"]; print(c["passed"], "of", c["trials"])' "$cache/tree.json")
    row "numpy:sum f32, n = $n" "\`reveal --infer\` (warm cache; $runs run(s)), tree file $size bytes, replays matched: $confirmed" \
        "$(echo "$t" | cut -d' ' -f1 | median) s" "$(echo "$t" | cut -d' ' -f2 | median) KiB"
done
# JAX's sum: its compensated steps need the nodes, which 2^20 fits.
"$fprev" reveal jax:sum -n 1048576 --infer > /dev/null 2>&1
t=$(for _ in 1 2 3; do measure "$fprev" reveal jax:sum -n 1048576 --infer; done)
row "jax:sum f32, n = 1048576" "\`reveal --infer\` (warm cache; 3 runs), confirmed on the nodes (compensated steps)" \
    "$(echo "$t" | cut -d' ' -f1 | median) s" "$(echo "$t" | cut -d' ' -f2 | median) KiB"
{
    echo "# Scale: reveals, predictions and the reference, side by side"
    echo
    echo "Made by \`bash outputs/scale/run.sh\` on $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
    echo "($(nproc) cores), NumPy $("$python" -c 'import numpy; print(numpy.__version__)'); medians of 3 where"
    echo "three runs are named, one run otherwise; wall seconds and peak resident memory."
    echo
    echo "| black box | what | time | calls or peak memory |"
    echo "|---|---|---|---|"
    printf "%b" "$rows"
    echo
    echo "$ratios"
} > "$here/README.md"
cat "$here/README.md"
