#!/usr/bin/env bash
# outputs/make.sh: reproduce the FPRev case study on this machine.
#
# For every SPEC in $SPECS and every N in $NS (f32; GEMV/GEMM square,
# M = N = K = n, fprev's default shape) this script
#
#   1. reveals the summation tree:
#        fprev reveal SPEC -n N -o outputs/<lib>/<op>/n<N>.json
#      stderr is kept in n<N>.err when it is not empty (fprev's
#      "fprev: note: ..." lines are findings, e.g. OpenBLAS GEMM rows that
#      sum in different orders); a failed reveal (exit 2 or 3) is recorded
#      with its one-line error and the script goes on;
#   2. renders it: `fprev render n<N>.json` (text, kept in n<N>.txt; its
#      second line is the human summary) and `fprev render n<N>.json -o
#      n<N>.svg` (an SVG over $SVG_LIMIT bytes is deleted and recorded as
#      skipped, to keep outputs/ small);
#   3. confirms it: `fprev check n<N>.json SPEC --trials $TRIALS`
#      (ok / mismatch / error, with fprev's line).
#   A GEMV/GEMM reveal that fails with exit 3 is retried with `--batch 1`
#   (one row per call, so row 0's order alone) into n<N>.batch1.json; both
#   the failure and the retry are recorded.
#
# Then, because fprev notes that rows of OpenBLAS's GEMM differ from row 0,
# it reveals single rows ($ROW_SET, default rows 0 and 6) of NumPy's and the
# system OpenBLAS's square f32 GEMM for every n >= 8 in $NS through the
# python: probes of outputs/rows.py (outputs/rows/<lib>_gemm_row<R>/n<N>.json,
# no SVG), and writes outputs/rows/rows_equal_to_row0.txt (`python3
# outputs/rows.py N...`: which rows agree with row 0 on random inputs).
# ROWS=0 skips this part.
#
# It then writes
#   outputs/results.tsv      one row per (spec, n): status, summary, stats, check, svg, notes
#   outputs/models.tsv       which hypothesised orders of outputs/models.py each tree equals
#   outputs/results.md       both as Markdown tables, one per black box
#   outputs/diffs.tsv        `fprev diff` of pairs of black boxes at each n (same order or not)
#   outputs/rows/            single GEMM rows other than row 0 (see step 2 below)
#   outputs/environment.txt  machine, library versions, fprev commit, run time
# outputs/README.md is written by hand from these files and is not touched.
#
# Usage (from anywhere; works on the repository this file lives in):
#   bash outputs/make.sh                   # everything
#   SPECS="numpy:sum" NS="4 8 16" bash outputs/make.sh   # a subset (results.* then cover only it)
#   FPREV_BUILD=1 bash outputs/make.sh     # run `cargo build --release` first
# Needs: target/release/fprev (cargo build --release), python3 with numpy,
# ml_dtypes, jax (CPU) for the numpy:/jax: probes, Graphviz `dot` for SVGs,
# the system OpenBLAS (libopenblas0) for blas:, jq, lscpu.
# Re-runnable: every output file is overwritten; old files for specs/n it
# runs are removed first.

set -u -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/outputs"
cd "$ROOT"

SPECS="${SPECS:-numpy:sum numpy:dot numpy:gemv numpy:gemm jax:sum jax:dot ndarray:sum ndarray:dot ndarray:gemv ndarray:gemm blas:dot blas:gemv blas:gemm}"
NS="${NS:-4 5 6 7 8 16 32 64 128 256 512}"
TRIALS="${TRIALS:-200}"
SVG_LIMIT="${SVG_LIMIT:-1000000}"
ROW_SET="${ROW_SET:-0 6}"

if [ "${FPREV_BUILD:-0}" = 1 ]; then
    cargo build --release || exit 1
fi
if [ ! -x "$ROOT/target/release/fprev" ]; then
    echo "make.sh: target/release/fprev is missing: run cargo build --release" >&2
    exit 1
fi
# Run one fixed copy of the binary, so a rebuild during the run cannot mix
# two builds into one set of results (the Python adapters are compiled in).
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cp "$ROOT/target/release/fprev" "$TMP/fprev"
# What the binary was built from, as far as git can tell, taken now (the tree
# may change while this runs).
GIT_HEAD="$(git rev-parse --short HEAD) ($(git log -1 --format=%s | cut -c1-100))"
GIT_DIRTY="$(git status --porcelain -- crates Cargo.toml Cargo.lock | tr '\n' ' ')"
BIN_BUILT="$(date -u -r "$ROOT/target/release/fprev" +%Y-%m-%dT%H:%M:%SZ)"
HEAD_TIME="$(git log -1 --format=%cI)"
FPREV="$TMP/fprev"

