#!/usr/bin/env bash
# Open MPI's allreduce algorithms explained: `fprev explain` of each
# (mpi:allreduce@ALGORITHM, and the library's own choice) on 2 to 16 ranks,
# element 0 and the last element of a vector of 64 (and, on 3, 4, 8 and 16
# ranks, 4,096) doubles: the formula of the order language that gives the
# revealed tree at every size from 1 to 1,000 (257 for 4,096 elements),
# checked at 4,096 (1,000), a size it never saw. Each table is kept in
# outputs/mpi/explain/ as it is made, and reused by a later run. Each formula is compared with the order the algorithm's
# description gives (fprev::mpi::orders, said by a reveal's note).
# Writes outputs/mpi/explain.md.
#
#   [ALGORITHMS="ring …"] bash outputs/mpi/explain.sh [FPREV] [RANKS...]
#
# FPREV must be built with the mpi feature:
#   CARGO_TARGET_DIR=target/mpi cargo build --release --features mpi -p fprev-cli
set -u
here="$(cd "$(dirname "$0")" && pwd)"
fprev="${1:-$here/../../target/mpi/release/fprev}"
shift || true
ranks="${*:-2 3 4 5 6 7 8 9 10 11 12 13 14 15 16}"
sizes="1..40,63,64,65,100,127,128,129,255,256,257,511,512,513,1000"
verify=4096
# Every call of a longer vector sums each of its elements' blocks on every
# rank: fewer, smaller sizes there.
large_count=4096
large_sizes="1..40,63,64,65,100,127,128,129,255,256,257"
large_verify=1000
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
algorithms="${ALGORITHMS:-auto linear nonoverlapping recursive-doubling ring segmented-ring rabenseifner}"

spec() { # ALGORITHM: its spec
    if [ "$1" = auto ]; then echo mpi:allreduce; else echo "mpi:allreduce@$1"; fi
}

# described ALGORITHM P COUNT ROW: the formula the algorithm's description
# gives the element, as a reveal's note says it (none for auto and
# nonoverlapping).
described() {
    local n=$((3 * $2))
    "$fprev" reveal "$(spec "$1")" -n "$n" --ranks "$2" --dtype f64 --shape "$3,1,$n" \
        --row "$4" -o "$work/t.json" 2>&1 >/dev/null |
        sed -n 's/.*as described, gives output [0-9]* native:\(.*\): the revealed tree is it/\1/p'
}

# explained ALGORITHM P COUNT ROW: the explained formula and what was
# checked, or why there is none.
explained() {
    local out sizes=$sizes verify=$verify
    if [ "$3" -gt 64 ]; then sizes=$large_sizes verify=$large_verify; fi
    out=$("$fprev" explain "$(spec "$1")" --ranks "$2" --dtype f64 --shape "$3,1,1" --row "$4" \
        -n "$sizes" --verify "$verify" --no-cache 2>&1)
    local formula
    formula=$(echo "$out" | sed -n 's/^native:\(.*\)/\1/p' | head -1)
    if [ -z "$formula" ]; then
        echo "none: $(echo "$out" | grep -m1 -E 'error|closest|no formula' | cut -c1-90)"
    elif ! echo "$out" | grep -q "its tree is the black box's at n = $verify"; then
        echo "\`$formula\` (NOT checked at $verify)"
    else
        echo "\`$formula\`"
    fi
}

# same_trees A B: whether formulas A and B give the same tree at every
# size from 1 to 40, at 1,000 and at 4,096.
same_trees() {
    local n
    for n in $(seq 1 40) 1000 4096; do
        "$fprev" diff <("$fprev" reveal "native:$1" -n "$n" --dtype f64 --format json 2>/dev/null) \
            <("$fprev" reveal "native:$2" -n "$n" --dtype f64 --format json 2>/dev/null) \
            >/dev/null 2>&1 || return 1
    done
}

# cell ALGORITHM P COUNT ROW: the explained formula, ✓ where it is the
# described one (or gives its trees: `rotate(0, sequential)` is
# `sequential`).
cell() {
    local got want
    got=$(explained "$@")
    want=$(described "$@")
    if [ -n "$want" ] && [ "$got" = "\`$want\`" ]; then
        printf '%s ✓' "$got"
    elif [ -n "$want" ] && [[ "$got" == \`*\` ]] && same_trees "${got//\`/}" "$want"; then
        printf '%s ✓ (the trees of `%s`)' "$got" "$want"
    elif [ -n "$want" ]; then
        printf '%s, NOT described `%s`' "$got" "$want"
    else
        printf '%s' "$got"
    fi
}

# table COUNT RANKS…: one table, a row per P, a column per algorithm,
# written row by row to explain/COUNT.part, then kept as explain/COUNT.md,
# which a later run reuses (delete it to explain afresh).
table() {
    local count=$1 part="$here/explain/$1.part"
    shift
    [ -s "$here/explain/$count.md" ] && return
    mkdir -p "$here/explain"
    {
        printf '| P | element |'
        for a in $algorithms; do printf ' %s |' "$a"; done
        printf '\n|---|---|'
        for _ in $algorithms; do printf -- '---|'; done
        echo
    } >"$part"
    for p in "$@"; do
        for row in 0 $((count - 1)); do
            {
                printf '| %s | %s |' "$p" "$row"
                for a in $algorithms; do printf ' %s |' "$(cell "$a" "$p" "$count" "$row")"; done
                echo
            } >>"$part"
        done
    done
    mv "$part" "$here/explain/$count.md"
}

started=$(date +%s)
table 64 $ranks
table "$large_count" $(for p in 3 4 8 16; do case " $ranks " in *" $p "*) echo "$p" ;; esac; done)
small=$(cat "$here/explain/64.md")
large=$(cat "$here/explain/$large_count.md")
{
    echo "# Open MPI's allreduce algorithms, explained"
    echo
    echo "Made by \`bash outputs/mpi/explain.sh\` with $("$fprev" probes | grep -o 'links [^:]*' | head -1 | cut -c7-)"
    echo "on $(nproc) cores, ranks past them oversubscribed. Each cell is"
    echo "\`fprev explain mpi:allreduce@ALGORITHM --ranks P --dtype f64 --shape COUNT,1,1 --row"
    echo "ELEMENT -n $sizes --verify $verify\`: the formula"
    echo "whose tree is the revealed tree at each of those sizes (each reveal confirmed by"
    echo "replay), then proven the black box's at n = $verify, a size the inference never saw"
    echo "(marked where not). Each rank sums its block left to right (\`LOCAL\` = \`sequential\`)."
    echo "✓: the formula is the one the algorithm's description gives (\`fprev::mpi::orders\`,"
    echo "written from Open MPI's algorithms, as a reveal's note says it), or gives its trees"
    echo "at n = 1..40, 1,000 and 4,096 (\`fprev diff\`); \`auto\` (the"
    echo "library's own choice) and \`nonoverlapping\` (whose reduce Open MPI picks by size)"
    echo "have none. The last element is COUNT - 1."
    echo
    echo "## 64 elements"
    echo
    echo "$small"
    echo
    echo "## $large_count elements"
    echo
    echo "Here \`-n $large_sizes --verify $large_verify\`:"
    echo "each call sums every element's blocks, $large_count of them on every rank."
    echo
    echo "$large"
    echo
    echo "Took $(($(date +%s) - started)) s."
} >"$here/explain.md"
cat "$here/explain.md"
