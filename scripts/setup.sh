#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks, then configures and builds.
# Usage: scripts/setup.sh [build-dir] [extra cmake args...]
# BUILD_TARGETS="gpuslice ..." builds only those targets (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
shift || true

DEB_PACKAGES=(cmake g++ make libboost-graph-dev libyaml-cpp-dev libfmt-dev catch2 pybind11-dev
              nlohmann-json3-dev libcli11-dev python3-venv python3-dev libjs-chart.js libcpp-httplib-dev libssl-dev
              zlib1g-dev libbrotli-dev pkg-config libsimdjson-dev prometheus libyaml-dev libmimalloc-dev)
missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

JOBS="${JOBS:-$(nproc)}"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "$@" >/dev/null
# shellcheck disable=SC2086 # a list of target names
cmake --build "$BUILD_DIR" -j"$JOBS" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
