#!/usr/bin/env bash
# gpuslice simulate and plan: outputs, exit codes (0 ok / 1 no answer / 2 bad input).
set -u
BIN="$1"; SRC="$2"; OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source "$(dirname "$0")/expect.sh"
S="$SRC/scenarios"
expect simulate-lab 0 'not placed +1 x CardTimeSlicingExhausted' -- \
  "$BIN" simulate "$S/lab-t4-slices.yaml" --out "$OUT/t4"
for f in summary.json timeline.csv pods.csv events.jsonl card_use.csv; do
  checks=$((checks + 1)); [ -s "$OUT/t4/$f" ] || { echo "FAIL simulate-lab: no $f"; fail=$((fail + 1)); }
done
expect simulate-openb-fgd 0 'at 130% arrived +95.27%' -- \
  "$BIN" simulate --openb-nodes "$S/data/openb/openb_node_list_gpu_node.csv" \
  --openb-pods "$S/data/openb/openb_pod_list_default.csv" --policy fgd --tune 1.3 --seed 42 --no-card-use --out "$OUT/fgd"
checks=$((checks + 1)); [ ! -e "$OUT/fgd/card_use.csv" ] || { echo "FAIL --no-card-use wrote card_use.csv"; fail=$((fail + 1)); }
expect simulate-bad-policy 2 "--policy: unknown policy 'sideways'" -- \
  "$BIN" simulate "$S/lab-t4-slices.yaml" --policy sideways --out "$OUT/x"
# gpuslice study: the FGD study's grid, with the artifact's published means.
D="$S/data/openb"
expect study-table 0 'openb_pod_list_default.csv +fgd +1 +95.27 +95.27 +95.27 +95.39 +-0.12' -- \
  "$BIN" study --openb-nodes "$D/openb_node_list_gpu_node.csv" --openb-pods "$D/openb_pod_list_default.csv" \
  --policies bestfit,fgd --seeds 42 --jobs 2 --out "$OUT/study" --published "$D/published/analysis_allo_discrete.csv"
for f in "runs.csv:trace,policy,seed,alloc_130,unallocated_gpus_130,frag_130,wall_s" \
         "curves.csv:trace,policy,seed,arrived_pct,alloc_pct,frag_pct" \
         "table.csv:trace,policy,runs,mean,min,max,published_mean,diff"; do
  checks=$((checks + 1))
  [ "$(head -1 "$OUT/study/${f%%:*}")" = "${f#*:}" ] || { echo "FAIL study: ${f%%:*} header"; fail=$((fail + 1)); }
done
checks=$((checks + 1))
[ "$(wc -l < "$OUT/study/curves.csv")" = "263" ] || { echo "FAIL study: curves.csv has not 2 x 131 rows"; fail=$((fail + 1)); }
# report.html: one figure per trace (drawn and counted in cli.report_browser), self-contained.
checks=$((checks + 1))
grep -q 'data-charts="1"' "$OUT/study/report.html" || { echo "FAIL study: no report.html with 1 figure"; fail=$((fail + 1)); }
checks=$((checks + 1))
if grep -Eq '<script[^>]* src=|<link[^>]* href=' "$OUT/study/report.html"; then
  echo "FAIL study: report.html loads a file"; fail=$((fail + 1))
fi
expect study-bad-seeds 2 "--seeds: 'x' is not a non-negative integer" -- \
  "$BIN" study --openb-nodes "$D/openb_node_list_gpu_node.csv" --openb-pods "$D/openb_pod_list_default.csv" --seeds x --out "$OUT/s2"
expect study-bad-policy 2 "unknown policy 'sideways'" -- \
  "$BIN" study --openb-nodes "$D/openb_node_list_gpu_node.csv" --openb-pods "$D/openb_pod_list_default.csv" --policies fgd,sideways --out "$OUT/s2"
expect study-bad-tune 2 "--tune: 'nan' is not in \(0, 10\]" -- \
  "$BIN" study --openb-nodes "$D/openb_node_list_gpu_node.csv" --openb-pods "$D/openb_pod_list_default.csv" --tune nan --out "$OUT/s2"
expect study-missing-pods 2 "nope.csv.*cannot open file" -- \
  "$BIN" study --openb-nodes "$D/openb_node_list_gpu_node.csv" --openb-pods "$OUT/nope.csv" --out "$OUT/s2"
expect study-bad-published 2 "missing column" -- \
  "$BIN" study --openb-nodes "$D/openb_node_list_gpu_node.csv" --openb-pods "$D/openb_pod_list_default.csv" --published "$D/openb_node_list_gpu_node.csv" --out "$OUT/s2"
expect plan-answer 0 'answer: 6 nodes \(6 x a100\)' -- \
  "$BIN" plan "$S/capacity-planning.yaml" --target 'p95_pending_s<=60' --target 'refused_pct<=1'
expect plan-json 0 '"count":6' -- \
  "$BIN" plan "$S/capacity-planning.yaml" --target 'p95_pending_s<=60' --json
expect plan-none-in-range 1 'none between 1 and 4 nodes' -- \
  "$BIN" plan "$S/capacity-planning.yaml" --target 'p95_pending_s<=60' --max 4
expect plan-bad-target 2 "no metric 'p95_wait'" -- \
  "$BIN" plan "$S/capacity-planning.yaml" --target 'p95_wait<=60'
