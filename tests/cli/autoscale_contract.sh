#!/usr/bin/env bash
# Cluster Autoscaler's node groups for snapshot runs through the CLI:
# simulate and plan --snapshot --node-groups, and bad files (exit 2 naming
# file, line and field). The run is worked by hand in docs/simulator.md.
set -u
BIN="$1"; SRC="$2"; EX="$SRC/examples/autoscale"
source "$(dirname "$0")/expect.sh"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
expect autoscale-snapshot 0 '' -- \
  "$BIN" simulate --snapshot "$EX/cluster.yaml" --node-groups "$EX/node-groups.yaml" --out "$OUT/run" --quiet
expect autoscale-snapshot-cost 0 '"cost": 2.35' -- cat "$OUT/run/summary.json"
expect autoscale-snapshot-members 0 '"members": 3' -- cat "$OUT/run/summary.json"
expect autoscale-snapshot-new-node 0 'ml/train-b-0,.*t4-pool-0' -- cat "$OUT/run/pods.csv"
expect autoscale-snapshot-plan 0 '' -- \
  "$BIN" plan --snapshot "$EX/cluster.yaml" --node-groups "$EX/node-groups.yaml" \
  --add "$SRC/examples/snapshot/a100-node.yaml" --target 'refused_pct<=0' --out "$OUT/plan" --quiet
expect autoscale-no-snapshot 2 'go with --snapshot' -- \
  "$BIN" simulate "$SRC/scenarios/autoscale-burst.yaml" --node-groups "$EX/node-groups.yaml" --out "$OUT/bad"
printf 'node_groups:\n- name: pool\n  node_labels: {cloud.google.com/gke-nodepool: t4-pool}\n  maximum: 4\n' \
  >"$OUT/unknown.yaml"
expect autoscale-unknown-key 2 'unknown.yaml:4: node_groups\[0\]\.maximum: unknown field' -- \
  "$BIN" simulate --snapshot "$EX/cluster.yaml" --node-groups "$OUT/unknown.yaml" --out "$OUT/bad"
printf 'node_groups:\n- name: a\n  node_labels: {cloud.google.com/gke-nodepool: t4-pool}\n  max: 4\n- name: b\n  node_labels: {kubernetes.io/hostname: t4-c}\n  max: 4\n' \
  >"$OUT/two.yaml"
expect autoscale-two-groups 2 "two.yaml:6: node_groups\[1\]\.node_labels: node 't4-c' carries the labels of group 'a' and of group 'b'" -- \
  "$BIN" simulate --snapshot "$EX/cluster.yaml" --node-groups "$OUT/two.yaml" --out "$OUT/bad"
expect autoscale-missing-file 2 'no-such.yaml' -- \
  "$BIN" simulate --snapshot "$EX/cluster.yaml" --node-groups "$OUT/no-such.yaml" --out "$OUT/bad"
# plan --autoscale on scenarios/autoscale-burst.yaml (six 8000 MiB pods for 1 h, one fixed 16000 MiB
# node, a T4 pool at 0.36/h), worked by hand as in tests/sim/autoscaler_test.cpp: max 1 holds one
# node 4380 s of a 7200 s run (two pods wait 3600 s): 0.438 / 2 h = 0.219/h, 5.26/day; max 2..5
# hold two nodes 4380 s of 4380 s (waits 180 s): 0.72/h, 17.28/day.
expect autoscale-plan-wait 0 '"counts":\{"t4-pool":2\},"met":true.*"cost":0\.72,"cheaper_misses".*"autoscale":true,"cost_per_day":17\.28' -- \
  "$BIN" plan "$SRC/scenarios/autoscale-burst.yaml" --autoscale --target 'max_pending_s<=600' --json --quiet
expect autoscale-plan-refused 0 '"counts":\{"t4-pool":1\},"met":true.*"autoscale":true,"cost_per_day":5\.26' -- \
  "$BIN" plan "$SRC/scenarios/autoscale-burst.yaml" --autoscale --target 'refused_pct<=0' --json --quiet
