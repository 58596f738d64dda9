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
report
