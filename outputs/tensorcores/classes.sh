#!/usr/bin/env bash
# Every instruction MMA-Sim simulates, by class: MMA-Sim computes each output
# element of an instruction alike whatever its M and N (its arithmetic is
# chosen by the architecture, the kind of instruction, the types and K), so
# instructions differing only in M and N form one class. For each class its
# first instruction is revealed at n = 64 (its K-chain, with its arithmetic)
# and checked against the simulator on 1,000 trials, and the tree and model
# found are checked on 200 trials against the class's last instruction too,
# so that the grouping is tested, not assumed. Writes classes/NAME.{json,out,
# check,member} and classes.md, the table.
# Usage: bash outputs/tensorcores/classes.sh [FPREV_BINARY [PATTERN]]
set -uo pipefail
cd "$(dirname "$0")"
fprev="${1:-../../target/release/fprev}"
pattern="${2:-.}"
mkdir -p classes
"$fprev" probes mma | grep -o '^mma:[^ ]*' >classes/instructions.txt
# One line a class: its key, its first and last instruction, its size.
python3 - >classes/classes.tsv <<'PY'
import re
classes = {}
for spec in open("classes/instructions.txt").read().split():
    _, arch, name = spec.split(":", 2)
    m = re.match(r"^(wgmma\.|tcgen05\.)?m\d+n\d+k(\d+)\.(.*)$", name)
    if m:
        key = (arch, (m.group(1) or "mma.").rstrip("."), m.group(2), m.group(3))
    else:  # AMD: f32_32x32x8f16, f32_16x16x4_4b_f16, f32_32x32x8bf16_1k
        m = re.match(r"^(f\d+)_\d+x\d+x(\d+)_?(?:\d+b_)?(.*)$", name)
        key = (arch, "mfma", m.group(2), m.group(1) + "." + m.group(3))
    classes.setdefault(key, []).append(spec)
for key, members in classes.items():
    print("\t".join(list(key) + [members[0], members[-1], str(len(members))]))
PY
grep -E -- "$pattern" classes/classes.tsv | while IFS=$'\t' read -r arch kind k types first last count; do
  name="${first#mma:}"; name="${name//:/_}"
  start=$(date +%s.%N)
  "$fprev" reveal "$first" -n 64 -o "classes/$name.json" >"classes/$name.out" 2>&1
  echo "exit $? in $(echo "$(date +%s.%N) - $start" | bc) s" >>"classes/$name.out"
  [ -f "classes/$name.json" ] && "$fprev" render "classes/$name.json" --format text | grep '^#' >>"classes/$name.out"
  rm -f "classes/$name.check" "classes/$name.member"
  if [ -f "classes/$name.json" ]; then
    "$fprev" check "classes/$name.json" "$first" --trials 1000 >"classes/$name.check" 2>&1
    echo "exit $?" >>"classes/$name.check"
    if [ "$last" != "$first" ]; then
      "$fprev" check "classes/$name.json" "$last" --trials 200 >"classes/$name.member" 2>&1
      echo "exit $? ($last)" >>"classes/$name.member"
    fi
  fi
done
python3 - >classes.md <<'PY'
import os, re
rows, tally = [], {}
for line in open("classes/classes.tsv"):
    arch, kind, k, types, first, last, count = line.rstrip("\n").split("\t")
    name = first[len("mma:"):].replace(":", "_")
    out = open("classes/%s.out" % name).read() if os.path.exists("classes/%s.out" % name) else ""
    status = re.search(r"exit (\d+) in ([\d.]+) s", out)
    tree = re.search(r"\(native:([^)]*)\)", out)
    model = re.search(r"^# arithmetic: (.*)$", out, re.M)
    calls = re.findall(r"(\d[\d,]*) calls", out)
    error = re.search(r"^fprev: error: (.*)$", out, re.M) or re.search(
        r"^fprev: warning: [^ ]*: (.*?); the input is saved", out, re.M)
    def said(path):
        if not os.path.exists(path):
            return ""
        text = open(path).read()
        code = re.search(r"^exit (\d+)", text, re.M)
        return "ok" if code and code.group(1) == "0" else "fails (exit %s)" % (code.group(1) if code else "?")
    check, member = said("classes/%s.check" % name), said("classes/%s.member" % name)
    code = status.group(1) if status else "?"
    verdict = {"0": "revealed", "2": "refused", "3": "failed", "5": "not modelled"}.get(code, "exit " + code)
    tally[verdict] = tally.get(verdict, 0) + int(count)
    # An error's clause that says what is not modelled, else its start.
    why = error.group(1) if error else ""
    clauses = [c for c in why.split("; ") if "not modelled" in c or "FNUZ" in c]
    why = (clauses[-1] if clauses else why)[:240]
    what = model.group(1) if model else why
    rows.append("| `%s` | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        first[len("mma:"):], count, code, tree.group(1) if tree else "", what.replace("|", "/"),
        " + ".join(calls[:2]), status.group(2) if status else "", check, member or "(one member)"))
print("# Every simulated instruction, by class\n")
print("Made by `classes.sh` (see its comment). Instructions: %d in %d classes; %s.\n" % (
    sum(tally.values()), len(rows), ", ".join("%s: %d" % kv for kv in sorted(tally.items()))))
print("| first instruction | instructions | exit | tree | model (or why not) | calls | s | check, 1,000 | last member, 200 |")
print("|---|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
PY
