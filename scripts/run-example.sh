#!/usr/bin/env bash
# The main job: build, then ask a what-if of the bundled HAMi cluster
# snapshot (examples/snapshot/cluster.yaml: 3 GPU nodes, 9 GPU pods running,
# 7 Pending): where would the queue go under HAMi's binpack and under FGD,
# which pods wait for departures and which can never be placed? Each run's
# outputs go to out/example/<policy>/; then the Python package is installed
# into .venv (skip with GPUSLICE_SKIP_PYTHON=1).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
SNAPSHOT="${1:-examples/snapshot/cluster.yaml}"
POLICIES=(hami-binpack fgd)
for policy in "${POLICIES[@]}"; do
  # Pods without gpuslice.io/expected-duration are assumed to run 3 hours.
  build/bin/gpuslice simulate --snapshot "$SNAPSHOT" --policy "$policy" --assume-duration 3h \
    --out "out/example/$policy"
  echo
done
python3 - "${POLICIES[@]}" <<'PY'
import csv, json, sys
policies = sys.argv[1:]
runs = {p: (json.load(open(f"out/example/{p}/summary.json")),
            list(csv.DictReader(open(f"out/example/{p}/pods.csv")))) for p in policies}
print("comparison of the queue (pending at the snapshot):")
print(f"  {'pod':<26}" + "".join(f"{p:>32}" for p in policies))
def where(row):
    if row["status"] == "refused":
        return "refused: " + row["reason"]
    if not row["start"]:
        return "still pending"
    wait = float(row["pending_seconds"])
    return row["node"] + (f" after {wait / 3600:.1f} h" if wait > 0 else " at once")
names = [r["name"] for r in runs[policies[0]][1] if r["origin"] == "queue"]
for name in names:
    cells = [where(next(r for r in runs[p][1] if r["name"] == name)) for p in policies]
    print(f"  {name:<26}" + "".join(f"{c:>32}" for c in cells))
def row(label, f):
    print(f"  {label:<26}" + "".join(f"{f(runs[p][0]):>32}" for p in policies))
row("placed / refused / waiting", lambda s: f"{s['placements']} / {s['refused']} / {s['pending_at_end']}")
row("p95 pending", lambda s: f"{s['pending_seconds']['p95'] / 3600:.1f} h")
row("GPU allocation over time", lambda s: f"{s['alloc_gpu_pct_time_weighted']:.1f}% (peak {s['peak_alloc_gpu_pct']:.1f}%)")
PY
for policy in "${POLICIES[@]}"; do echo "report: out/example/$policy/report.html"; done
if [ -z "${GPUSLICE_SKIP_PYTHON:-}" ]; then
  scripts/python-env.sh
  echo "python: .venv/bin/python -c 'import gpuslice' (docs/python.md); notebooks in notebooks/"
fi
