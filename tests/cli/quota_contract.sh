#!/usr/bin/env bash
# HAMi v2.10's namespace ResourceQuota through the CLI: place (--quotas, a dump
# given as --existing), simulate (a scenario's quotas:, --quotas), bad input.
set -u
BIN="$1"; SRC="$2"; EX="$SRC/examples/place"; Q="$SRC/examples/quota"
source "$(dirname "$0")/expect.sh"
# Two 4000 MiB pods already count 8000 of the 10000 MiB quota: a third does not fit.
expect quota-refuses 1 '1/1 ResourceQuotaNotFit' -- \
  "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$EX/gpumem-pod-a.yaml" --existing "$EX/two-placed.yaml" \
  --quotas "$Q/default-quota.yaml"
expect quota-shortfall 1 "namespace default's ResourceQuota limits.nvidia.com/gpumem: the pod counts at least 4000 MiB, 2000 of 10000 are left \(2000 over\)" -- \
  "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$EX/gpumem-pod-a.yaml" --existing "$EX/two-placed.yaml" \
  --quotas "$Q/default-quota.yaml"
# Without the placed pods nothing is used yet: it fits.
expect quota-room 0 'fits node hami-workshop' -- \
  "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$EX/gpumem-pod-a.yaml" --quotas "$Q/default-quota.yaml"
# A dump holding the quota (12000 MiB) as --existing: read from there.
expect quota-in-dump 0 'fits node hami-workshop' -- \
  "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$EX/gpumem-pod-a.yaml" --existing "$Q/placed-with-quota.yaml"
expect quota-negative 2 'negative-quota.yaml:8: spec.hard.limits.nvidia.com/gpumem: .*negative' -- \
  "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$EX/gpumem-pod-a.yaml" --quotas "$Q/negative-quota.yaml"
expect quota-validate 0 'ok \(manifests, 0 nodes, 2 pods, 1 ResourceQuotas\)' -- \
  "$BIN" validate "$Q/placed-with-quota.yaml"
expect quota-validate-negative 2 'negative-quota.yaml:8: spec.hard.limits.nvidia.com/gpumem' -- \
  "$BIN" validate "$Q/negative-quota.yaml"
# serve --snapshot refuses it before it listens.
expect quota-serve-negative 2 'negative-quota.yaml:8: spec.hard.limits.nvidia.com/gpumem' -- \
  timeout 20 "$BIN" serve --snapshot "$SRC/tests/cli/data/kubectl-cluster.yaml" --quotas "$Q/negative-quota.yaml" \
  --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
# Research's 2-card jobs wait for its quota, its 4-card job passes the quota alone: refused.
expect quota-scenario 0 '16 placed, 1 refused' -- \
  "$BIN" simulate "$SRC/scenarios/quota-two-teams.yaml" --out "$OUT/run"
expect quota-scenario-summary 0 '"ResourceQuotaNotFit": 1' -- cat "$OUT/run/summary.json"
expect quota-scenario-waits 0 'research-train-2,.*,ResourceQuotaNotFit,' -- cat "$OUT/run/pods.csv"
expect quota-scenario-event 0 '"4 nodes ResourceQuotaNotFit\(a100-0,a100-1,a100-2,a100-3\)"' -- cat "$OUT/run/events.jsonl"
expect quota-sim-negative 2 'negative-quota.yaml:8: spec.hard.limits.nvidia.com/gpumem' -- \
  "$BIN" simulate "$SRC/scenarios/quota-two-teams.yaml" --quotas "$Q/negative-quota.yaml" --out "$OUT/bad"
report