START=$(date +%s.%N)
TSV="$OUT/results.tsv"
printf 'spec\toptions\tn\tfile\treveal\tsummary\tarithmetic\tqueries\tinputs\tcalls\tseconds\tprobe_seconds\tcheck\tsvg\tnotes\n' >"$TSV"

# One line, tabs and newlines flattened, for a TSV cell.
cell() { tr '\t\n' '  ' | sed 's/  *$//'; }
# A field of the JSON's "stats" (grep, not jq: jq refuses trees over 256 deep).
# The stats section of a tree file (pretty-printed, a key a line; the tree
# itself can be too deep for jq to read whole).
stat_of() { sed -n '/^  "stats": {/,/^  }/p' "$1" | sed '1s/.*/{/; $s/.*/}/' | jq -r ".$2 // \"\""; }

# run_case SPEC N BASE SVG [reveal options...]: reveal, render, check; one TSV row.
# Sets RC to the reveal's exit status.
run_case() {
    local spec="$1" n="$2" base="$3" want_svg="$4"
    shift 4
    local opts="$*"
    mkdir -p "$(dirname "$base")"
    rm -f "$base.json" "$base.svg" "$base.txt" "$base.err"
    local t0 t1 notes status summary="" arithmetic="" queries="" inputs="" calls="" seconds="" pseconds="" check="" svg="" size cout crc
    t0=$(date +%s.%N)
    "$FPREV" reveal "$spec" -n "$n" "$@" --timings -o "$base.json" 2>"$base.err"
    RC=$?
    t1=$(date +%s.%N)
    notes="$(grep '^fprev: note:' "$base.err" | grep -v '^fprev: note: arithmetic: .* asked, .* calls; replayed on ' \
        | sed 's/^fprev: note: //' | cell)"
    if [ $RC -eq 0 ] && [ -s "$base.json" ]; then
        status="ok"
        "$FPREV" render "$base.json" >"$base.txt" 2>>"$base.err"
        summary="$(sed -n 2p "$base.txt" | sed 's/^# //' | cell)"
        arithmetic="$(grep '^# arithmetic: ' "$base.txt" | sed 's/^# arithmetic: //' | cell)"
        queries="$(stat_of "$base.json" queries)"
        inputs="$(stat_of "$base.json" inputs)"
        calls="$(stat_of "$base.json" calls)"
        seconds="$(stat_of "$base.json" seconds)"
        pseconds="$(stat_of "$base.json" probe_seconds)"
        if [ "$want_svg" = svg ]; then
            if "$FPREV" render "$base.json" -o "$base.svg" 2>>"$base.err"; then
                size=$(stat -c %s "$base.svg")
                if [ "$size" -gt "$SVG_LIMIT" ]; then
                    rm -f "$base.svg"
                    svg="skipped ($size bytes > $SVG_LIMIT)"
                else
                    svg="$size bytes"
                fi
            else
                svg="render failed: $(tail -n 1 "$base.err" | cell)"
            fi
        else
            svg="not made"
        fi
        cout="$("$FPREV" check "$base.json" "$spec" --trials "$TRIALS" 2>&1)"
        crc=$?
        case $crc in
            0) check="ok" ;;
            1) check="mismatch: $(printf '%s' "$cout" | cell)" ;;
            *) check="error (exit $crc): $(printf '%s' "$cout" | tail -n 1 | cell)" ;;
        esac
    else
        status="failed (exit $RC): $(grep -v '^fprev: note:' "$base.err" | tail -n 1 | cell)"
        rm -f "$base.json"
    fi
    [ -s "$base.err" ] || rm -f "$base.err"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$spec" "$opts" "$n" "${base#"$OUT"/}.json" "$status" "$summary" "$arithmetic" "$queries" "$inputs" "$calls" \
        "$seconds" "$pseconds" "$check" "$svg" "$notes" >>"$TSV"
    printf '%-14s %s n=%-4s %-5s %6.2fs  %s | check %s%s\n' "$spec" "$opts" "$n" "${status%% *}" \
        "$(echo "$t1 - $t0" | bc)" "${summary:-$status}" "${check%%:*}" "${notes:+ | note}" >&2
}

# 1. The case study.
for spec in $SPECS; do
    lib="${spec%%:*}"
    op="${spec#*:}"
    for n in $NS; do
        run_case "$spec" "$n" "$OUT/$lib/$op/n$n" svg
        # A batched black box (one query per GEMV/GEMM row) whose reveal broke
        # (exit 3) is retried one row per call, which reveals row 0's order
        # whatever the other rows do; recorded as its own row, the failure stays.
        if [ "$RC" -eq 3 ] && { [ "$op" = gemv ] || [ "$op" = gemm ]; }; then
            run_case "$spec" "$n" "$OUT/$lib/$op/n$n.batch1" svg --batch 1
        fi
    done
done

