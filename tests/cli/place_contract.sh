#!/usr/bin/env bash
# gpuslice place: exit 0 placed, 1 no node fits, 2 bad input with file:line.
set -u
BIN="$1"; SRC="$2"; EX="$SRC/examples/place"
source "$(dirname "$0")/expect.sh"
expect placed-json 0 '"node": "hami-workshop"' -- \
  "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$EX/gpumem-pod-a.yaml" --existing "$EX/two-placed.yaml" --json
expect placed-text 0 'fits node hami-workshop \(score 7.21\)' -- \
  "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$EX/gpumem-pod-a.yaml" --existing "$EX/two-placed.yaml"
expect no-fit 1 '"node": null' -- \
  "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$EX/oversized-pod.yaml" --json
expect no-fit-reason 1 '1/1 CardInsufficientMemory' -- \
  "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$EX/oversized-pod.yaml" --json
expect missing-file 2 'no-such.yaml: cannot open file' -- \
  "$BIN" place --nodes "$EX/no-such.yaml" --pod "$EX/gpumem-pod-a.yaml"
expect bad-yaml 2 'bad-node.yaml:[0-9]+: metadata.annotations.hami.io/node-nvidia-register: ' -- \
  "$BIN" place --nodes "$EX/bad-node.yaml" --pod "$EX/gpumem-pod-a.yaml"
expect bad-flag 2 'node-policy' -- \
  "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$EX/gpumem-pod-a.yaml" --node-policy sideways
# The seed document's Koordinator pod (docs/dialects.md): the annotation it shows, exactly.
D="$SRC/examples/dialects"
expect seed-koordinator 0 'scheduling.koordinator.sh/device-allocated: \{"gpu":\[\{"minor":1,"resources":\{"koordinator.sh/gpu-core":"50","koordinator.sh/gpu-memory":"11520Mi","koordinator.sh/gpu-memory-ratio":"50"\}\}\]\}$' -- \
  "$BIN" place --nodes "$D/koordinator-nodes.yaml" --pod "$D/seed-koordinator-pod.yaml" --existing "$D/koordinator-running.yaml" --policy koordinator
expect kai-share 0 'label runai-gpu-group: [0-9a-f-]{36}' -- \
  "$BIN" place --nodes "$D/kai-nodes.yaml" --pod "$D/kai-half-pod.yaml" --policy kai-binpack
expect kai-enforcement 0 'KAI enforces nothing by default' -- \
  "$BIN" place --nodes "$D/kai-nodes.yaml" --pod "$D/kai-half-pod.yaml" --policy kai-binpack
expect unknown-policy 2 "--policy: unknown policy 'kai'" -- \
  "$BIN" place --nodes "$D/kai-nodes.yaml" --pod "$D/kai-half-pod.yaml" --policy kai
expect untranslatable 2 'kai-eighth-pod.yaml:[0-9]+: gpu-fraction: cannot be said to hami-binpack: 0.125 is not a whole percent' -- \
  "$BIN" place --nodes "$EX/t4-node.yaml" --pod "$D/kai-eighth-pod.yaml" --policy hami-binpack
report
