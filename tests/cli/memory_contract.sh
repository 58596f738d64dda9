#!/usr/bin/env bash
# The memory guard (docs/cli.md#memory, docs/simulator.md#memory): a run whose
# estimate does not fit in the memory left is refused before it starts, exit
# 2 with the estimate, the limit and how to lower it; never a SIGABRT.
# The limit is set on the process (prlimit --as, as `ulimit -v` does), so the
# checks hold on any machine whatever its memory.
set -u
BIN="$1"; SRC="$2"; OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source "$(dirname "$0")/expect.sh"
S="$SRC/scenarios"
# 3 GiB of address space: far more than the small runs below need (with the
# allocator's reservations), far less than the refused runs' estimates.
LIMIT="prlimit --as=3221225472 --"
# Refusals come before any generating or reading: within seconds, not minutes.
T="timeout 20"

# 50 million generated pods (the most a run may hold): the guard refuses
# before generating, with the estimate, the limit and what to lower.
sed 's/pods: 3000/pods: 50000000/' "$S/inference-fleet.yaml" > "$OUT/huge.yaml"
expect simulate-huge-pods 2 \
  "memory guard: a run of 50000000 pods on 16 nodes needs about [0-9.]+ GiB, but the address-space limit \(RLIMIT_AS, ulimit -v\) leaves [0-9.]+ (GiB|MiB); refused before it starts \(lower it: fewer pods" -- \
  $T $LIMIT "$BIN" simulate "$OUT/huge.yaml" --out "$OUT/huge" --quiet
# The same with ulimit -v (KiB), the shell's spelling of the same limit.
expect simulate-huge-ulimit 2 "needs about .* GiB, but the address-space limit" -- \
  $T bash -c "ulimit -v 3145728 && exec \"\$0\" simulate \"$OUT/huge.yaml\" --out \"$OUT/huge\" --quiet" "$BIN"
# The same scenario at its own size runs under the same limit: the guard
# refuses what does not fit, not everything.
expect simulate-fits 0 "outputs" -- $T $LIMIT "$BIN" simulate "$S/inference-fleet.yaml" --out "$OUT/fits" --quiet

# plan: the largest fleet tried (here a million nodes) is refused up front.
expect plan-huge-fleet 2 "memory guard: a run of [0-9]+ pods on 1000[0-9]{3} nodes needs about" -- \
  $T $LIMIT "$BIN" plan "$S/capacity-planning.yaml" --target "refused_pct<=0" --max 1000000 --quiet

# study: its parallel runs count together.
N="$S/data/openb/openb_node_list_gpu_node.csv"; P="$S/data/openb/openb_pod_list_default.csv"
expect study-many-jobs 2 "memory guard: a run of [0-9]+ pods on [0-9]+ nodes, 4000 runs at once needs about" -- \
  $T $LIMIT "$BIN" study --openb-nodes "$N" --openb-pods "$P" --policies fgd --seeds 1-4000 --jobs 4000 \
  --out "$OUT/study" --quiet

# A dump too big to read (a sparse 8 GiB file: no disk is used) is refused
# before it is read, by simulate --snapshot and defrag alike.
truncate -s 8G "$OUT/huge-dump.json"
expect snapshot-huge 2 "memory guard: reading '.*huge-dump.json' \(8.0 GiB\) needs about" -- \
  $T $LIMIT "$BIN" simulate --snapshot "$OUT/huge-dump.json" --out "$OUT/snap" --quiet
expect defrag-huge 2 "memory guard: reading '.*huge-dump.json' \(8.0 GiB\) needs about" -- \
  $T $LIMIT "$BIN" defrag --snapshot "$OUT/huge-dump.json" --for-queue --out "$OUT/defrag"

# The last line: an allocation that fails anyway (validate has no estimate
# and reads the whole file) is a message and exit 2, not a SIGABRT.
expect validate-out-of-memory 2 "gpuslice: out of memory" -- \
  $T $LIMIT "$BIN" validate "$OUT/huge-dump.json"

report
