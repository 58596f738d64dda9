#!/usr/bin/env bash
# gpuslice monitor: its command line (exit 2 on bad input, naming the flag or
# file:line), and its /metrics (one pass with --once, and served over HTTP)
# over a container folder the shim really wrote on the fake driver, checked
# by Prometheus's own parser (promtool check metrics, Debian's prometheus
# package). Without promtool the test is skipped (77), except under CI=true.
set -u
BIN="$1"; SRC="$2"; OUT="$(mktemp -d)"
BUILD="$(cd "$(dirname "$BIN")/.." && pwd)"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$OUT"' EXIT
source "$(dirname "$0")/expect.sh"
PROMTOOL="$(command -v promtool || true)"
if [ -z "$PROMTOOL" ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: promtool is not installed, and CI=true (scripts/setup.sh installs Debian's prometheus)"; exit 1
  fi
  echo "SKIP: promtool is not installed (apt-get install prometheus)"; exit 77
fi
PODS="$SRC/tests/monitor/data/node-pods.yaml"
HOOK="$OUT/vgpu"

# The command line.
expect no-source 2 "give one of --kubeconfig FILE, --in-cluster, --pods CLUSTER.yaml or --no-pods" -- \
  "$BIN" monitor --hook-path "$HOOK" --once
expect two-sources 2 "excludes" -- "$BIN" monitor --no-pods --pods "$PODS" --once
expect clean-stale-blind 2 "--clean-stale" -- "$BIN" monitor --no-pods --clean-stale --once
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers: 3\n' > "$OUT/bad.yaml"
expect bad-pods 2 "bad.yaml:[0-9]+: spec.containers" -- "$BIN" monitor --pods "$OUT/bad.yaml" --once
expect bad-listen 2 "--metrics-listen" -- "$BIN" monitor --no-pods --metrics-listen nowhere:x
expect bad-period 2 "feedback-period" -- "$BIN" monitor --no-pods --feedback-period 0 --once

# A container of pod vllm-0 (serving/vllm-0, container "server") holding
# 1024 MiB of a 3000 MiB slice under the shim, as HAMi's device plugin lays
# the folder out.
DIR="$HOOK/containers/6f1c2a9e-0000-4000-8000-000000000001_server"
mkdir -p "$DIR" "$OUT/lock"
export LD_LIBRARY_PATH="$BUILD/lib/fakecuda" GPUSLICE_FAKE_STATE_DIR="$OUT" GPUSLICE_FAKE_GPUS="Tesla T4:15360:40"
LD_PRELOAD="$BUILD/lib/libgpuslice_shim.so" GPUSLICE_HOST_LOCK_DIR="$OUT/lock" CUDA_DEVICE_MEMORY_LIMIT_0=3000m \
  CUDA_DEVICE_MEMORY_SHARED_CACHE="$DIR/1b4e28ba-2fa1-11d2-883f-0016d3cca427.cache" \
  "$BUILD/bin/gpuslice-probe" alloc --chunk-mib 512 --max-mib 1024 --hold-ms 20000 > "$OUT/probe.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -s "$OUT/probe.out" ] && break; sleep 0.1; done
grep -q '"allocated_bytes":1073741824' "$OUT/probe.out" || { echo "FAIL: the probe did not hold 1024 MiB"; cat "$OUT/probe.out"; exit 1; }

ONCE=("$BIN" monitor --hook-path "$HOOK" --pods "$PODS" --node-name gpu-1 --once)
expect once-used 0 'hami_vgpu_memory_used_bytes\{container="server",device_uuid="GPU-[0-9a-f-]{36}",namespace="serving",pod="vllm-0",vdevice_index="0",zone="vGPU"\} 1.073741824e\+09' -- "${ONCE[@]}"
expect once-limit 0 'hami_vgpu_memory_limit_bytes\{.*pod="vllm-0".*\} 3.145728e\+09' -- "${ONCE[@]}"
expect once-host 0 'hami_host_gpu_memory_used_bytes\{device_index="0",device_type="NVIDIA-Tesla T4",device_uuid="GPU-[0-9a-f-]{36}",node="gpu-1",zone="vGPU"\} 1.073741824e\+09' -- "${ONCE[@]}"
expect once-legacy 0 'vGPU_device_memory_usage_in_bytes\{ctrname="server",.*podname="vllm-0",podnamespace="serving"' -- \
  "${ONCE[@]}" --legacy-metrics
"${ONCE[@]}" > "$OUT/once.prom" 2>/dev/null
expect promtool-once 0 "" -- sh -c "\"$PROMTOOL\" check metrics < \"$OUT/once.prom\""
# HAMi's legacy names are camelCase: promtool parses them and only lints the
# names (exit 3), never a parse error (exit 1).
"${ONCE[@]}" --legacy-metrics > "$OUT/legacy.prom" 2>/dev/null
expect promtool-legacy 3 "^(HostCoreUtilization|HostGPUMemoryUsage|vGPU_device_memory_(limit|usage)_in_bytes) metric names should be written in 'snake_case'" -- \
  sh -c "\"$PROMTOOL\" check metrics < \"$OUT/legacy.prom\""
checks=$((checks + 1))
lint=$("$PROMTOOL" check metrics < "$OUT/legacy.prom" 2>&1 | grep -vc "metric names should be written in 'snake_case'")
[ "$lint" = 0 ] || { echo "FAIL promtool-legacy: lint beyond HAMi's camelCase names"; fail=$((fail + 1)); }
expect no-pods-uid 0 'pod="6f1c2a9e-0000-4000-8000-000000000001"' -- \
  "$BIN" monitor --hook-path "$HOOK" --no-pods --node-name gpu-1 --once

# Served: /metrics over HTTP, parsed by promtool; SIGTERM ends it with 0.
PORT=$((20000 + RANDOM % 20000))
"$BIN" monitor --hook-path "$HOOK" --pods "$PODS" --node-name gpu-1 --metrics-listen "127.0.0.1:$PORT" \
  --feedback-period 0.2 > "$OUT/monitor.log" 2>&1 &
MON=$!
PIDS+=($MON)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/metrics" -o "$OUT/served.prom" && break; sleep 0.1; done
expect served-promtool 0 "" -- sh -c "\"$PROMTOOL\" check metrics < \"$OUT/served.prom\""
expect served-container 0 'pod="vllm-0"' -- cat "$OUT/served.prom"
kill -TERM "$MON"
wait "$MON"; rc=$?
checks=$((checks + 1))
[ "$rc" = 0 ] || { echo "FAIL monitor exit after SIGTERM: $rc"; cat "$OUT/monitor.log"; fail=$((fail + 1)); }
report