# 2. GEMM rows other than row 0 (fprev notes that they differ): single rows
#    of NumPy's and the system OpenBLAS's f32 GEMM as python: probes
#    (outputs/rows.py), rows 0 and 6, and the map of which rows agree with row 0.
ROW_NS=""
for n in $NS; do [ "$n" -ge 8 ] && ROW_NS="$ROW_NS $n"; done
if [ "${ROWS:-1}" = 1 ] && [ -n "$ROW_NS" ]; then
    for lib in numpy blas; do
        for r in $ROW_SET; do
            for n in $ROW_NS; do
                run_case "python:outputs/rows.py:${lib}_gemm_row$r" "$n" "$OUT/rows/${lib}_gemm_row$r/n$n" nosvg
            done
        done
    done
    # shellcheck disable=SC2086
    python3 "$OUT/rows.py" $ROW_NS >"$OUT/rows/rows_equal_to_row0.txt" 2>&1
fi

# 3. Same order or not: `fprev diff` between black boxes at each n (exit 0
#    equal modulo child order, 1 different: the smallest subtree where they part).
DIFFS="$OUT/diffs.tsv"
printf 'a\tb\tn\tdiff\n' >"$DIFFS"
for pair in numpy:dot,blas:dot numpy:gemv,blas:gemv numpy:gemm,blas:gemm \
            numpy:sum,numpy:dot jax:sum,jax:dot ndarray:sum,ndarray:dot \
            ndarray:sum,ndarray:gemv ndarray:gemm,blas:gemm numpy:gemv,ndarray:gemv; do
    a="${pair%,*}" b="${pair#*,}"
    case " $SPECS " in *" $a "*) ;; *) continue ;; esac
    case " $SPECS " in *" $b "*) ;; *) continue ;; esac
    for n in $NS; do
        fa="$OUT/${a%%:*}/${a#*:}/n$n.json" fb="$OUT/${b%%:*}/${b#*:}/n$n.json"
        [ -f "$fa" ] || fa="${fa%.json}.batch1.json"
        [ -f "$fb" ] || fb="${fb%.json}.batch1.json"
        if [ -f "$fa" ] && [ -f "$fb" ]; then
            d="$(cd "$OUT" && "$FPREV" diff "${fa#"$OUT"/}" "${fb#"$OUT"/}" 2>&1)"
            drc=$?
            case $drc in
                0) res="equal" ;;
                1) res="$(printf '%s' "$d" | head -c 300 | cell)" ;;
                *) res="error (exit $drc): $(printf '%s' "$d" | tail -n 1 | cell)" ;;
            esac
        else
            res="no tree"
        fi
        printf '%s\t%s\t%s\t%s\n' "${fa#"$OUT"/}" "${fb#"$OUT"/}" "$n" "$res" >>"$DIFFS"
    done
done

END=$(date +%s.%N)
ELAPSED=$(printf '%.1f' "$(echo "$END - $START" | bc)")

# ---- environment.txt -------------------------------------------------------
{
    echo "# Written by outputs/make.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "make.sh run time: ${ELAPSED} s (specs: $SPECS; n: $NS; check trials: $TRIALS)"
    echo
    echo "## fprev"
    echo "commit (HEAD when make.sh started): $GIT_HEAD, committed $HEAD_TIME"
    echo "uncommitted changes in crates/ Cargo.* when make.sh started: ${GIT_DIRTY:-none}"
    echo "binary: a copy of target/release/fprev taken when make.sh started, sha256 $(sha256sum "$FPREV" | cut -c1-16), file time $BIN_BUILT"
    echo "rust crates (Cargo.lock): $(awk '/^name = "(ndarray|matrixmultiply|cblas-sys|pyo3)"$/{n=$3; getline; printf "%s %s, ", n, $3}' Cargo.lock | tr -d '"' | sed 's/, $//')"
    echo
    echo "## machine"
    lscpu | grep -E '^(Architecture|Model name|CPU family|Model|Stepping|CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|Hypervisor vendor|L1d cache|L2 cache|L3 cache):' | sed 's/  */ /g'
    echo "flags (SIMD): $(lscpu | grep '^Flags:' | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512_fp16|avx512_bf16|amx_bf16)$' | tr '\n' ' ')"
    echo "kernel: $(uname -sr)"
    echo "OS: $(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-unknown}")"
    echo "OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-unset} OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}"
    echo
    echo "## system OpenBLAS (blas: probes, through CBLAS)"
    dpkg-query -W -f='${Package} ${Version}\n' 'libopenblas*' 2>/dev/null | awk 'NF == 2' || echo "dpkg: no libopenblas package"
    python3 - <<'EOF' 2>&1
import ctypes
try:
    l = ctypes.CDLL("libopenblas.so.0")
    for f in ("openblas_get_config", "openblas_get_corename"):
        g = getattr(l, f); g.restype = ctypes.c_char_p
        print(f"{f}(): {g().decode()}")
    print(f"openblas_get_num_threads(): {l.openblas_get_num_threads()}")
