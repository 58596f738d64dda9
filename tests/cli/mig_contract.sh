#!/usr/bin/env bash
# MIG as HAMi v2.10 places it (issue 33): the bundled H100 MIG node, both
# annotations in `place --json`, and bad MIG input refused with exit 2
# naming file, line and field.
set -u
BIN="$1"; SRC="$2"; OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source "$(dirname "$0")/expect.sh"
D="$SRC/tests/cli/data"; M="$SRC/examples/mig"
T="timeout 60"
GPU=GPU-6a1f2c3e-9b7d-4e21-8c55-0f3b2a1d9e01

# Beside the running 3g.40gb at slices 4-7, two 1g.10gb instances go to slices 3 then 2.
expect mig-place 0 "fits node h100-mig-1" -- \
  $T "$BIN" place --nodes "$M/h100-mig-node.yaml" --existing "$M/running.yaml" --pod "$M/two-instances-pod.yaml"
expect mig-place-json 0 "\"hami.io/vgpu-mig-allocations\": \"\[\{\\\\\"containerIndex\\\\\":0,\\\\\"deviceIndex\\\\\":0,\\\\\"gpuUUID\\\\\":\\\\\"$GPU\\\\\",\\\\\"profile\\\\\":\\\\\"1g.10gb\\\\\",\\\\\"placement\\\\\":\{\\\\\"start\\\\\":3,\\\\\"size\\\\\":1\}\},\{\\\\\"containerIndex\\\\\":0,\\\\\"deviceIndex\\\\\":1,.*\\\\\"start\\\\\":2," -- \
  $T "$BIN" place --json --nodes "$M/h100-mig-node.yaml" --existing "$M/running.yaml" --pod "$M/two-instances-pod.yaml"
expect mig-place-grants 0 "\"hami.io/vgpu-devices-allocated\": \"$GPU,NVIDIA,9984,13:$GPU,NVIDIA,9984,13:;\"" -- \
  $T "$BIN" place --json --nodes "$M/h100-mig-node.yaml" --existing "$M/running.yaml" --pod "$M/two-instances-pod.yaml"
expect mig-device-config 0 "fits node h100-mig-1" -- \
  $T "$BIN" place --device-config "$M/device-config.yaml" --nodes "$M/h100-mig-node.yaml" \
  --existing "$M/running.yaml" --pod "$M/two-instances-pod.yaml"

# Bad registrations: exit 2, file:line, the annotation and the profile's field.
expect mig-overlap 2 "mig-overlap-node.yaml:[0-9]+: .*hami.io/node-nvidia-register.*migProfiles\[0\]\.placements\[1\] \(start 2, size 4\) overlaps placements\[0\]" -- \
  $T "$BIN" place --nodes "$D/mig-overlap-node.yaml" --pod "$M/two-instances-pod.yaml"
expect mig-past-card 2 "mig-past-card-node.yaml:[0-9]+: .*migProfiles\[0\]\.placements\[0\] \(start 8, size 1\) exceeds the card's 8 memory slices" -- \
  $T "$BIN" place --nodes "$D/mig-past-card-node.yaml" --pod "$M/two-instances-pod.yaml"

# Device configs HAMi's validation refuses: exit 2, file:line: field.
expect mig-allowlist-profile 2 "mig-bad-allowlist.yaml:6: nvidia.migProfileAllowlist\[0\]\.profiles\[1\]: invalid MIG profile \"2g\"" -- \
  $T "$BIN" place --device-config "$D/mig-bad-allowlist.yaml" --nodes "$M/h100-mig-node.yaml" --pod "$M/two-instances-pod.yaml"
expect mig-allowlist-models 2 "mig-allowlist-no-models.yaml:4: nvidia.migProfileAllowlist\[0\]: MIG profile allowlist must define models and profiles" -- \
  $T "$BIN" place --device-config "$D/mig-allowlist-no-models.yaml" --nodes "$M/h100-mig-node.yaml" --pod "$M/two-instances-pod.yaml"

# The same node as a snapshot: the running 3g.40gb is read back from its
# annotations, the pending pod placed beside it, and the metrics count each
# instance as the profile's memory (40448 + 2 x 9984 of 81559 MiB = 74.08 %).
# Fragmentation: the card's free 25.90 % (of memory, its binding dimension)
# serves the typical 2 x 1g pod (two slices left) but not the 3g one: half.
{ cat "$M/h100-mig-node.yaml"; echo ---; cat "$M/running.yaml"; echo ---; cat "$M/two-instances-pod.yaml"; } > "$OUT/cluster.yaml"
expect mig-simulate 0 "fragmented GPU +12.95% of capacity" -- $T "$BIN" simulate --snapshot "$OUT/cluster.yaml" --out "$OUT/sim"
expect mig-simulate-queue 0 "ml/inference,queue,.*,running,h100-mig-1,\"$GPU,NVIDIA,9984,13:$GPU,NVIDIA,9984,13:;\"" -- cat "$OUT/sim/pods.csv"
expect mig-simulate-memory 0 "\"final_alloc_memory_pct\": 74.076" -- cat "$OUT/sim/summary.json"
expect mig-simulate-placed 0 "\"placements\": 1," -- cat "$OUT/sim/summary.json"
expect mig-simulate-reservation 0 "hami.io/vgpu-mig-allocations: \[\{\"containerIndex\":0,\"deviceIndex\":0,\"gpuUUID\":\"$GPU\",\"profile\":\"1g.10gb\",\"placement\":\{\"start\":3," -- \
  $T "$BIN" simulate --snapshot "$OUT/cluster.yaml" --out "$OUT/sim3"
expect mig-report-instances 0 "MIG 1g.10gb at slice 3</div><div class=\"note\">MIG 1g.10gb at slice 2" -- cat "$OUT/sim/report.html"
expect mig-simulate-device-config 2 "mig-bad-allowlist.yaml:6: nvidia.migProfileAllowlist\[0\]\.profiles\[1\]" -- \
  $T "$BIN" simulate --snapshot "$OUT/cluster.yaml" --device-config "$D/mig-bad-allowlist.yaml" --out "$OUT/sim2"
# A scenario fleet in MIG mode (scenarios/h100-mig.yaml, worked by hand in tests/sim/scenario_test.cpp):
# the registration generated from the card facts, a 1g waiting for slices until the 3g leaves.
expect mig-scenario 0 "4 arrived, 4 placed, 0 refused" -- $T "$BIN" simulate "$SRC/scenarios/h100-mig.yaml" --out "$OUT/scn"
expect mig-scenario-wait 0 "small-1g-3,small-1g,.*,30.000,100.000,.*,CardMigTopologyInfeasible," -- cat "$OUT/scn/pods.csv"
expect mig-scenario-validate 0 "ok" -- $T "$BIN" validate "$SRC/scenarios/h100-mig.yaml"
printf 'fleet:\n- template: {name: h, model: Tesla T4, card_memory_mib: 15360, mode: mig}\ntemplates: {t: {gpu: 1}}\npods: [{at: 0, template: t}]\n' > "$OUT/bad-mig.yaml"
expect mig-scenario-unknown-card 2 "bad-mig.yaml:2: fleet\[0\]\.template\.model: .*no card named 'Tesla T4'" -- \
  $T "$BIN" simulate "$OUT/bad-mig.yaml" --out "$OUT/bad"
report