# Brute force: every max from 1 to 5 tried; the same answer as the bisection.
expect autoscale-plan-scan 0 '"counts":\{"t4-pool":2\},"met":true.*"autoscale":true,"cost_per_day":17\.28' -- \
  "$BIN" plan "$SRC/scenarios/autoscale-burst.yaml" --autoscale --search scan --target 'max_pending_s<=600' \
  --json --quiet
expect autoscale-plan-scan-max1 0 't4-pool max 1 +5\.26 +0\.22 +no +3600\.0' -- \
  "$BIN" plan "$SRC/scenarios/autoscale-burst.yaml" --autoscale --search scan --target 'max_pending_s<=600' --quiet
expect autoscale-plan-scan-max5 0 't4-pool max 5 +17\.28 +0\.72 +yes +180\.0' -- \
  "$BIN" plan "$SRC/scenarios/autoscale-burst.yaml" --autoscale --search scan --target 'max_pending_s<=600' --quiet
expect autoscale-plan-text 0 'answer: t4-pool max 2, 17\.28 per day \(0\.72 per hour\)' -- \
  "$BIN" plan "$SRC/scenarios/autoscale-burst.yaml" --autoscale --target 'max_pending_s<=600' --quiet
expect autoscale-plan-none 1 'answer: no max of up to 1 per group meets the targets' -- \
  "$BIN" plan "$SRC/scenarios/autoscale-burst.yaml" --autoscale --max 1 --target 'max_pending_s<=600' --quiet
expect autoscale-plan-fixed 2 'plan --autoscale needs a scenario with node_groups' -- \
  "$BIN" plan "$SRC/scenarios/quota-two-teams.yaml" --autoscale --target 'refused_pct<=0' --quiet
# Two groups (tests/cli/data/autoscale-two-groups.yaml): least-waste grows the T4 pool; with t4 max 2
# both pods run on T4s (2 x 4380 s x 0.36 over 4380 s: 0.72/h, 17.28/day), with t4 max 1 the second
# pod takes an A100 node 10 s later (t4 4380 s x 0.36 + a100 3780 s x 2.0, over 4380 s: 2.09/h,
# 50.06/day). The cheapest combination by bisection and by trying all four agree.
expect autoscale-plan-two 0 '"counts":\{"a100-pool":1,"t4-pool":2\},"met":true.*"cost_per_day":17\.28' -- \
  "$BIN" plan "$SRC/tests/cli/data/autoscale-two-groups.yaml" --autoscale --target 'refused_pct<=0' --json --quiet
expect autoscale-plan-two-scan 0 '"counts":\{"a100-pool":1,"t4-pool":2\},"met":true.*"cost_per_day":17\.28' -- \
  "$BIN" plan "$SRC/tests/cli/data/autoscale-two-groups.yaml" --autoscale --search scan --target 'refused_pct<=0' \
  --json --quiet
expect autoscale-plan-two-mix 0 'a100-pool max 2, t4-pool max 1 +50\.06 +2\.09 +yes' -- \
  "$BIN" plan "$SRC/tests/cli/data/autoscale-two-groups.yaml" --autoscale --search scan --target 'refused_pct<=0' --quiet
# A snapshot's pool (examples/autoscale): the members (3) are the least max. At max 3 train-b waits
# for t4-b (3600 s) and the three nodes stay until 7800 s: 3 x 0.35 = 1.05/h, 25.20/day; at max 4
# (the run of docs/simulator.md) 24180 node-seconds over 7800 s: 1.085/h, 26.04/day.
expect autoscale-plan-snapshot 0 '"counts":\{"t4-pool":3\},"met":true.*"cost_per_day":25\.2' -- \
  "$BIN" plan --snapshot "$EX/cluster.yaml" --node-groups "$EX/node-groups.yaml" --autoscale \
  --target 'refused_pct<=0' --json --quiet
report
