#!/usr/bin/env bash
# Open MPI's allreduce algorithms, each chosen in the spec
# (mpi:allreduce@ALGORITHM, set for the job by --ranks), revealed on 2 to 16
# ranks at n = 3P summands (f64), at message sizes of 64 and 65,536 elements,
# the first and the last element of each; each tree confirmed by replay and
# compared with the order the algorithm's description gives
# (fprev::mpi::orders), or for nonoverlapping, whose reduce Open MPI picks
# by size, named by the formula that gives it. Then the ring element by
# element. Writes outputs/mpi/algorithms.md.
#
#   bash outputs/mpi/algorithms.sh [FPREV] [RANKS...]
#
# FPREV must be built with the mpi feature (cargo build --release --features mpi).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
fprev="${1:-$here/../../target/release/fprev}"
shift || true
ranks="${*:-2 3 4 5 6 7 8 9 10 11 12 13 14 15 16}"
tree="$here/.tree.json"
same() { # FILE FORMULA N: whether the file's tree is the formula's at n
    "$fprev" diff "$1" <("$fprev" reveal "native:$2" -n "$3" --dtype f64 --format json 2> /dev/null) > /dev/null 2>&1
}
cell() { # ALGORITHM P COUNT ROW: one table cell
    local algorithm=$1 p=$2 count=$3 row=$4 n=$((3 * $2)) said formula
    said=$("$fprev" reveal "mpi:allreduce@$algorithm" -n "$n" --ranks "$p" --dtype f64 \
        --shape "$count,1,$n" --row "$row" -o "$tree" 2>&1 >/dev/null)
    if [ $? -ne 0 ]; then
        printf 'failed: %s' "$(echo "$said" | tail -1)"
        return
    fi
    formula=$(echo "$said" | sed -n 's/.*as described, gives output [0-9]* native:\(.*\): the revealed tree is it/\1/p')
    if [ -n "$formula" ]; then
        printf '`%s` ✓' "$formula"
        return
    fi
    if echo "$said" | grep -q "as described"; then
        printf 'NOT as described: `%s`' "$("$fprev" render "$tree" --format text | head -1)"
        return
    fi
    for outer in "fanout(2)" binary-tree reverse doubling sequential; do
        if same "$tree" "split($p, sequential, $outer)" "$n"; then
            printf '`split(%s, sequential, %s)`' "$p" "$outer"
            return
        fi
    done
    printf 'no formula tried: `%s`' "$("$fprev" render "$tree" --format text | head -1)"
}
{
    echo "# Open MPI's allreduce algorithms, revealed"
    echo
    echo "Made by \`bash outputs/mpi/algorithms.sh\` with $(mpirun --version | head -1) on"
    echo "$(nproc) cores (ranks past them oversubscribed). Each cell is the order of one element"
    echo "of a vector of 64 or 65,536 doubles at n = 3P summands (each rank's block summed left"
    echo "to right), revealed with \`fprev reveal mpi:allreduce@ALGORITHM -n 3P --ranks P"
    echo "--dtype f64 --shape COUNT,1,3P --row ELEMENT\` and confirmed by replay on 48 random"
    echo "inputs. ✓: the tree is the order the algorithm's description gives"
    echo "(\`fprev::mpi::orders\`, written from Open MPI's algorithms, not from reveals; the"
    echo "reveal's own note says so). \`nonoverlapping\` has no one described order (its reduce"
    echo "is Open MPI's choice by size): its cells name the formula whose tree at n = 3P it is."
    for algorithm in linear nonoverlapping recursive-doubling ring segmented-ring rabenseifner; do
        echo
        echo "## $algorithm"
        echo
        echo "| P | 64 elements: element 0 | element 63 | 65,536 elements: element 0 | element 65,535 |"
        echo "|---|---|---|---|---|"
        for p in $ranks; do
            printf '| %s | %s | %s | %s | %s |\n' "$p" \
                "$(cell "$algorithm" "$p" 64 0)" "$(cell "$algorithm" "$p" 64 63)" \
                "$(cell "$algorithm" "$p" 65536 0)" "$(cell "$algorithm" "$p" 65536 65535)"
        done
    done
    echo
    echo "The ring gives each element the order of its chunk (P = 4, 64 elements in chunks"
    echo "of 16, n = 8: ranks' sums \`r0 = (0+1)\` … \`r3 = (6+7)\`), starting at that chunk's rank:"
    echo
    echo "| element | tree | the formula of its chunk | its tree is the reveal's |"
    echo "|---|---|---|---|"
    for row in 0 15 16 31 32 47 48 63; do
        "$fprev" reveal mpi:allreduce@ring -n 8 --ranks 4 --dtype f64 --row "$row" -o "$tree" > /dev/null 2>&1
        shape=$("$fprev" render "$tree" --format text | head -1)
        formula="split(4, sequential, rotate($((row / 16)), sequential))"
        if same "$tree" "$formula" 8; then verdict=yes; else verdict=NO; fi
        echo "| $row | \`$shape\` | \`$formula\` | $verdict |"
    done
    rm -f "$tree"
} > "$here/algorithms.md"
cat "$here/algorithms.md"
