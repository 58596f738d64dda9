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
expect simulate-openb-fgd 0 'at 130% arrived +93.01%' -- \
  "$BIN" simulate --openb-nodes "$S/data/openb/openb_node_list_gpu_node.csv" \
  --openb-pods "$S/data/openb/openb_pod_list_default.csv" --policy fgd --tune 1.3 --seed 42 --no-card-use --out "$OUT/fgd"
checks=$((checks + 1)); [ ! -e "$OUT/fgd/card_use.csv" ] || { echo "FAIL --no-card-use wrote card_use.csv"; fail=$((fail + 1)); }
expect simulate-bad-policy 2 "--policy: unknown policy 'sideways'" -- \
  "$BIN" simulate "$S/lab-t4-slices.yaml" --policy sideways --out "$OUT/x"
expect plan-answer 0 'answer: 6 nodes \(6 x a100\)' -- \
  "$BIN" plan "$S/capacity-planning.yaml" --target 'p95_pending_s<=60' --target 'refused_pct<=1'
expect plan-json 0 '"count":6' -- \
  "$BIN" plan "$S/capacity-planning.yaml" --target 'p95_pending_s<=60' --json
expect plan-none-in-range 1 'none between 1 and 4 nodes' -- \
  "$BIN" plan "$S/capacity-planning.yaml" --target 'p95_pending_s<=60' --max 4
expect plan-bad-target 2 "no metric 'p95_wait'" -- \
  "$BIN" plan "$S/capacity-planning.yaml" --target 'p95_wait<=60'
report
