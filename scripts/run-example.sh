#!/usr/bin/env bash
# The main job: build the CLI, then ask a what-if of the bundled HAMi cluster
# snapshot (examples/snapshot/cluster.yaml: 3 GPU nodes, 9 GPU pods running,
# 7 Pending): where would the queue go under HAMi's binpack and under FGD,
# which pods wait for departures and which can never be placed? Each run's
# outputs go to out/example/<policy>/, the comparison to
# out/example/compare.html and compare.csv. Then the Python package is
# installed into .venv (skip with GPUSLICE_SKIP_PYTHON=1), its module linking
# the libraries just built. Only what the example needs is built: the test
# suites and benchmarks are scripts/test.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_TARGETS=gpuslice scripts/setup.sh build
SNAPSHOT="${1:-examples/snapshot/cluster.yaml}"
# Pods without gpuslice.io/expected-duration are assumed to run 3 hours.
build/bin/gpuslice simulate --snapshot "$SNAPSHOT" --policy hami-binpack,fgd --assume-duration 3h --out out/example
echo "open in a browser: out/example/compare.html (side by side), out/example/<policy>/report.html (each run)"
if [ -z "${GPUSLICE_SKIP_PYTHON:-}" ]; then
  scripts/python-env.sh --runtime
  echo "python: .venv/bin/python -c 'import gpuslice' (docs/python.md); notebooks in notebooks/ (scripts/test.sh adds their tools)"
fi
