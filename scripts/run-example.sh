#!/usr/bin/env bash
# The main job: build, simulate the bundled example scenario and print its
# summary (outputs in out/example/), then install the Python package into
# .venv (skip with GPUSLICE_SKIP_PYTHON=1).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
SCENARIO="${1:-scenarios/inference-fleet.yaml}"
build/bin/gpuslice simulate "$SCENARIO" --out out/example --seed 42
echo "outputs: out/example/ (summary.json, timeline.csv, pods.csv, events.jsonl, card_use.csv)"
if [ -z "${GPUSLICE_SKIP_PYTHON:-}" ]; then
  scripts/python-env.sh
  echo "python: .venv/bin/python -c 'import gpuslice' (docs/python.md); notebooks in notebooks/"
fi
