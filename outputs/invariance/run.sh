#!/usr/bin/env bash
# Regenerates outputs/invariance/: batch studies of GEMMs (is row 0's order
# the same whether M = 1..64 rows are sent?), thread and knob studies, and
# README.md's table, with the fprev given (default: the release build).
#
#   bash outputs/invariance/run.sh [FPREV]
set -u
here="$(cd "$(dirname "$0")" && pwd)"
fprev="${1:-$here/../../target/release/fprev}"
cd "$here"
batches="$(seq -s, 1 64)"
table="| study | command | settings | outcomes | verdict |\n|---|---|---|---|---|\n"
study() {
    local name="$1"; shift
    "$fprev" invariance "$@" > "$name.txt" 2> /dev/null
    local code=$?
    local head settings outcomes verdict
    head="$(head -1 "$name.txt")"
    settings="$(echo "$head" | sed -E 's/.*: ([0-9]+) settings.*/\1/')"
    outcomes="$(echo "$head" | sed -E 's/.*, ([0-9]+) distinct outcomes/\1/')"
    verdict="$(grep -E '^(invariant|not invariant)' "$name.txt" | head -1) (exit $code)"
    local shown="${*//$batches/1,2,…,64}"
    table+="| [$name]($name.txt) | \`fprev invariance $shown\` | $settings | $outcomes | $verdict |\n"
}
for k in 256 1000; do
    for spec in numpy:gemm blas:gemm@openblas blas:gemm@blis blas:gemm@mkl ndarray:gemm; do
        name="batch-$(echo "$spec" | tr ':@' '--')-k$k"
        study "$name" "$spec" -n "$k" --shape "64,64,$k" --batch "$batches"
    done
done
study columns-blas-gemm-blis blas:gemm@blis -n 1000 --shape 16,65,1000 --columns 0,31,32,63,64
study threads-blas-dot-mkl blas:dot@mkl -n 65536 --threads 1,2
study coretype-blas-dot-openblas blas:dot@openblas -n 4096 --threads 1,2 \
    --env OPENBLAS_CORETYPE=Haswell,SkylakeX,Prescott
study cbwr-blas-gemm-mkl blas:gemm@mkl -n 1000 --shape 16,64,1000 --threads 1 \
    --env MKL_CBWR=unset,COMPATIBLE,AVX2,AVX512
study threads-numpy-sum numpy:sum -n 1000 --env OPENBLAS_NUM_THREADS=1,2
{
    echo "# Invariance studies"
    echo
    echo "Made by \`bash outputs/invariance/run.sh\` on the machine named in each file's"
    echo "reveals (see \`fprev survey\` for its facts); each study's full output is linked."
    echo "A batch study reveals row 0, column 0 of \`A @ B\` (A of M x K, B of K x 64) at"
    echo "every M from 1 to 64; an outcome is one order and arithmetic, confirmed by replay."
    echo
    printf "%b" "$table"
} > README.md