# Snapshots: kubectl get nodes,pods -A -o yaml|json of a HAMi cluster as the start.
X="$SRC/examples/snapshot"
for fmt in yaml json; do
  expect simulate-snapshot-$fmt 0 'ml/train-llm-70b-0 +refused \(CardInsufficientMemory\)' -- \
    "$BIN" simulate --snapshot "$X/cluster.$fmt" --assume-duration 3h --out "$OUT/snap-$fmt"
  checks=$((checks + 1))
  names=$(tail -n +2 "$OUT/snap-$fmt/pods.csv" | cut -d, -f1 | tr '\n' ' ')
  [ "$names" = "ml/finetune-7b-0 lab/notebook-carol serving/whisper-6 serving/whisper-7 ml/train-llm-70b-0 research/sweep-4card-0 lab/notebook-dave " ] ||
    { echo "FAIL simulate-snapshot-$fmt: pods.csv names: $names"; fail=$((fail + 1)); }
  checks=$((checks + 1))
  grep -q '"run_kind": "snapshot"' "$OUT/snap-$fmt/summary.json" ||
    { echo "FAIL simulate-snapshot-$fmt: run_kind"; fail=$((fail + 1)); }
done
checks=$((checks + 1))
cmp -s "$OUT/snap-yaml/pods.csv" "$OUT/snap-json/pods.csv" || { echo "FAIL snapshot: YAML and JSON runs differ"; fail=$((fail + 1)); }
expect simulate-snapshot-bad 2 'snapshot-bad-time.yaml:44: metadata.creationTimestamp: ' -- \
  "$BIN" simulate --snapshot "$SRC/tests/cli/data/snapshot-bad-time.yaml" --out "$OUT/snap-bad"
expect simulate-snapshot-bad-duration 2 "--assume-duration: 'soon' is not a duration" -- \
  "$BIN" simulate --snapshot "$X/cluster.yaml" --assume-duration soon --out "$OUT/snap-bad"
expect simulate-snapshot-add-nodes 0 'fleet +6 nodes, 12 GPUs' -- \
  "$BIN" simulate --snapshot "$X/cluster.yaml" --add-nodes "$SRC/examples/place/t4-node.yaml:2" --out "$OUT/snap-add"
# The known answer (tests/cli/data/snapshot-three-waiting.yaml, worked out by hand there): 3 nodes.
expect plan-snapshot 0 '"count":3' -- \
  "$BIN" plan --snapshot "$SRC/tests/cli/data/snapshot-three-waiting.yaml" --add "$SRC/examples/place/t4-node.yaml" \
  --target 'refused_pct<=0' --json
# plan --price: the cheapest fleet, on tests/cli/data/plan-prices.yaml (worked out by hand there): 2 big + 1 small
# at 8/h; the next cheaper fleet tried, 1 big + 2 small at 7/h, refuses 20 % of the pods.
PRICES="$SRC/tests/cli/data/plan-prices.yaml"
expect plan-price-template 0 'answer: 2 x big \+ 1 x small \(3 nodes\), 8.00 per hour' -- \
  "$BIN" plan "$PRICES" --target 'refused_pct<=0' --price big=3 --price small=2 --max 6
expect plan-price-cheaper-miss 0 'cheaper fleets that miss:.*
  1 x big \+ 2 x small, 7.00/h: refused_pct 20 \(target <= 0, 20 over\)' -- \
  "$BIN" plan "$PRICES" --target 'refused_pct<=0' --price big=3 --price small=2 --max 6
# Per card of a model: A100 1.5/h (2 a node: 3/h), T4 2/h: the same answer.
expect plan-price-card 0 '"count":3,"counts":\{"big":2,"small":1\}.*"prices":\{"big":3.0,"small":2.0\},"cost":8.0' -- \
  "$BIN" plan "$PRICES" --target 'refused_pct<=0' --price A100=1.5 --price T4=2 --max 6 --json
# Exhaustive (scan) agrees with the bisecting search.
expect plan-price-scan 0 'answer: 2 x big \+ 1 x small \(3 nodes\), 8.00 per hour' -- \
  "$BIN" plan "$PRICES" --target 'refused_pct<=0' --price big=3 --price small=2 --max 6 --search scan
expect plan-price-none 1 'answer: no fleet of 0 to 1 nodes per template' -- \
  "$BIN" plan "$PRICES" --target 'refused_pct<=0' --price big=3 --price small=2 --max 1
expect plan-price-missing 2 "--price: no price for the fleet template 'small' \(cards: Tesla T4\)" -- \
  "$BIN" plan "$PRICES" --target 'refused_pct<=0' --price big=3
expect plan-price-word 2 "--price: no price for the fleet template 'small'" -- \
  "$BIN" plan "$PRICES" --target 'refused_pct<=0' --price big=3 --price T=2
expect plan-price-unused 2 "--price: 'H100' names no varied fleet template" -- \
  "$BIN" plan "$PRICES" --target 'refused_pct<=0' --price big=3 --price small=2 --price H100=9
expect plan-price-bad 2 "--price: 'big=free': the cost must be a positive number" -- \
  "$BIN" plan "$PRICES" --target 'refused_pct<=0' --price big=free
report
