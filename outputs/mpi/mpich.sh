#!/usr/bin/env bash
# MPICH's allreduce algorithms beside Open MPI's, and where the two
# libraries' default allreduce trees differ. Writes outputs/mpi/mpich.md.
#
#   bash outputs/mpi/mpich.sh [OPEN_MPI_FPREV] [MPICH_FPREV]
#
# Two builds of fprev, one per MPI (a binary links one):
#   cargo build --release --features mpi -p fprev-cli                 # Open MPI
#   MPICC=mpicc.mpich CARGO_TARGET_DIR=target-mpich \
#     cargo build --release --features mpi -p fprev-cli               # MPICH
set -u
here="$(cd "$(dirname "$0")" && pwd)"
openmpi="${1:-$here/../../target/release/fprev}"
mpich="${2:-$here/../../target-mpich/release/fprev}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# reveal BINARY MPI SPEC P N COUNT ROW FILE: the tree of element ROW of a
# COUNT-element vector, N summands on P ranks, in f64; prints the tree and
# a mark: confirmed by replay, or why not.
reveal() {
    local out
    out=$("$1" reveal "$3" -n "$5" --ranks "$4" --mpi "$2" --dtype f64 --shape "$6,1,$5" \
        --row "$7" -o "$8" 2>&1)
    if [ $? -ne 0 ] || [ ! -s "$8" ]; then
        echo "fails: $(echo "$out" | grep -m1 'error' | cut -c1-100)"
        return
    fi
    local tree confirmed
    tree=$("$1" render "$8" --format text | head -1)
    confirmed=$(python3 -c 'import json, sys
c = json.load(open(sys.argv[1])).get("confirmation") or {}
print("" if c.get("trials") and c.get("passed") == c["trials"] else " (NOT confirmed)")' "$8")
    echo "\`$tree\`$confirmed"
}

# cell BINARY MPI SPEC P: element 0 and element 63 of 64 at n = 3P; one
# tree when they are the same.
cell() {
    local n=$((3 * $4)) first last
    first=$(reveal "$1" "$2" "$3" "$4" "$n" 64 0 "$work/first.json")
    last=$(reveal "$1" "$2" "$3" "$4" "$n" 64 63 "$work/last.json")
    if [ "$first" = "$last" ]; then
        echo "$first"
    else
        echo "0: $first; 63: $last"
    fi
}

# linked BINARY: the MPI it links, as `fprev probes` says.
linked() {
    "$1" probes | grep -o 'links [^:]*' | head -1 | cut -c7-
}

mpich_algorithms="auto recursive-doubling reduce-scatter-allgather smp nb"
openmpi_algorithms="auto recursive-doubling rabenseifner ring"
started=$(date +%s)
{
    echo "# MPICH's allreduce algorithms, and MPICH against Open MPI"
    echo
    echo "Made by \`bash outputs/mpi/mpich.sh\` with $(linked "$mpich")"
    echo "(Debian \`mpich\`, ch4:ucx, Hydra's \`mpiexec.mpich\`) and $(linked "$openmpi")"
    echo "(\`mpirun\`) on $(nproc) cores, ranks past them oversubscribed: two builds of fprev,"
    echo "one per MPI. Each tree is confirmed by replay (reveal's default check: 48 random"
    echo "inputs, the same bits) unless marked."
    echo
    echo "## Each algorithm, on 2 to 8 ranks"
    echo
    echo "\`mpi:allreduce@ALGORITHM\` at n = 3P summands in f64 (each rank's block summed left"
    echo "to right), element 0 and element 63 of a 64-element vector (\`--shape 64,1,3P --row"
    echo "R\`): one tree where both have it, else each. MPICH 4.0.2's algorithms are its"
    echo "\`MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM\` values (\`recursive_doubling\`,"
    echo "\`reduce_scatter_allgather\`, \`smp\`, \`nb\`; fprev sets"
    echo "\`MPIR_CVAR_DEVICE_COLLECTIVES=none\` with it); \`auto\` is no algorithm named."
    echo
    printf "| P |"
    for a in $mpich_algorithms; do printf " MPICH %s |" "$a"; done
    for a in $openmpi_algorithms; do printf " Open MPI %s |" "$a"; done
    echo
    printf "|---|"
    for _ in $mpich_algorithms $openmpi_algorithms; do printf -- "---|"; done
    echo
    for p in 2 3 4 5 6 7 8; do
        printf "| %s |" "$p"
        for a in $mpich_algorithms; do
            spec="mpi:allreduce@$a"
            [ "$a" = auto ] && spec="mpi:allreduce"
            printf " %s |" "$(cell "$mpich" mpich "$spec" "$p")"
        done
        for a in $openmpi_algorithms; do
            spec="mpi:allreduce@$a"
            [ "$a" = auto ] && spec="mpi:allreduce"
            printf " %s |" "$(cell "$openmpi" openmpi "$spec" "$p")"
        done
        echo
    done
    echo
    echo "## The default allreduce: Open MPI against MPICH"
    echo
    echo "\`mpi:allreduce\` with no algorithm named, each library choosing its own, at n = 3P"
    echo "(f64), element 0 and the last element of a C-element vector (\`--shape C,1,3P\`);"
    echo "\`fprev diff\` of the two libraries' tree files (modulo child order)."
    echo
    echo "| C | P | element | MPICH | Open MPI | \`fprev diff\` |"
    echo "|---|---|---|---|---|---|"
    for count in 64 131072; do
        for p in 2 3 4 5 6 7 8; do
            n=$((3 * p))
            for row in 0 $((count - 1)); do
                a=$(reveal "$mpich" mpich mpi:allreduce "$p" "$n" "$count" "$row" "$work/mpich.json")
                b=$(reveal "$openmpi" openmpi mpi:allreduce "$p" "$n" "$count" "$row" "$work/openmpi.json")
                if "$openmpi" diff -q "$work/mpich.json" "$work/openmpi.json"; then
                    same="same"
                elif [ $? -eq 1 ]; then
                    same="**differ**"
                else
                    same="not compared"
                fi
                echo "| $count | $p | $row | $a | $b | $same |"
            done
        done
    done
    echo
    echo "Took $(($(date +%s) - started)) s."
} > "$here/mpich.md"
cat "$here/mpich.md"
