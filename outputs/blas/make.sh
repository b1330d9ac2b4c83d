#!/usr/bin/env bash
# outputs/blas/make.sh: three BLAS libraries side by side, each loaded at run
# time by fprev (blas:OP@LIB): OpenBLAS (openblas), BLIS (blis) and the
# Netlib reference BLAS (refblas).
#
# For every library, op and size below it runs, from inside outputs/blas/,
#
#   fprev reveal blas:OP@LIB -n N --dtype T [--shape 16,4,N] \
#         --mismatch-out LIB-OP-T-N.mismatch.json
#
# twice: once printing text (kept as LIB-OP-T-N.txt: the tree and its '#'
# summary lines) and once with -o LIB-OP-T-N.json (the tree file). Both exit
# statuses are recorded (0 confirmed, 5 revealed but its replay differs in
# bits). Cases:
#
#   dot   f64 n = 64, 1000; f32 n = 100, 1000
#   gemv  f64 n = 64, 1000   (--shape 16,4,n: A is 16 x n, 16 rows)
#   gemm  f64 n = 64, 1000   (--shape 16,4,n: A is 16 x n, B is n x 4)
#
# For n = 64 f64 it draws the tree: fprev render LIB-OP-f64-64.json -o ...svg
# (an SVG over $SVG_LIMIT bytes is deleted and recorded as skipped).
# Then `fprev diff` between each pair of libraries for each op/dtype/n.
#
# Writes (in outputs/blas/, next to the older dot/ gemv/ gemm/ folders of
# outputs/make.sh, which it does not touch):
#   LIB-OP-T-N.{json,txt}         trees
#   LIB-OP-T-N.svg                drawings (n = 64, f64)
#   LIB-OP-T-N.mismatch.json      the first input whose bits differ (exit 5 only)
#   summary.tsv                   one row per case: '#' lines, exit statuses, stderr
#   diffs.tsv                     one row per pair: equal / where the trees part
#   tables.md                     both as Markdown tables (README.md quotes them)
#   environment.txt               CPU, library packages, fprev's notes naming the files
#
# Usage (from anywhere):
#   bash outputs/blas/make.sh
#   FPREV=/path/to/fprev bash outputs/blas/make.sh
# FPREV defaults to target/release/fprev of the repository this file is in;
# when that is missing the script runs `cargo run --release --` instead.
# Needs: the packages libopenblas0-pthread, libblis4-openmp (or -pthread),
# libblas3; Graphviz `dot` for the SVGs.

set -u -o pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SVG_LIMIT="${SVG_LIMIT:-500000}"
LIBS="openblas blis refblas"

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
if [ -n "${FPREV:-}" ]; then
    BIN="$FPREV"
elif [ -x "$ROOT/target/release/fprev" ]; then
    # One fixed copy, so a rebuild during the run cannot mix two builds.
    cp "$ROOT/target/release/fprev" "$TMP/fprev"
    BIN="$TMP/fprev"
else
    BIN=""
fi
fprev() {
    if [ -n "$BIN" ]; then
        "$BIN" "$@"
    else
        cargo run -q --release --manifest-path "$ROOT/Cargo.toml" -- "$@"
    fi
}

cd "$HERE" || exit 1
# Remove this script's old outputs (never the dot/ gemv/ gemm/ folders).
for lib in $LIBS; do
    rm -f "$lib"-*.json "$lib"-*.txt "$lib"-*.svg
done
rm -f summary.tsv diffs.tsv tables.md environment.txt fprev-mismatch.json

# cases: OP DTYPE N
CASES="dot f64 64
dot f64 1000
dot f32 100
dot f32 1000
gemv f64 64
gemv f64 1000
gemm f64 64
gemm f64 1000"

cell() { tr '\t\n' '  ' | sed 's/  *$//'; }

printf 'lib\top\tdtype\tn\tshape_words\tcost\tconfirmation\texit_text\texit_json\ttext_vs_json\tsvg\tstderr\n' >summary.tsv
while read -r op dtype n; do
    for lib in $LIBS; do
        base="$lib-$op-$dtype-$n"
        args=(reveal "blas:$op@$lib" -n "$n" --dtype "$dtype" --timeout 120
              --mismatch-out "$base.mismatch.json")
        case $op in gemv|gemm) args+=(--shape "16,4,$n") ;; esac
        fprev "${args[@]}" >"$base.txt" 2>"$TMP/err.txt"
        rc_text=$?
        fprev "${args[@]}" -o "$base.json" 2>>"$TMP/err.txt"
        rc_json=$?
        hash_lines="$(grep '^#' "$base.txt")"
        shape="$(printf '%s\n' "$hash_lines" | sed -n 1p | sed 's/^# //')"
        cost="$(printf '%s\n' "$hash_lines" | sed -n 2p | sed 's/^# //')"
        conf="$(printf '%s\n' "$hash_lines" | sed -n 3p | sed 's/^# //')"
        # the two runs should reveal one tree: fprev diff reads the text form too
        if fprev diff "$base.txt" "$base.json" >/dev/null 2>&1; then same="equal"; else same="DIFFERENT"; fi
        svg="-"
        if [ "$dtype" = f64 ] && [ "$n" = 64 ] && [ -f "$base.json" ]; then
            if fprev render "$base.json" -o "$base.svg" 2>>"$TMP/err.txt"; then
                size=$(stat -c %s "$base.svg")
                if [ "$size" -gt "$SVG_LIMIT" ]; then
                    rm -f "$base.svg"; svg="skipped ($size bytes)"
                else
                    svg="$base.svg ($size bytes)"
                fi
            else
                svg="render failed"
            fi
        fi
        # stderr of both runs, each distinct line once
        errs="$(awk '!seen[$0]++' "$TMP/err.txt" | cell)"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$lib" "$op" "$dtype" "$n" \
            "$shape" "$cost" "$conf" "$rc_text" "$rc_json" "$same" "$svg" "$errs" >>summary.tsv
        echo "$base: exit $rc_text/$rc_json; $shape; $conf" >&2
    done
