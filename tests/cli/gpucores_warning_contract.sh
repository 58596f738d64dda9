#!/usr/bin/env bash
# nvidia.com/gpucores above 100 (issue 36 point 3): HAMi v2.10's Fit clamps
# Coresreq to 100 ("core limit can't exceed 100", pkg/device/nvidia/device.go),
# so such a pod holds a card exclusively. Every command that reads requests
# says so once per pod or template on stderr, and answers exactly as with
# gpucores 100 (same exit code, same stdout, same pods.csv).
set -u
BIN="$1"; SRC="$2"; OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source "$(dirname "$0")/expect.sh"
D="$SRC/tests/cli/data"; EX="$SRC/examples/place"
T="timeout 60"
HAMI="is above 100; HAMi treats it as 100 \(the whole card's cores: the card exclusively\)"

# The same inputs with gpucores 100: what HAMi actually schedules.
for f in gpucores-pod gpucores-template gpucores-snapshot; do
  sed 's/gpucores: 150/gpucores: 100/; s/gpucores: "150"/gpucores: "100"/' "$D/$f.yaml" > "$OUT/$f-100.yaml"
done
same() {  # same <name> <file-a> <file-b>
  checks=$((checks + 1))
  if ! cmp -s "$2" "$3"; then echo "FAIL $1: $2 and $3 differ"; diff "$2" "$3" | head -10; fail=$((fail + 1)); fi
}
once() {  # once <name> <file> <regex>: the warning is said exactly once
  checks=$((checks + 1))
  local n; n=$(grep -Ec -- "$3" "$2")
  if [ "$n" != 1 ]; then echo "FAIL $1: $n lines match '$3' (want 1)"; cat "$2" | head -10; fail=$((fail + 1)); fi
}

# place
expect place-warns 0 "warning: .*gpucores-pod.yaml:3: pod default/greedy: spec.containers\[0\].resources.nvidia.com/gpucores 150 $HAMI" -- \
  $T "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$D/gpucores-pod.yaml"
$T "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$D/gpucores-pod.yaml" > "$OUT/place-150.txt" 2> "$OUT/place-150.err"
$T "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$OUT/gpucores-pod-100.yaml" > "$OUT/place-100.txt" 2> "$OUT/place-100.err"
same place-answer "$OUT/place-150.txt" "$OUT/place-100.txt"
once place-once "$OUT/place-150.err" "gpucores 150"
checks=$((checks + 1))
if [ -s "$OUT/place-100.err" ]; then echo "FAIL place-100-quiet: gpucores 100 warned"; fail=$((fail + 1)); fi

# simulate, a scenario template: once per template, not per pod
expect simulate-template-warns 0 "warning: .*gpucores-template.yaml:8: template 'greedy': templates.greedy.gpucores 150 $HAMI" -- \
  $T "$BIN" simulate "$D/gpucores-template.yaml" --out "$OUT/t150"
$T "$BIN" simulate "$D/gpucores-template.yaml" --out "$OUT/t150" > /dev/null 2> "$OUT/t150.err"
$T "$BIN" simulate "$OUT/gpucores-template-100.yaml" --out "$OUT/t100" > /dev/null 2>&1
once simulate-template-once "$OUT/t150.err" "gpucores 150"
same simulate-template-pods "$OUT/t150/pods.csv" "$OUT/t100/pods.csv"

# simulate --snapshot: once per pod, on stderr and in summary.json's warnings
expect snapshot-warns 0 "warning: .*gpucores-snapshot.yaml:33: pod ml/over: spec.containers\[0\].resources.nvidia.com/gpucores 150 $HAMI" -- \
  $T "$BIN" simulate --snapshot "$D/gpucores-snapshot.yaml" --out "$OUT/s150"
$T "$BIN" simulate --snapshot "$D/gpucores-snapshot.yaml" --out "$OUT/s150" > /dev/null 2> "$OUT/s150.err"
$T "$BIN" simulate --snapshot "$OUT/gpucores-snapshot-100.yaml" --out "$OUT/s100" > /dev/null 2>&1
once snapshot-once "$OUT/s150.err" "gpucores 150"
same snapshot-pods "$OUT/s150/pods.csv" "$OUT/s100/pods.csv"
expect snapshot-summary 0 "pod ml/over: .*gpucores 150 is above 100" -- cat "$OUT/s150/summary.json"
# Hand-checked answer: 'over' needs an unused card (t4-1), 'small' shares t4-0.
expect snapshot-over-on-t4-1 0 "ml/over,.*t4-1" -- cat "$OUT/s150/pods.csv"

# plan (a template) and defrag (a dump) read requests too
expect plan-warns 0 "warning: .*template 'greedy': templates.greedy.gpucores 150 $HAMI" -- \
  $T "$BIN" plan "$D/gpucores-template.yaml" --target 'refused_pct<=0' --max 4
expect defrag-warns 0 "warning: .*pod ml/over: spec.containers\[0\].resources.nvidia.com/gpucores 150 $HAMI" -- \
  $T "$BIN" defrag --snapshot "$D/gpucores-snapshot.yaml"
report
