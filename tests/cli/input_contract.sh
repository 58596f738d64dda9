#!/usr/bin/env bash
# Bad input never hangs, crashes or passes silently (issue 10); real kubectl
# dumps work as they are. Exit 2 for bad input, with file, line and field.
set -u
BIN="$1"; SRC="$2"; OUT="$(mktemp -d)"
trap 'chmod -R u+w "$OUT"; rm -rf "$OUT"' EXIT
source "$(dirname "$0")/expect.sh"
D="$SRC/tests/cli/data"; EX="$SRC/examples/place"; S="$SRC/scenarios"
T="timeout 60"

# kubectl get nodes,pods -A -o yaml / -o json as both --nodes and --existing
for dump in kubectl-cluster.yaml kubectl-cluster.json; do
  expect "kubectl-$dump" 0 'fits node gpu-t4-1' -- \
    $T "$BIN" place --nodes "$D/$dump" --existing "$D/$dump" --pod "$D/kubectl-pod-9000.yaml"
  expect "kubectl-$dump-stale-card" 0 "warning: .*GPU-0a1b2c3d-retired-card.*not counted" -- \
    $T "$BIN" place --nodes "$D/$dump" --existing "$D/$dump" --pod "$D/kubectl-pod-9000.yaml"
done
cat "$D/kubectl-cluster.yaml" > "$OUT/twice.yaml"; printf -- '---\n' >> "$OUT/twice.yaml"
cat "$D/placed-alice-again.yaml" >> "$OUT/twice.yaml"
expect existing-twice 2 "pod 'lab/notebook-alice' is listed twice" -- \
  $T "$BIN" place --nodes "$D/kubectl-cluster.yaml" --existing "$OUT/twice.yaml" --pod "$D/kubectl-pod-9000.yaml"

# GPU policies: every front end refuses what is not a policy
for p in 'spread,foo' 'foo,spread' ','; do
  expect "place-gpu-policy-$p" 2 "--gpu-policy: (unknown|empty) GPU policy" -- \
    $T "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$EX/gpumem-pod-a.yaml" --gpu-policy "$p"
done
expect scenario-gpu-policy 2 "bad-gpu-policy.yaml:2: gpu_policy: unknown GPU policy 'bogus'" -- \
  $T "$BIN" simulate "$D/bad-gpu-policy.yaml" --out "$OUT/x"
expect plan-gpu-policy 2 "gpu_policy: unknown GPU policy 'bogus'" -- \
  $T "$BIN" plan "$S/capacity-planning.yaml" --target 'p95_pending_s<=60' --gpu-policy bogus

# --tune and openb inputs
for t in nan 0 -1 1e9; do
  expect "tune-$t" 2 "--tune: .*not a tune factor" -- \
    $T "$BIN" simulate --openb-nodes "$S/data/openb/openb_node_list_gpu_node.csv" \
    --openb-pods "$S/data/openb/openb_pod_list_default.csv" --tune "$t" --out "$OUT/x"
done
expect openb-no-gpu-pod 2 "openb-pods-no-gpu.csv: num_gpu: no pod asks for a GPU" -- \
  $T "$BIN" simulate --openb-nodes "$S/data/openb/openb_node_list_gpu_node.csv" \
  --openb-pods "$D/openb-pods-no-gpu.csv" --out "$OUT/x"
expect openb-unknown-model 2 "openb-nodes-h100.csv:3: model: unknown openb GPU model 'H100'" -- \
  $T "$BIN" simulate --openb-nodes "$D/openb-nodes-h100.csv" \
  --openb-pods "$S/data/openb/openb_pod_list_default.csv" --out "$OUT/x"
expect openb-comma-name 2 "openb-nodes-comma-name.csv:2: sn: node name 'node,a'" -- \
  $T "$BIN" validate "$D/openb-nodes-comma-name.csv"
expect openb-bom-quoted 0 "openb node list, 2 nodes, 3 GPUs" -- $T "$BIN" validate "$D/openb-nodes-bom-quoted.csv"

