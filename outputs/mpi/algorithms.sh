#!/usr/bin/env bash
# Open MPI's allreduce algorithms, each chosen in the spec
# (mpi:allreduce@ALGORITHM, set for the job by --ranks), revealed on 2 to 8
# ranks at n = 3P summands (f64, element 0 of a 64-element vector), and the
# ring element by element. Writes outputs/mpi/algorithms.md.
#
#   bash outputs/mpi/algorithms.sh [FPREV]
#
# FPREV must be built with the mpi feature (cargo build --release --features mpi).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
fprev="${1:-$here/../../target/release/fprev}"
algorithms="auto linear nonoverlapping recursive-doubling ring segmented-ring rabenseifner"
{
    echo "# Open MPI's allreduce algorithms, revealed"
    echo
    echo "Made by \`bash outputs/mpi/algorithms.sh\` with $(mpirun --version | head -1) on"
    echo "$(nproc) cores (ranks past them oversubscribed). Each cell is the tree of element 0"
    echo "at n = 3P summands in f64 (each rank's block summed left to right), confirmed by"
    echo "replay; the line under it names the order where a reference order gives it."
    echo
    printf "| P |"
    for a in $algorithms; do printf " %s |" "$a"; done
    echo
    printf "|---|"
    for _ in $algorithms; do printf -- "---|"; done
    echo
    for p in 2 3 4 5 6 7 8; do
        printf "| %s |" "$p"
        for a in $algorithms; do
            spec="mpi:allreduce@$a"
            [ "$a" = auto ] && spec="mpi:allreduce"
            out=$("$fprev" reveal "$spec" -n $((3 * p)) --ranks "$p" --dtype f64 2>&1)
            tree=$(echo "$out" | head -1)
            named=$(echo "$out" | sed -n 2p | sed 's/^# //; s/; depth.*//')
            case "$named" in depth*) named="" ;; esac
            printf " \`%s\` %s |" "$tree" "$named"
        done
        echo
    done
    echo
    echo "The ring gives each element the order of its chunk (P = 4, 64 elements in chunks"
    echo "of 16, n = 8: ranks' sums \`r0 = (0+1)\` … \`r3 = (6+7)\`), starting at that chunk's rank:"
    echo
    echo "| element | tree | the formula of its chunk | its tree is the reveal's |"
    echo "|---|---|---|---|"
    for row in 0 15 16 31 32 47 48 63; do
        "$fprev" reveal mpi:allreduce@ring -n 8 --ranks 4 --dtype f64 --row "$row" -o "$here/.ring.json" > /dev/null 2>&1
        tree=$("$fprev" render "$here/.ring.json" --format text | head -1)
        formula="split(4, sequential, rotate($((row / 16)), sequential))"
        if "$fprev" diff "$here/.ring.json" <("$fprev" reveal "native:$formula" -n 8 --dtype f64 --format json 2> /dev/null) > /dev/null 2>&1; then
            same=yes
        else
            same=NO
        fi
        echo "| $row | \`$tree\` | \`$formula\` | $same |"
    done
    rm -f "$here/.ring.json"
} > "$here/algorithms.md"
cat "$here/algorithms.md"
