#!/usr/bin/env bash
# gpuslice compare DIR DIR... [--out DIR] and simulate --policy a,b,c: one
# folder per policy, compare.html and compare.csv beside them; its columns,
# its best marks, its queue, its exit codes.
set -u
BIN="$1"; SRC="$2"; OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source "$(dirname "$0")/expect.sh"
SNAP="$SRC/examples/snapshot/cluster.yaml"
COLUMNS="run,dir,scenario,policy,seed,run_kind,nodes,gpus,pods,placed,refused,pending_at_end,refused_pct,failed_pct,\
pending_at_end_pct,p50_pending_s,p95_pending_s,p99_pending_s,max_pending_s,alloc_gpu_pct_time_weighted,\
peak_alloc_gpu_pct,final_alloc_gpu_pct,alloc_ratio_at_130_pct,unallocated_gpus_at_130_pct,final_frag_gpu_pct,\
simulated_seconds,preemptions,gpu_hours_lost_to_preemption,node_hours,cost"
check() {  # check <name> <condition...>
  local name="$1"; shift
  checks=$((checks + 1))
  "$@" || { echo "FAIL $name"; fail=$((fail + 1)); }
}

# --policy a,b: one folder each, then the comparison in the --out folder.
expect policies 0 'comparison of 2 runs' -- "$BIN" simulate --snapshot "$SNAP" --assume-duration 3h \
  --policy hami-binpack,fgd --out "$OUT/two"
for p in hami-binpack fgd; do
  for f in summary.json timeline.csv pods.csv events.jsonl card_use.csv report.html; do
    check "policies: $p/$f" test -s "$OUT/two/$p/$f"
  done
  check "policies: $p/summary.json names its policy" grep -q "\"policy\": \"$p\"" "$OUT/two/$p/summary.json"
done
check "policies: compare.html" test -s "$OUT/two/compare.html"
check "compare.csv header" test "$(head -1 "$OUT/two/compare.csv")" = "$COLUMNS"
check "compare.csv: a row per run" test "$(cut -d, -f1 "$OUT/two/compare.csv" | tail -n +2 | tr '\n' ' ')" = "hami-binpack fgd "
# Every row has the header's cell count (no cell here holds a comma).
check "compare.csv: full rows" test "$(awk -F, '{print NF}' "$OUT/two/compare.csv" | sort -u)" = "30"
# The bundled snapshot's answer: 5 placed, 2 refused, the fine-tune waits 3 h, for both.
check "compare.csv: figures" grep -q '^fgd,[^,]*,cluster,fgd,42,snapshot,4,10,7,5,2,0,28.57[0-9]*,28.57[0-9]*,0,0,10800,10800,10800,' "$OUT/two/compare.csv"
# The queue, pod by pod: the 7 pods pending at the snapshot, one column per run.
check "compare.html: queue rows" test "$(grep -o '<tr class="queued">' "$OUT/two/compare.html" | wc -l)" = 7
check "compare.html: self-contained" bash -c "! grep -Eq '<script[^>]* src=|<link[^>]* href=' '$OUT/two/compare.html'"
check "compare.html: Chart.js inlined" grep -q 'Chart.js v3' "$OUT/two/compare.html"

# gpuslice compare on the folders: the same table; compare.csv the same.
cp "$OUT/two/compare.csv" "$OUT/from-simulate.csv"
expect compare 0 'lab/notebook-carol +gpu-a100-1 .* gpu-t4-2 ' -- "$BIN" compare "$OUT/two/hami-binpack" "$OUT/two/fgd"
check "compare: same compare.csv as simulate --policy" cmp -s "$OUT/two/compare.csv" "$OUT/from-simulate.csv"
expect compare-out 0 'outputs .*elsewhere/\{compare.html,compare.csv\}' -- "$BIN" compare "$OUT/two/fgd" "$OUT/two/hami-binpack" --out "$OUT/elsewhere"
check "compare --out: row order follows the arguments" test "$(cut -d, -f1 "$OUT/elsewhere/compare.csv" | tail -n +2 | tr '\n' ' ')" = "fgd hami-binpack "

