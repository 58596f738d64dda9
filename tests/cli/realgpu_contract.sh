#!/usr/bin/env bash
# gpuslice realgpu check and run on the fake driver: the checklist, the
# teaching lab's outcomes, exit codes (0 all as expected / 1 not / 2 bad input).
set -u
BIN="$1"; SRC="$2"; OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source "$(dirname "$0")/expect.sh"
expect check-all-pass 0 '9 of 9 exercises passed' -- \
  "$BIN" realgpu check --driver fake --seconds 10
# The JSON form, at the default window. 5 s windows were the shortest the
# 3-point compute criteria hold in on a loaded 2-core machine (the first ~0.3 s
# of a slice run before NVML's first samples can price a launch), at the edge:
# exercise 7 (force 60%) read 63.4% in 1 of 15 runs here on 2026-11-27.
expect check-json 0 '"passed": true' -- "$BIN" realgpu check --driver fake --json
expect run-lab 0 'Device 0 OOM 4294967296 / 4194304000' -- \
  "$BIN" realgpu run "$SRC/examples/realgpu/teaching-lab.yaml" --driver fake
expect run-lab-json 0 '"reason": "1/1 CardInsufficientMemory"' -- \
  "$BIN" realgpu run "$SRC/examples/realgpu/teaching-lab.yaml" --driver fake --json
printf 'name: x\npods:\n  - name: a\n    gpu: 1\n    gpumem: lots\n    command: ["true"]\n' > "$OUT/bad.yaml"
expect run-bad-field 2 "bad.yaml:5: pods.gpumem" -- "$BIN" realgpu run "$OUT/bad.yaml" --driver fake
printf 'name: x\npods:\n  - name: a\n    gpu: 1\n    command: ["false"]\n    expect_exit: 0\n' > "$OUT/fails.yaml"
expect run-unexpected 1 'NOT as expected' -- "$BIN" realgpu run "$OUT/fails.yaml" --driver fake
expect check-bad-driver 2 "--driver" -- "$BIN" realgpu check --driver quantum
# issue 10: same-name pods, a malformed fake fleet, a command that is not found
D="$SRC/tests/cli/data"
checks=$((checks + 1))
twins=$("$BIN" realgpu run "$D/realgpu-same-name.yaml" --driver fake --json | grep -o 'allocated_bytes[^,]*1048576000' | wc -l)
[ "$twins" = 2 ] || { echo "FAIL same-name pods: $twins of 2 got their 1000 MiB"; fail=$((fail + 1)); }
expect run-bad-fake-gpus 2 "realgpu-bad-fake.yaml:[0-9]+: fake_gpus: card 'Tesla T4:abc:40' is not name:MiB:SMs" -- \
  "$BIN" realgpu run "$D/realgpu-bad-fake.yaml" --driver fake
expect run-command-not-found 1 "command not found \(exit 127\)" -- \
  "$BIN" realgpu run "$D/realgpu-not-found.yaml" --driver fake
expect run-larger-card 1 "too-big +placed GPU-[^ ]+  not started: the scenario expects it unschedulable" -- \
  "$BIN" realgpu run "$D/realgpu-larger-card.yaml" --driver fake
report
