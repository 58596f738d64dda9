#!/usr/bin/env bash
# The main job: build the CLI, then ask a what-if of the bundled HAMi cluster
# snapshot (examples/snapshot/cluster.yaml: 3 GPU nodes, 9 GPU pods running,
# 7 Pending): where would the queue go under HAMi's binpack and under FGD,
# which pods wait for departures and which can never be placed? Each run's
# outputs go to out/example/<policy>/, the comparison to
# out/example/compare.html and compare.csv.
#
# Only what the answer needs comes first: the Debian packages the CLI builds
# with, the `gpuslice` binary alone (no tests, no benchmarks), then the run.
# The Python package comes after the answer (skip it with
# GPUSLICE_SKIP_PYTHON=1): its packages, a venv with pandas, and the module
# linking the libraries just built into .venv. scripts/test.sh then reuses
# this build folder and its flags (scripts/setup.sh's), adding the tests.
# Each phase's time is printed, and when the answer came.
set -euo pipefail
cd "$(dirname "$0")/.."
SNAPSHOT="${1:-examples/snapshot/cluster.yaml}"
phase_start=$SECONDS
phase_done() {
  echo "run-example: $1 took $((SECONDS - phase_start)) s (total $SECONDS s)"
  phase_start=$SECONDS
}

scripts/setup-packages.sh build
phase_done "apt (the build's Debian packages)"
# The example's configuration: the tests and benchmarks are test.sh's.
# Tests stay off only when this folder has not configured them yet, so a
# run after scripts/test.sh keeps its tests.
tests=OFF
grep -qs '^GPUSLICE_BUILD_TESTS:BOOL=ON' build/CMakeCache.txt && tests=ON
SETUP_PACKAGES=build BUILD_TARGETS=none scripts/setup.sh build \
  -DGPUSLICE_BUILD_TESTS=$tests -DGPUSLICE_BUILD_BENCH=$tests
phase_done "configure"
cmake --build build -j"${JOBS:-$(nproc)}" --target gpuslice
phase_done "build (the gpuslice binary)"
# Pods without gpuslice.io/expected-duration are assumed to run 3 hours.
build/bin/gpuslice simulate --snapshot "$SNAPSHOT" --policy hami-binpack,fgd --assume-duration 3h --out out/example
phase_done "run"
echo "run-example: the answer came after $SECONDS s"
echo "open in a browser: out/example/compare.html (side by side), out/example/<policy>/report.html (each run)"
if [ -z "${GPUSLICE_SKIP_PYTHON:-}" ]; then
  echo "run-example: now the Python package (after the answer; GPUSLICE_SKIP_PYTHON=1 skips it)"
  scripts/setup-packages.sh python
  scripts/python-env.sh --runtime
  phase_done "Python (packages, venv, module)"
  echo "python: .venv/bin/python -c 'import gpuslice' (docs/python.md); notebooks in notebooks/ (scripts/test.sh adds their tools)"
fi