# The best is marked where the runs differ, on the right run: report-run's
# waits differ between binpack and spread.
"$BIN" simulate "$SRC/tests/cli/data/report-run.yaml" --policy hami-binpack,hami-spread --out "$OUT/waits" > "$OUT/waits.txt"
best=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "p95_pending_s") c = i }
                NR > 1 { if (min == "" || $c < min) { min = $c; run = $1 } } END { print run }' "$OUT/waits/compare.csv")
check "report-run: binpack waits least (p95)" test "$best" = hami-binpack
# hami-binpack is the first column: its p95 carries the only mark.
check "best p95 marked" grep -Eq '^  time pending, p95 +[0-9.]+ h \* +[0-9.]+ h$' "$OUT/waits.txt"
check "no best where the runs agree" bash -c "! grep -E '^  refused +[0-9]+ +\*' '$OUT/waits.txt'"

# Time pending by priority class (docs/simulator.md): the wrong-victim
# example, worked by hand there. kube: the serving pod waits 3590 s for a
# card, the batch victim returns at once; hami-aware: the serving pod at
# once, small-batch-2 made again waits 600 s.
expect classes 0 'comparison of 2 runs' -- "$BIN" simulate "$SRC/scenarios/preemption-wrong-victim.yaml" \
  --preemption kube,hami-aware --out "$OUT/classes"
row() { grep -o "<tr title=\"pending_seconds_by_priority_class.$1\">.*</tr>" "$OUT/classes/compare.html"; }
check "classes: a section" grep -q '<section id="classes"><h2>Time pending by priority class</h2>' "$OUT/classes/compare.html"
check "classes: serving longest" test "$(row serving.max)" = '<tr title="pending_seconds_by_priority_class.serving.max"><th>class serving: longest</th><td class="num">59.8 min</td><td class="num best">0 s</td></tr>'
check "classes: batch longest" test "$(row batch.max)" = '<tr title="pending_seconds_by_priority_class.batch.max"><th>class batch: longest</th><td class="num best">0 s</td><td class="num">10.0 min</td></tr>'
check "classes: placements unmarked" test "$(row batch.placements)" = '<tr title="pending_seconds_by_priority_class.batch.placements"><th>class batch: placements</th><td class="num">5</td><td class="num">5</td></tr>'
check "classes: none where priorities are one" bash -c "! grep -q 'id=\"classes\"' '$OUT/two/compare.html'"
check "compare.csv header unchanged" test "$(head -1 "$OUT/classes/compare.csv")" = "$COLUMNS"

# Exit codes: bad input is 2, named.
expect one-folder 2 'at least two run folders' -- "$BIN" compare "$OUT/two/fgd"
expect missing-folder 2 'nope: not a folder' -- "$BIN" compare "$OUT/two/fgd" "$OUT/nope"
expect same-twice 2 'the same run folder' -- "$BIN" compare "$OUT/two/fgd" "$OUT/two/fgd/"
expect no-common-parent 2 '--out: the run folders are in different folders' -- "$BIN" compare "$OUT/two/fgd" "$OUT/waits/hami-spread"
cp -r "$OUT/two/fgd" "$OUT/bad-summary" && printf '{\n  "pods": 3,\n  oops\n}\n' > "$OUT/bad-summary/summary.json"
expect bad-summary 2 'summary.json:3: .*not valid JSON' -- "$BIN" compare "$OUT/two/fgd" "$OUT/bad-summary" --out "$OUT/x"
expect unknown-policy 2 "--policy: unknown policy 'nope'" -- "$BIN" simulate --snapshot "$SNAP" --policy fgd,nope --out "$OUT/bad"
expect policy-twice 2 "--policy: 'fgd' is given twice" -- "$BIN" simulate --snapshot "$SNAP" --policy fgd,fgd --out "$OUT/bad"
check "no run before a bad policy list" test ! -e "$OUT/bad/fgd"
report
