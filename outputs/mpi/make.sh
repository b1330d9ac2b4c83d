#!/usr/bin/env bash
# outputs/mpi/make.sh: how Open MPI's MPI_Allreduce(SUM) combines the ranks'
# values on P = 2..8 ranks, beside fprev's reproducible reducer.
#
# For every P in $PS and n in {P, $PER * P, $FIXED} (one summand per rank,
# $PER per rank, and one vector of $FIXED for every P), f64, this script
#   1. reveals `mpi:allreduce` (each rank sums its block left to right, then
#      MPI_Allreduce) and `mpi:binary-tree` (the distributed Binary Tree
#      Reduction) with `fprev reveal SPEC -n N --ranks P`, into
#      allreduce/p<P>_n<N>.json and binary-tree/p<P>_n<N>.json;
#   2. renders each as text (.txt: the tree, then its summary) and SVG;
#   3. confirms each with `fprev check FILE SPEC --ranks P --trials $TRIALS`
#      (replay on random inputs, bit for bit against real MPI);
#   4. compares the binary-tree tree with `native:binary-tree` of the same n
#      (`fprev diff`), and each allreduce tree of n = $FIXED with the one on
#      the first P.
# Then it reveals one element past the first ($RING_ROW) of a 64-element
# allreduce with Open MPI's ring algorithm forced (it combines each segment
# of the vector starting at another rank) into ring/row<R>/p4_n4.json.
# Last, examples/mpi_allreduce sums one vector of $BITS_N doubles on 1..8
# ranks, printing the bits of both sums.
# It writes trees.md (every tree and check, the bits) and environment.txt.
#
# Usage: bash outputs/mpi/make.sh  (builds fprev and the example with
# --features mpi; needs mpirun and Graphviz dot; under a minute on 2 cores)

set -u -o pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
FPREV="$ROOT/target/release/fprev"
PS="${PS:-2 3 4 5 6 7 8}"
PER="${PER:-4}"
FIXED="${FIXED:-16}"
TRIALS="${TRIALS:-50}"
RING_ROW="${RING_ROW:-16}"
BITS_N="${BITS_N:-1000000}"
cd "$HERE"
cargo build -q --release --features mpi --bin fprev --example mpi_allreduce || exit 2
started=$(date +%s)
rm -rf allreduce binary-tree ring
mkdir -p allreduce binary-tree ring

# reveal SPEC DIR N P [extra args]: reveal, render, check; prints the check.
reveal() {
  local spec=$1 dir=$2 n=$3 p=$4
  shift 4
  local base="$dir/p${p}_n${n}"
  if ! "$FPREV" reveal "$spec" -n "$n" --ranks "$p" --dtype f64 "$@" -o "$base.json" 2>"$base.err"; then
    echo "reveal failed: $(tail -1 "$base.err")"
    return
  fi
  [ -s "$base.err" ] || rm -f "$base.err"
  "$FPREV" render "$base.json" >"$base.txt"
  "$FPREV" render "$base.json" -o "$base.svg"
  local said
  said=$("$FPREV" check "$base.json" "$spec" --ranks "$p" --dtype f64 --trials "$TRIALS" "$@" 2>&1 | tail -1)
  echo "${said//|/\\|}"
}

{
  echo "# MPI_Allreduce(SUM) of Open MPI and the distributed Binary Tree Reduction, f64"
  echo
  echo "Written by outputs/mpi/make.sh; checks replay each tree on $TRIALS random inputs against real MPI."
  echo
  echo "| P | n | spec | tree | same as | check |"
  echo "|---:|---:|---|---|---|---|"
  for n_of in one many fixed; do
    first=""
    for p in $PS; do
      case $n_of in
        one) n=$p ;;
        many) n=$((PER * p)) ;;
        fixed) n=$FIXED ;;
      esac
      check=$(reveal mpi:allreduce allreduce "$n" "$p")
      tree=$(head -1 "allreduce/p${p}_n${n}.txt")
      same="-"
      if [ "$n_of" = fixed ]; then
        if [ -z "$first" ]; then
          first=$p
        elif "$FPREV" diff "allreduce/p${first}_n${n}.json" "allreduce/p${p}_n${n}.json" >/dev/null 2>&1; then
          same="P = $first"
        else
          same="NOT P = $first"
        fi
      fi
      "$FPREV" reveal native:binary-tree -n "$n" --dtype f64 -o "binary-tree/native_n${n}.json"
      echo "| $p | $n | mpi:allreduce | \`$tree\` | $same | $check |"
      check=$(reveal mpi:binary-tree binary-tree "$n" "$p")
      tree=$(head -1 "binary-tree/p${p}_n${n}.txt")
      same="NOT native:binary-tree"
      "$FPREV" diff "binary-tree/native_n${n}.json" "binary-tree/p${p}_n${n}.json" >/dev/null 2>&1 &&
        same="native:binary-tree"
      echo "| $p | $n | mpi:binary-tree | \`$tree\` | $same | $check |"
    done
  done
  echo
  echo "Ring algorithm forced (OMPI_MCA_coll_tuned_allreduce_algorithm=4), P = 4, n = 4, 64 elements per call:"
  echo
  echo "| row | tree | check |"
  echo "|---:|---|---|"
  for row in 0 "$RING_ROW"; do
    mkdir -p "ring/row$row"
    check=$(OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_allreduce_algorithm=4 \
      reveal mpi:allreduce "ring/row$row" 4 4 --row "$row")
    echo "| $row | \`$(head -1 "ring/row$row/p4_n4.txt")\` | $check |"
  done
  echo
  echo "examples/mpi_allreduce, one vector of $BITS_N doubles on P ranks:"
  echo
  echo '```'
  for p in 1 $PS; do
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      mpirun --oversubscribe -np "$p" "$ROOT/target/release/examples/mpi_allreduce" "$BITS_N"
  done
  echo '```'
} >trees.md
rm -f binary-tree/native_n*.json

{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "fprev: $(git -C "$ROOT" rev-parse --short HEAD)"
  echo "mpirun: $(mpirun --version 2>/dev/null | head -1)"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs (ranks past them oversubscribed)"
  echo "make.sh run time: $(($(date +%s) - started)) s"
} >environment.txt
echo "wrote $HERE/trees.md"
