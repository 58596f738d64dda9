#!/usr/bin/env bash
# The main job: build, then simulate the bundled example scenario and print
# its summary. Outputs land in out/example/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
SCENARIO="${1:-scenarios/inference-fleet.yaml}"
build/bin/gpuslice simulate "$SCENARIO" --out out/example --seed 42
echo "outputs: out/example/ (summary.json, timeline.csv, pods.csv, events.jsonl)"
