#!/usr/bin/env bash
# Where an MPI library's allreduce changes its order with the message size:
# Open MPI's own choice (auto) and `nonoverlapping` (a reduce it picks by
# size, then a broadcast), or with an fprev built for MPICH, MPICH's own
# choice and `smp` (a reduce it picks by size), on 2 to 16 ranks, `fprev sweep --count` reveals the
# first and the last element of vectors of 1, 2, 4, ..., 2^18 doubles
# (n = P summands, one a rank), bisecting between two counts whose orders
# differ down to the exact count. Writes outputs/mpi/regimes.md (Open MPI)
# or outputs/mpi/regimes-mpich.md (MPICH).
#
#   bash outputs/mpi/regimes.sh [FPREV] [RANKS...]
#
# FPREV must be built with the mpi feature (cargo build --release --features mpi).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
fprev="${1:-$here/../../target/release/fprev}"
shift || true
ranks="${*:-2 3 4 5 6 7 8 9 10 11 12 13 14 15 16}"
library="Open MPI"; algorithms="auto nonoverlapping"; out="$here/regimes.md"
version=$(mpirun --version | head -1)
if "$fprev" probes 2>/dev/null | grep -q "links MPICH"; then
    library="MPICH"; algorithms="auto smp"; out="$here/regimes-mpich.md"
    version="MPICH $(mpiexec.mpich --version | sed -n 's/^ *Version: *//p' | head -1)"
fi
counts=$(python3 -c "print(','.join(str(2**i) for i in range(19)))")
{
    echo "# $library's allreduce across message sizes"
    echo
    echo "Made by \`bash outputs/mpi/regimes.sh\` with $version on"
    echo "$(nproc) cores (ranks past them oversubscribed). For each P, \`fprev sweep SPEC --ranks P"
    echo "-n P --dtype f64 --count 1,2,4,...,262144 --confirm 8\`: the first and the last element"
    echo "of the vector revealed at each count (each tree confirmed by replay), and the counts"
    echo "between two whose orders differ revealed by bisection down to the exact switch."
    echo "Counts are elements of 8 bytes. A regime that starts and ends between two powers of"
    echo "two of one order would not be seen."
    for algorithm in $algorithms; do
        spec="mpi:allreduce@$algorithm"
        [ "$algorithm" = auto ] && spec="mpi:allreduce"
        echo
        echo "## \`$spec\`"
        for p in $ranks; do
            started=$(date +%s)
            out=$("$fprev" sweep "$spec" --ranks "$p" -n "$p" --dtype f64 --count "$counts" --confirm 8 2>&1)
            status=$?
            echo
            echo "### P = $p (exit $status, $(($(date +%s) - started)) s)"
            echo
            echo '```'
            echo "$out" | sed -n '/distinct outcomes/,$p'
            echo '```'
        done
    done
} > "$out"
