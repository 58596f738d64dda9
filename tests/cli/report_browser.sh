#!/usr/bin/env bash
# report.html in a real browser: a small simulate, the page opened in headless
# Chromium, every chart must have drawn a non-empty canvas and no script may
# have failed; the same for compare.html and the study's report.html. The
# screenshots are kept as CI artifacts: ci-artifacts/report.png, compare.png,
# study.png.
# Without chromium the test is skipped (exit 77), except under CI=true, where
# it fails: CI must check the page.
set -u
BIN="$1"; SRC="$2"; OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source "$(dirname "$0")/expect.sh"
source "$(dirname "$0")/browser.sh"
# A run with departures, a queue that waits and pods refused: every chart has data.
expect simulate 0 'report +.*/report.html' -- "$BIN" simulate "$SRC/tests/cli/data/report-run.yaml" --out "$OUT/run"
check_summary() {  # check_summary <name> <page>: the summary is written for people
  local name="$1" dom
  dom=$(browser --dump-dom "file://$2")
  checks=$((checks + 1))
  grep -q '<caption>Time pending</caption>' <<<"$dom" || { echo "FAIL $name: no summary table"; fail=$((fail + 1)); }
  checks=$((checks + 1))
  if grep -Eq 'a list of [0-9]+ values|<th>Wall time' <<<"$dom"; then
    echo "FAIL $name: the summary shows internal fields"; fail=$((fail + 1))
  fi
}
check_page simulate "$OUT/run/report.html"
check_summary simulate "$OUT/run/report.html"
# gpuslice report writes the same charts again from the files.
rm "$OUT/run/report.html"
expect report 0 'report.html' -- "$BIN" report "$OUT/run"
check_page report "$OUT/run/report.html"
# A snapshot run: its queue, pod by pod, under the summary.
expect snapshot 0 'report +.*/report.html' -- "$BIN" simulate --snapshot "$SRC/examples/snapshot/cluster.yaml" \
  --assume-duration 3h --policy fgd --out "$OUT/snapshot"
check_page snapshot "$OUT/snapshot/report.html"
checks=$((checks + 1))
queue_rows=$(browser --dump-dom "file://$OUT/snapshot/report.html" | grep -o '<tr class="\(placed\|not-placed\)"' | wc -l)
[ "$queue_rows" = 7 ] || { echo "FAIL snapshot: $queue_rows queue rows, want the 7 pending pods"; fail=$((fail + 1)); }
# compare.html: the snapshot under two policies (3 charts), and openb fills
# (4: with the study's curve by arrived demand).
expect compare 0 'compare.html' -- "$BIN" simulate --snapshot "$SRC/examples/snapshot/cluster.yaml" \
  --assume-duration 3h --policy hami-binpack,fgd --out "$OUT/compare"
check_page compare "$OUT/compare/compare.html" 3
N="$SRC/scenarios/data/openb/openb_node_list_gpu_node.csv" P="$SRC/scenarios/data/openb/openb_pod_list_default.csv"
expect compare-openb 0 'compare.html' -- "$BIN" simulate --openb-nodes "$N" --openb-pods "$P" --policy fgd,random \
  --no-card-use --out "$OUT/compare-openb"
check_page compare-openb "$OUT/compare-openb/compare.html" 4
# The study's report.html: one figure per trace, each counted (a copy of the
# trace under another name has no published curve: ours alone).
cp "$P" "$OUT/openb_pod_list_copy.csv"
expect study 0 'report.html' -- "$BIN" study --openb-nodes "$N" --openb-pods "$P" "$OUT/openb_pod_list_copy.csv" \
  --policies bestfit,fgd --seeds 42 --jobs 2 --out "$OUT/study" --published "$SRC/scenarios/data/openb/published/analysis_allo_discrete.csv"
check_page study "$OUT/study/report.html" 2
checks=$((checks + 1))
study_dom=$(browser --dump-dom "file://$OUT/study/report.html")
grep -q 'data-rendered-charts="chart-trace-0 chart-trace-1"' <<<"$study_dom" || { echo "FAIL study: not both traces drawn"; fail=$((fail + 1)); }
checks=$((checks + 1))
# fgd on default, seed 42: ours 95.27, published 95.39 (the contract test's figures).
grep -Eq '<td>openb_pod_list_default</td><td>fgd</td>.*95.27 %.*95.39 %</td><td class="num within">-0.12</td>' <<<"$study_dom" \
  || { echo "FAIL study: the table has no difference for fgd"; fail=$((fail + 1)); }
mkdir -p "$SRC/ci-artifacts"
browser --screenshot="$SRC/ci-artifacts/report.png" --window-size=1280,4000 "file://$OUT/run/report.html" >/dev/null
browser --screenshot="$SRC/ci-artifacts/compare.png" --window-size=1280,3000 "file://$OUT/compare/compare.html" >/dev/null
browser --screenshot="$SRC/ci-artifacts/study.png" --window-size=1280,1800 "file://$OUT/study/report.html" >/dev/null
for png in report compare study; do
  checks=$((checks + 1))
  [ -s "$SRC/ci-artifacts/$png.png" ] || { echo "FAIL: no screenshot $png.png"; fail=$((fail + 1)); }
done
report
