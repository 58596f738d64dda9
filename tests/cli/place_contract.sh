#!/usr/bin/env bash
# gpuslice place: exit 0 placed, 1 no node fits, 2 bad input with file:line.
set -u
BIN="$1"; SRC="$2"; EX="$SRC/examples/place"
fail=0; checks=0
expect() {  # expect <name> <want-rc> <regex-on-output> -- command...
  local name="$1" want="$2" pattern="$3"; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  checks=$((checks + 1))
  if [ "$rc" != "$want" ] || ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL $name: rc=$rc (want $want), output:"; echo "$out" | head -20; fail=$((fail + 1))
  fi
}
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
echo "$((checks - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
