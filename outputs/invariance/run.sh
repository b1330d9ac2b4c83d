#!/usr/bin/env bash
# Regenerates outputs/invariance/: batch studies of GEMMs and GEMVs (is an
# output's order the same whether M = 1..64 rows are sent?), at rows first,
# middle and last and, for GEMMs, 18 columns; thread and environment studies;
# and README.md's table, with the fprev given (default: the release build).
#
#   bash outputs/invariance/run.sh [FPREV]
set -u
here="$(cd "$(dirname "$0")" && pwd)"
fprev="${1:-$here/../../target/release/fprev}"
cd "$here"
rm -f ./*.txt
table="| study | command | cases (proven) | calls | seconds | outcomes | regimes along M | verdict |\n|---|---|---|---|---|---|---|---|\n"
study() {
    local name="$1"; shift
    local start end code
    start=$(date +%s.%N)
    "$fprev" invariance "$@" > "$name.txt" 2> /dev/null
    code=$?
    end=$(date +%s.%N)
    local head cases proven calls outcomes regimes verdict seconds
    head="$(head -1 "$name.txt")"
    cases="$(echo "$head" | sed -E 's/.*: ([0-9]+) cases \(([0-9]+) proven.*/\1 (\2)/')"
    calls="$(echo "$head" | sed -E 's/.*revealed\), ([0-9]+) calls.*/\1/')"
    seconds="$(printf '%.1f' "$(echo "$end - $start" | bc)")"
    outcomes="$(grep -E '^  \[[A-Z]\] ' "$name.txt" | grep -v '^  \[[A-Z]\] [A-Za-z_]*=' \
        | sed -E 's/ \(([0-9]+ cases?)\)$/ — \1/' | sed 's/|/\\|/g' | paste -sd '#' | sed 's/#/<br>/g')"
    regimes="$(sed -n '/^batch regimes/,/^[a-z]/p' "$name.txt" | grep '^  ' \
        | sed -E 's/^  //' | paste -sd '#' | sed 's/#/<br>/g')"
    verdict="$(grep -E '^(invariant|not invariant)' "$name.txt" | head -1) (exit $code)"
    table+="| [$name]($name.txt) | \`fprev invariance $*\` | $cases | $calls | $seconds | $outcomes | ${regimes:--} | $verdict |\n"
}
for k in 256 1000; do
    for spec in numpy:gemm blas:gemm@openblas blas:gemm@blis blas:gemm@mkl ndarray:gemm; do
        name="batch-$(echo "$spec" | tr ':@' '--')-k$k"
        study "$name" "$spec" -n "$k" --shape "64,64,$k" --batch 1..64
    done
done
for spec in numpy:gemv blas:gemv@openblas blas:gemv@mkl; do
    name="batch-$(echo "$spec" | tr ':@' '--')-k1000"
    study "$name" "$spec" -n 1000 --shape 64,1,1000 --batch 1..64
done
study columns-blas-gemm-blis blas:gemm@blis -n 1000 --shape 16,65,1000 --columns 0,31,32,63,64
study threads-blas-dot-mkl blas:dot@mkl -n 65536 --threads 1,2
study threads-blas-gemv-mkl blas:gemv@mkl -n 4096 --shape 64,1,4096 --threads 1,2 --rows first
study coretype-blas-dot-openblas blas:dot@openblas -n 4096 --threads 1,2 \
    --env OPENBLAS_CORETYPE=Haswell,SkylakeX,Prescott
for k in 256 1000 4096; do
    study "cbwr-blas-gemm-mkl-k$k" blas:gemm@mkl -n "$k" --shape "16,64,$k" --threads 1 \
        --rows first --columns 0,63 --env MKL_CBWR=unset,COMPATIBLE,AVX2,AVX512
done
study cbwr-blas-dot-mkl blas:dot@mkl -n 65536 --threads 1 --env MKL_CBWR=unset,COMPATIBLE,AVX2
study cbwr-batch-blas-gemm-mkl blas:gemm@mkl -n 1000 --shape 64,64,1000 --batch 1,2,4,8,16,32,64 \
    --rows first --columns 0 --env MKL_CBWR=unset,COMPATIBLE
study threads-numpy-sum numpy:sum -n 1000 --env OPENBLAS_NUM_THREADS=1,2
study threads-batch-numpy-gemm numpy:gemm -n 1000 --shape 64,64,1000 --batch 1,2,8,16,64 \
    --rows first --columns 0 --env OPENBLAS_NUM_THREADS=1,2
{
    echo "# Invariance studies"
    echo
    echo "Made by \`bash outputs/invariance/run.sh\` on $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
    echo "($(nproc) cores) with NumPy $(python3 -c 'import numpy; print(numpy.__version__)'),"
    echo "MKL from pip ($(python3 -m pip show mkl 2>/dev/null | sed -n 's/^Version: //p')), Debian's OpenBLAS and BLIS;"
    echo "each study's full output is linked. A batch study reveals \`A @ B\` (A of M x K,"
    echo "B of K x N) at every M from 1 to 64, at rows first, middle and last and (GEMM,"
    echo "N = 64) columns 0..15, 32 and 63; each case is confirmed by replay on 48 random"
    echo "inputs, its tree proven from a neighbouring case's where one was found (\"proven\"),"
    echo "else revealed. An outcome is one order and arithmetic; its formula is one whose"
    echo "tree at this K is the outcome's tree. Seconds are wall time on a shared machine."
    echo
    printf "%b" "$table"
} > README.md