# numbers
expect seed-negative 2 "seed" -- $T "$BIN" simulate "$S/lab-t4-slices.yaml" --seed -1 --out "$OUT/x"
expect plan-seeds-negative 2 "seeds" -- \
  $T "$BIN" plan "$S/capacity-planning.yaml" --target 'p95_pending_s<=60' --seeds -1
expect target-nan 2 "write METRIC<=VALUE" -- \
  $T "$BIN" plan "$S/capacity-planning.yaml" --target 'p95_pending_s<=nan'
expect at-inf 2 "inf-arrival.yaml:7: pods\[0\].at: must be a finite number" -- \
  $T "$BIN" simulate "$D/inf-arrival.yaml" --out "$OUT/x"
expect zero-mix 2 "generator.mix: every weight is 0" -- $T "$BIN" simulate "$D/zero-mix.yaml" --out "$OUT/x"
expect negative-sigma 2 "generator.sigma: must not be negative" -- \
  $T "$BIN" simulate "$D/negative-sigma.yaml" --out "$OUT/x"
expect huge-count 2 "fleet\[0\].count: must be between 0 and 10000000" -- \
  $T "$BIN" simulate "$D/bad-numbers.yaml" --out "$OUT/x"
expect duplicate-key 2 "duplicate-key.yaml:3: policy: duplicate key \(first at line 2\)" -- \
  $T "$BIN" simulate "$D/duplicate-key.yaml" --out "$OUT/x"
expect gpumemory-typo 2 "typo-pod.yaml:10: spec.containers\[0\].resources.limits.nvidia.com/gpumemory: unknown resource" -- \
  $T "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$D/typo-pod.yaml"

# FIFO: a never-placeable pod is refused, the rest are not blocked behind it
expect fifo-never-fits 0 "fifo-never-fits" -- $T "$BIN" simulate "$D/fifo-never-fits.yaml" --out "$OUT/fifo"
# pods.csv ends with origin,cards,shortfall (empty outside snapshot runs).
checks=$((checks + 1))
if ! grep -q '^huge-1,.*,refused,.*,CardInsufficientMemory,,,$' "$OUT/fifo/pods.csv" ||
   [ "$(grep -c '^small-.*,completed,' "$OUT/fifo/pods.csv")" != 5 ]; then
  echo "FAIL fifo-never-fits pods.csv:"; cat "$OUT/fifo/pods.csv"; fail=$((fail + 1))
fi

# messages
mkdir -p "$OUT/ro"; chmod a-w "$OUT/ro"
if [ "$(id -u)" != 0 ]; then
  expect out-unwritable 2 "--out: cannot" -- $T "$BIN" simulate "$S/lab-t4-slices.yaml" --out "$OUT/ro/sub"
fi
expect out-is-file 2 "--out: " -- $T "$BIN" simulate "$S/lab-t4-slices.yaml" --out "$D/typo-pod.yaml"
expect nodes-directory 2 "is a folder" -- $T "$BIN" place --nodes "$D" --pod "$EX/gpumem-pod-a.yaml"
expect refusal-numbers 1 "needs 45000 MiB .* the best card .* has 15360 MiB" -- \
  $T "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$EX/oversized-pod.yaml"
expect version 0 "^gpuslice [0-9]+\.[0-9]+\.[0-9]+" -- $T "$BIN" --version
expect validate-good 0 "kubectl-cluster.json: ok \(manifests, 2 nodes, 5 pods\)" -- \
  $T "$BIN" validate "$D/kubectl-cluster.yaml" "$D/kubectl-cluster.json" "$S/lab-t4-slices.yaml" \
  "$S/data/openb/openb_node_list_gpu_node.csv" "$S/data/openb/openb_pod_list_default.csv"
checks=$((checks + 1))
if "$BIN" validate "$D/typo-pod.yaml" 2>/dev/null | grep -q typo-pod; then echo "FAIL validate printed ok for a bad file"; fail=$((fail + 1)); fi
for want in "typo-pod.yaml:10: " "t4-node.yaml: ok" "duplicate-key.yaml:3: "; do
  expect "validate-every-error-$want" 2 "$want" -- \
    $T "$BIN" validate "$D/typo-pod.yaml" "$EX/t4-node.yaml" "$D/duplicate-key.yaml"
done
report
