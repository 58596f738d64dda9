#!/usr/bin/env bash
# Measures the memory guard's constants (sim/src/memory_estimate.cpp): peak
# RSS (/usr/bin/time -v, "Maximum resident set size") of `gpuslice simulate`
# on generated scenarios, two pod counts at a fixed fleet (bytes per pod,
# with and without --no-card-use) and two fleet sizes at a fixed pod count
# (bytes per node). Usage: bench/memory_per_pod.sh [build/bin/gpuslice]
set -euo pipefail
bin=${1:-build/bin/gpuslice}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A fleet of `nodes` 4-card L4 nodes; `pods` pods of the inference mix at a
# rate that keeps about half the fleet busy (most pods placed), or at 50x
# that rate when `busy` is "saturated" (most refused or waiting).
scenario() {
  local nodes=$1 pods=$2 rate=$3
  cat >"$work/s.yaml" <<EOF
name: memory-bench
policy: hami-binpack
fleet:
- template: {name: l4, model: NVIDIA L4, cards: 4, card_memory_mib: 23034, slots: 10, cpu_milli: 48000, memory_mib: 196608}
  count: $nodes
templates:
  embed-small: {gpu: 1, gpumem: 3000, gpucores: 15, cpu: "2", memory: 8Gi}
  llm-7b: {gpu: 1, gpumem: 16000, gpucores: 50, cpu: "4", memory: 32Gi}
  llm-13b-tp2: {gpu: 2, gpumem: 20000, gpucores: 60, cpu: "8", memory: 64Gi}
generator:
  pods: $pods
  arrival: poisson
  rate_per_s: $rate
  duration: exponential
  mean_s: 600
  mix:
  - {template: embed-small, weight: 6}
  - {template: llm-7b, weight: 3}
  - {template: llm-13b-tp2, weight: 1}
EOF
}

# Peak RSS in KiB of one run.
peak_kib() {
  /usr/bin/time -v "$bin" simulate "$work/s.yaml" --out "$work/out" --quiet "$@" 2>&1 >/dev/null |
    awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}'
}

slope() {  # label, kib_a, kib_b, units_a, units_b
  echo "$1: $2 KiB at $4, $3 KiB at $5: $(((($3 - $2) * 1024) / ($5 - $4))) bytes each"
}

# Bytes per pod: 100 nodes (mean 600 s x rate 0.5/s = 300 pods running of a 400-card fleet).
scenario 100 200000 0.5
a=$(peak_kib)
a_nc=$(peak_kib --no-card-use)
scenario 100 400000 0.5
b=$(peak_kib)
b_nc=$(peak_kib --no-card-use)
slope "per pod, card use kept" "$a" "$b" 200000 400000
slope "per pod, --no-card-use" "$a_nc" "$b_nc" 200000 400000
# Saturated: 25 pods/s on the same fleet (most pods wait, then are refused).
scenario 100 200000 25
s_a=$(peak_kib)
scenario 100 400000 25
s_b=$(peak_kib)
slope "per pod, saturated" "$s_a" "$s_b" 200000 400000
# Bytes per node: 20,000 pods on 1,000 and 5,000 nodes.
scenario 1000 20000 0.5
n_a=$(peak_kib)
scenario 5000 20000 0.5
n_b=$(peak_kib)
slope "per node" "$n_a" "$n_b" 1000 5000