done <<<"$CASES"

printf 'op\tdtype\tn\ta\tb\texit\tdiff\n' >diffs.tsv
while read -r op dtype n; do
    for pair in openblas,blis openblas,refblas blis,refblas; do
        a="${pair%,*}" b="${pair#*,}"
        fa="$a-$op-$dtype-$n.json" fb="$b-$op-$dtype-$n.json"
        d="$(fprev diff "$fa" "$fb" 2>&1)"
        drc=$?
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$op" "$dtype" "$n" "$a" "$b" "$drc" \
            "$(printf '%s' "$d" | cell)" >>diffs.tsv
    done
done <<<"$CASES"

{
    echo "# environment of outputs/blas (written by make.sh)"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "fprev: $(fprev --version 2>&1) at $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)"
    echo "CPUs: $(nproc)"
    lscpu | grep 'Model name'
    dpkg -s libopenblas0-pthread libblis4-pthread libblis4-openmp libblas3 2>/dev/null \
        | grep -E '^(Package|Version)'
    echo "fprev's notes naming the loaded library files:"
    cut -f12 summary.tsv | tail -n +2 | grep -o 'fprev: note: blas:[a-z]*@[a-z]*: [^)]*)\?' \
        | sed 's/blas:[a-z]*@/blas:OP@/' | awk '!seen[$0]++'
} >environment.txt

python3 - <<'EOF'
import csv
import re


def leaves_of(t):
    return [int(x) for x in re.findall(r"\d+", t)]


def span(ls):
    """Leaves as a progression, e.g. '0,4,…,60' (16)."""
    ls = sorted(ls)
    if len(ls) <= 3:
        return "{" + ",".join(map(str, ls)) + "}"
    d = ls[1] - ls[0]
    if all(b - a == d for a, b in zip(ls, ls[1:])):
        return "{" + f"{ls[0]},{ls[1]},…,{ls[-1]}" + "}"
    return "{" + f"{ls[0]},{ls[1]},{ls[2]},…" + f"}} ({len(ls)} leaves)"


def describe(t):
    """A long subtree '(X+Y)' as 'leaves-of-X + leaves-of-Y' (no recursion: trees are deep)."""
    depth = 0
    for i, ch in enumerate(t):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "+" and depth == 1:
            return f"{span(leaves_of(t[1:i]))} + {span(leaves_of(t[i + 1:-1]))}"
    return t[:40] + "…"


rows = list(csv.DictReader(open("summary.tsv"), delimiter="\t"))
diffs = list(csv.DictReader(open("diffs.tsv"), delimiter="\t"))
out = []
for op in ("dot", "gemv", "gemm"):
    out.append(f"### {op}\n")
    out.append("| library | dtype | n | shape | queries / calls | confirmed | exit |")
    out.append("|---|---|---|---|---|---|---|")
    for r in rows:
        if r["op"] != op:
            continue
        shape = r["shape_words"]
        cost = r["cost"].split(": ", 1)[-1]
        q = cost.split(" queries")[0]
        calls = cost.split(" inputs, ")[-1].split(" calls")[0] if " calls" in cost else "?"
        c = r["confirmation"]
        conf = "confirmed" if c.startswith("confirmed") else ("NOT CONFIRMED" if c.startswith("NOT CONFIRMED") else c)
        ex = r["exit_text"] if r["exit_text"] == r["exit_json"] else f"{r['exit_text']} (text) / {r['exit_json']} (json)"
        if r["text_vs_json"] != "equal":
            ex += " (the text and JSON runs revealed different trees)"
        out.append(f"| {r['lib']} | {r['dtype']} | {r['n']} | {shape} | {q} / {calls} | {conf} | {ex} |")
    out.append("")
out.append("### pairwise `fprev diff`\n")
out.append("| op | dtype | n | A | B | result |")
out.append("|---|---|---|---|---|---|")
for d in diffs:
    if d["exit"] == "0":
        res = "equal"
    elif d["exit"] == "1":
        part = d["diff"].replace("different: the trees part at", "").strip()
        # "A.json: SUBTREE B.json: SUBTREE"; long subtrees cut (whole in diffs.tsv)
        bits = re.split(r"\s*(\S+\.json): ", " " + part)[1:]
        sub = [t.strip() for t in bits[1::2]]
        cut = lambda t: t if len(t) <= 60 else describe(t)
        res = "differ: " + " vs ".join(f"`{cut(t)}`" for t in sub) if len(sub) == 2 else "differ: " + part
    else:
        res = f"error (exit {d['exit']}): {d['diff']}"
    out.append(f"| {d['op']} | {d['dtype']} | {d['n']} | {d['a']} | {d['b']} | {res} |")
open("tables.md", "w").write("\n".join(out) + "\n")
EOF
echo "wrote $HERE/{summary.tsv,diffs.tsv,tables.md,environment.txt}" >&2
