#!/usr/bin/env bash
# The porting report across MPI implementations: `fprev survey --ranks P`
# with an Open MPI build and with an MPICH build of fprev, then
# `fprev compare` of the two. Writes outputs/mpi/compare.md and keeps each
# survey.json under outputs/mpi/compare/.
#
#   bash outputs/mpi/compare.sh [OPEN_MPI_FPREV] [MPICH_FPREV]
#
# Two builds of fprev, one per MPI (a binary links one):
#   CARGO_TARGET_DIR=target/mpi cargo build --release --features mpi -p fprev-cli
#   MPICC=mpicc.mpich CARGO_TARGET_DIR=target/mpich \
#     cargo build --release --features mpi -p fprev-cli
set -u
here="$(cd "$(dirname "$0")" && pwd)"
openmpi="${1:-$here/../../target/mpi/release/fprev}"
mpich="${2:-$here/../../target/mpich/release/fprev}"
sizes="1..40,63,64,65,100,127,128,129,255,256,257,511,512,513,1000,1024"
large="4096"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# linked BINARY: the MPI it links, as `fprev probes` says.
linked() {
    "$1" probes | grep -o 'links [^:]*' | head -1 | cut -c7-
}

# formulas DIR: each entry of DIR/survey.json as `spec` and its formula,
# or its status where it has none.
formulas() {
    python3 - "$1/survey.json" <<'PY' | paste -sd ';' | sed 's/;/; /g'
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    print("`%s` %s" % (e["spec"], e.get("formula") or e["status"]))
PY
}

# seconds DIR: the survey's own time, its resumed entries' included.
seconds() {
    python3 -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["seconds"]))' \
        "$1/survey.json"
}

# case NAME P SHAPE ARGS…: both surveys of ARGS on P ranks, M = SHAPE
# elements, compared; a table row, and the comparison kept for below.
case_() {
    local name=$1 p=$2 m=$3
    shift 3
    local dir="$here/compare/$name" verdict
    mkdir -p "$dir"
    for build in openmpi mpich; do
        local bin=$openmpi
        [ "$build" = mpich ] && bin=$mpich
        "$bin" survey "$@" --ranks "$p" --mpi "$build" --dtypes f64 --shape "$m,1" -n "$sizes" \
            --large "$large" --no-draw -o "$dir/$build" >"$work/$build.log" 2>&1 ||
            echo "survey failed: $(tail -1 "$work/$build.log")" >&2
        rm -f "$dir/$build/index.html"
    done
    (cd "$here" && "$openmpi" compare "compare/$name/openmpi" "compare/$name/mpich") \
        >"$dir/compare.txt" 2>&1
    case $? in
        0) verdict="same bits" ;;
        1) verdict="**differ**" ;;
        *) verdict="not compared" ;;
    esac
    echo "| \`$*\` | $p | $m | $(formulas "$dir/openmpi") | $(formulas "$dir/mpich") | $verdict | $(seconds "$dir/openmpi") / $(seconds "$dir/mpich") |"
}

started=$(date +%s)
rows=$(
    for p in 2 3 4 5; do case_ "default-p$p" "$p" 64 --only mpi; done
    for p in 3 4; do
        case_ "rabenseifner-1-p$p" "$p" 1 --spec mpi:allreduce@rabenseifner
        case_ "rabenseifner-64-p$p" "$p" 64 --spec mpi:allreduce@rabenseifner
    done
)
{
    echo "# Open MPI against MPICH: two surveys and their comparison"
    echo
    echo "Made by \`bash outputs/mpi/compare.sh\` with $(linked "$openmpi") and $(linked "$mpich")"
    echo "on $(nproc) cores, ranks past them oversubscribed: two builds of fprev, one per MPI."
    echo "(MPICH's ranks poll while they wait: oversubscribed, its calls take 20-50 ms here, so"
    echo "its surveys stop at 5 ranks, Rabenseifner's at 4; one on 8 ran past 10 minutes.)"
    echo "Each case is \`fprev survey ARGS --ranks P --dtypes f64 --shape M,1\` run by each"
    echo "build (f64, n = $sizes, then $large checked against"
    echo "the formula; element 0 of an M-element vector), then \`fprev compare\` of the two"
    echo "survey.json files (kept in \`compare/CASE/\`, with the comparison's full text)."
    echo "\`--only mpi\` surveys \`mpi:allreduce\` (the library's own choice) and"
    echo "\`mpi:binary-tree\` (fprev's reproducible allreduce)."
    echo
    echo "| survey | P | M | Open MPI's formulas | MPICH's formulas | \`fprev compare\` | seconds (Open MPI / MPICH) |"
    echo "|---|---|---|---|---|---|---|"
    echo "$rows"
    echo
    echo "## Where they differ"
    echo
    for d in "$here"/compare/*/; do
        if grep -q DIFFERENT "$d/compare.txt"; then
            echo "\`$(basename "$d")\`:"
            echo
            echo '```'
            cat "$d/compare.txt"
            echo '```'
            echo
        fi
    done
    echo "This run took $(($(date +%s) - started)) s (surveys resumed from \`compare/\` take none)."
} >"$here/compare.md"
cat "$here/compare.md"
