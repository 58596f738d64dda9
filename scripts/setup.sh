#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks, then configures and builds.
# Usage: scripts/setup.sh [build-dir] [extra cmake args...]
# BUILD_TARGETS="gpuslice ..." builds only those targets (default: all);
# BUILD_TARGETS=none only configures.
# SETUP_PACKAGES="build" installs only those package groups
# (scripts/setup-packages.sh; default: build test python).
#
# One set of build flags for every script (run-example.sh, test.sh, CI), so
# each reuses what the one before built in the same folder: -O2 without
# debug information (a TU compiles ~20 % faster and the links shrink; the
# sanitizer build keeps -g through its Debug type), and a unity build
# (sources compiled in batches: the heavy headers, CLI11 above all at ~3 s a
# TU, are read once a batch). Arguments given here come after, so they win:
# -DCMAKE_UNITY_BUILD=OFF for file-by-file rebuilds while editing.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
shift || true

# shellcheck disable=SC2086 # a list of group names
scripts/setup-packages.sh ${SETUP_PACKAGES:-build test python}

JOBS="${JOBS:-$(nproc)}"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
  -DCMAKE_UNITY_BUILD=ON "$@" >/dev/null
[ "${BUILD_TARGETS:-}" = none ] && exit 0
# shellcheck disable=SC2086 # a list of target names
cmake --build "$BUILD_DIR" -j"$JOBS" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