except OSError as e:
    print(f"libopenblas.so.0 not loadable: {e}")
EOF
    echo
    echo "## Python packages (numpy: and jax: probes, embedded bridge)"
    python3 - <<'EOF' 2>&1
import sys, glob, os, ctypes
print("python", sys.version.split()[0], sys.executable)
import numpy
print("numpy", numpy.__version__)
for m in ("ml_dtypes", "jax", "jaxlib"):
    try:
        print(m, __import__(m).__version__)
    except Exception as e:
        print(m, "missing:", e)
try:
    import jax
    print("jax devices:", jax.devices())
except Exception as e:
    pass
cfg = numpy.show_config(mode="dicts")
blas = cfg["Build Dependencies"]["blas"]
print("numpy bundled BLAS:", blas.get("name"), blas.get("version"), "|", " ".join(str(blas.get("openblas configuration", "")).split()))
libs = glob.glob(os.path.join(os.path.dirname(numpy.__file__), "..", "numpy.libs", "libscipy_openblas*.so*"))
if libs:
    l = ctypes.CDLL(libs[0])
    for f in ("scipy_openblas_get_corename64_", "scipy_openblas_get_config64_"):
        if hasattr(l, f):
            g = getattr(l, f); g.restype = ctypes.c_char_p
            print(f"numpy bundled {f}(): {g().decode()}")
    if hasattr(l, "scipy_openblas_get_num_threads64_"):
        print("numpy bundled OpenBLAS threads:", l.scipy_openblas_get_num_threads64_())
simd = cfg.get("SIMD Extensions", {})
print("numpy SIMD baseline:", simd.get("baseline"), "found:", simd.get("found"))
EOF
    echo
    echo "## GPU"
    echo "not run: no GPU was available to this task (torch:…:cuda probes); fprev probes says:"
    "$FPREV" probes 2>&1 | grep '^torch' | sed 's/  */ /g'
} >"$OUT/environment.txt"

# ---- models.tsv, results.md -----------------------------------------------
python3 "$OUT/models.py" "$TSV" >"$OUT/models.tsv"
python3 - "$TSV" "$OUT/models.tsv" "$OUT/results.md" "$ELAPSED" "$TRIALS" <<'EOF'
import csv, sys
tsv, models_tsv, md, elapsed, trials = sys.argv[1:6]
rows = list(csv.DictReader(open(tsv), delimiter="\t"))
models = {r["file"]: r["models"] for r in csv.DictReader(open(models_tsv), delimiter="\t")}
groups = list(dict.fromkeys((r["spec"], r["options"]) for r in rows))
out = ["# Results (generated by outputs/make.sh; do not edit)", "",
       f"make.sh run time: {elapsed} s. One row per black box and n (f32; GEMV/GEMM square, M = N = K = n).",
       "`summary`: the second line of `fprev render FILE` (the tree itself is the first line of the `.txt` next to the `.json`).",
       "`models`: the orders of outputs/models.py the tree equals exactly (modulo child order).",
       "`arithmetic`: what each node computes, found after the order and confirmed by replay (the `# arithmetic:` line of the `.txt`): the default format (and rounding, if not to nearest) and the nodes that differ.",
       f"`check`: `fprev check FILE SPEC --trials {trials}`. Times are fprev's own (JSON `stats.seconds`).", ""]
for spec, opts in groups:
    out += [f"## `{spec}{(' ' + opts) if opts else ''}`", "",
            "| n | summary | models | arithmetic | queries | inputs | calls | seconds | check | svg | note |",
            "|---:|---|---|---|---:|---:|---:|---:|---|---|---|"]
    notes = []
    for r in rows:
        if (r["spec"], r["options"]) != (spec, opts):
            continue
        n, f = r["n"], r["file"]
        if r["reveal"] == "ok":
            txt = f[:-len(".json")] + ".txt"
            summ = f"[{r['summary']}]({txt})"
            secs = f"{float(r['seconds']):.3f}" if r["seconds"] else ""
        else:
            summ, secs = r["reveal"], ""
        note = "below" if r["notes"] else ""
        if r["notes"]:
            notes.append((n, r["notes"]))
        out.append(f"| {n} | {summ} | {models.get(f, '')} | {r['arithmetic']} | {r['queries']} | {r['inputs']} | {r['calls']} | {secs} | {r['check']} | {r['svg']} | {note} |")
    if notes:
        out += ["", "Notes fprev printed on stderr (also in the `.err` file next to the `.json`):", ""]
        out += [f"- n = {n}: {t}" for n, t in notes]
    out.append("")
open(md, "w").write("\n".join(out))
EOF

echo "make.sh: done in ${ELAPSED} s; see outputs/results.md, outputs/environment.txt" >&2
