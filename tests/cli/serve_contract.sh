#!/usr/bin/env bash
# gpuslice serve --snapshot: the extender over HTTP (readyz, filter, bind,
# metrics) on a kubectl dump, and bad input refused with exit 2.
set -u
BIN="$1"; SRC="$2"; DATA="$SRC/tests/cli/data"
source "$(dirname "$0")/expect.sh"

expect missing-snapshot 2 'no-such.yaml: cannot open file' -- \
  "$BIN" serve --snapshot "$DATA/no-such.yaml" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0
expect bad-policy 2 'policy' -- \
  "$BIN" serve --snapshot "$DATA/kubectl-cluster.yaml" --policy sideways --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0
expect bad-listen 2 'listen' -- \
  "$BIN" serve --snapshot "$DATA/kubectl-cluster.yaml" --listen 127.0.0.1:http --metrics-listen 127.0.0.1:0
expect no-source 2 'give one of --snapshot FILE, --kubeconfig FILE or --in-cluster' -- \
  "$BIN" serve --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0
expect two-sources 2 'excludes' -- \
  "$BIN" serve --snapshot "$DATA/kubectl-cluster.yaml" --in-cluster --listen 127.0.0.1:0
expect missing-kubeconfig 2 'no-such-kubeconfig: cannot open file' -- \
  "$BIN" serve --kubeconfig "$DATA/no-such-kubeconfig" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0
expect bad-full-report-nodes 2 'full-report-nodes' -- \
  "$BIN" serve --snapshot "$DATA/kubectl-cluster.yaml" --full-report-nodes x --listen 127.0.0.1:0

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=$(free_port); MPORT=$(free_port)
LOG=$(mktemp)
# --full-report-nodes 0: every filter takes the fast path of large clusters
# (the unit tests cover the full report); a pod that fits nowhere still gets
# every node's reason.
"$BIN" serve --snapshot "$DATA/kubectl-cluster.yaml" --listen "127.0.0.1:$PORT" --metrics-listen "127.0.0.1:$MPORT" \
  --full-report-nodes 0 2>"$LOG" &
PID=$!
# The server never outlives this script, whatever happens.
trap 'kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; rm -f "$LOG"' EXIT

for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break
  sleep 0.05
done
URL="http://127.0.0.1:$PORT"
expect readyz 0 '^ok' -- curl -sf "$URL/readyz"
POD='{"Pod":{"metadata":{"name":"vllm-0","namespace":"default","uid":"c0ffee"},"spec":{"containers":[{"name":"main","resources":{"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem":"3000","nvidia.com/gpucores":"30"}}}]}},"NodeNames":["control-1","gpu-t4-1"]}'
expect filter 0 '^\{"Error":"","FailedAndUnresolvableNodes":null,"FailedNodes":null,"NodeNames":\["gpu-t4-1"\],"Nodes":null\}$' -- \
  curl -sf -XPOST -H 'Content-Type: application/json' -d "$POD" "$URL/filter"
expect filter-lowercase-no-fit 0 '"FailedNodes":\{"control-1":"node unregistered","gpu-t4-1":"[^"]*CardInsufficientMemory' -- \
  curl -sf -XPOST -d '{"pod":{"metadata":{"name":"big","uid":"b1"},"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem":"99999"}}}]}},"nodenames":["control-1","gpu-t4-1"]}' "$URL/filter"
expect pass-through 0 '"NodeNames":\["control-1","gpu-t4-1"\]' -- \
  curl -sf -XPOST -d '{"Pod":{"metadata":{"name":"web"},"spec":{"containers":[{"name":"m"}]}},"NodeNames":["control-1","gpu-t4-1"]}' "$URL/filter"
expect bind 0 '^\{"Error":""\}$' -- \
  curl -sf -XPOST -d '{"PodName":"vllm-0","PodNamespace":"default","PodUID":"c0ffee","Node":"gpu-t4-1"}' "$URL/bind"
expect bind-unknown 0 '"Error":"no reservation for pod default/ghost' -- \
  curl -sf -XPOST -d '{"podName":"ghost","podNamespace":"default","podUID":"g","node":"gpu-t4-1"}' "$URL/bind"
expect malformed 0 '^\{"Error":"ExtenderArgs: body is not valid JSON"\} 400$' -- \
  curl -s -w ' %{http_code}' -XPOST -d '{bad' "$URL/filter"
REVIEW='{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"705ab4f5","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"default","operation":"CREATE","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"vllm-1","namespace":"default"},"spec":{"containers":[{"name":"main","resources":{"limits":{"nvidia.com/gpumem":"3000"}}}]}}}}'
expect webhook 0 '"allowed":true,"patch":"[A-Za-z0-9+/=]+","patchType":"JSONPatch".*"uid":"705ab4f5"' -- \
  curl -sf -XPOST -H 'Content-Type: application/json' -d "$REVIEW" "$URL/webhook"
expect webhook-not-a-review 0 ' 400$' -- \
  curl -s -w ' %{http_code}' -XPOST -d '{"kind":"AdmissionReview"}' "$URL/webhook"
expect metrics-card 0 'hami_gpu_memory_allocated_bytes\{device_index="0",device_cores="60",device_type="NVIDIA-Tesla T4",device_uuid="GPU-859b872c-0ba2-97b0-10b4-8b7185c55039",node="gpu-t4-1",zone="vGPU"\} 7340032000' -- \
  curl -sf "http://127.0.0.1:$MPORT/metrics"
expect metrics-decisions 0 'gpuslice_filter_decisions_total\{reason="placed"\} 1' -- \
  curl -sf "http://127.0.0.1:$MPORT/metrics"
kill "$PID"; wait "$PID"; rc=$?
checks=$((checks + 1))
if [ "$rc" != 0 ]; then echo "FAIL stop: serve exited $rc on SIGTERM"; cat "$LOG"; fail=$((fail + 1)); fi
report
