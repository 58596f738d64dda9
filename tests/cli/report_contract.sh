#!/usr/bin/env bash
# gpuslice report DIR: report.html again from a run's files; a missing or
# malformed file is bad input (exit 2) named with its line.
set -u
BIN="$1"; SRC="$2"; OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source "$(dirname "$0")/expect.sh"
S="$SRC/scenarios"
expect simulate 0 'report +.*/report.html' -- "$BIN" simulate "$S/lab-t4-slices.yaml" --out "$OUT/t4"
checks=$((checks + 1))
grep -q 'data-charts="6"' "$OUT/t4/report.html" || { echo "FAIL simulate: no report.html with 6 charts"; fail=$((fail + 1)); }
# Self-contained: Chart.js is inlined, nothing is loaded from elsewhere.
checks=$((checks + 1))
if grep -Eq '<script[^>]* src=|<link[^>]* href=' "$OUT/t4/report.html"; then
  echo "FAIL simulate: report.html loads a file"; fail=$((fail + 1))
fi
checks=$((checks + 1))
grep -q 'Chart.js v3' "$OUT/t4/report.html" || { echo "FAIL: Chart.js not inlined"; fail=$((fail + 1)); }
rm "$OUT/t4/report.html"
expect report 0 'report.html' -- "$BIN" report "$OUT/t4"
checks=$((checks + 1))
[ -s "$OUT/t4/report.html" ] || { echo "FAIL report: no report.html"; fail=$((fail + 1)); }
expect report-no-folder 2 'nope.*not a folder' -- "$BIN" report "$OUT/nope"
cp -r "$OUT/t4" "$OUT/no-timeline" && rm "$OUT/no-timeline/timeline.csv"
expect report-no-timeline 2 'timeline.csv.*cannot open file' -- "$BIN" report "$OUT/no-timeline"
cp -r "$OUT/t4" "$OUT/bad-pods" && sed -i '3s/^\([^,]*,[^,]*,[^,]*\),[^,]*,/\1,soon,/' "$OUT/bad-pods/pods.csv"
expect report-bad-pods 2 'pods.csv:3: arrival.*soon.*not a number' -- "$BIN" report "$OUT/bad-pods"
cp -r "$OUT/t4" "$OUT/bad-card-use" && echo "1.000,hami-workshop,0,1" >> "$OUT/bad-card-use/card_use.csv"
expect report-short-row 2 'card_use.csv:[0-9]+: .*4 cells, the header has 7' -- "$BIN" report "$OUT/bad-card-use"
cp -r "$OUT/t4" "$OUT/bad-summary" && printf '{\n  "pods": 3,\n  oops\n}\n' > "$OUT/bad-summary/summary.json"
expect report-bad-json 2 'summary.json:3: .*not valid JSON' -- "$BIN" report "$OUT/bad-summary"
cp -r "$OUT/t4" "$OUT/no-column" && sed -i '1s/frag_gpu_pct/fragmentation/' "$OUT/no-column/timeline.csv"
expect report-missing-column 2 'timeline.csv:1: frag_gpu_pct: missing column' -- "$BIN" report "$OUT/no-column"
# A run without the per-card log still has a report (the heatmap says why it is empty).
"$BIN" simulate "$S/lab-t4-slices.yaml" --no-card-use --out "$OUT/no-card-use" >/dev/null
rm "$OUT/no-card-use/report.html"
expect report-no-card-use 0 'report.html' -- "$BIN" report "$OUT/no-card-use"
report
