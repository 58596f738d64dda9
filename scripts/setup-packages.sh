#!/usr/bin/env bash
# Installs the Debian packages a fresh machine lacks, by what they serve:
#   build   the CLI and its libraries (every user; scripts/run-example.sh)
#   test    the test suites' tools: Catch2, and Prometheus's promtool that
#           checks `gpuslice monitor`'s /metrics (tests/cli/monitor_contract.sh);
#           the prometheus package is a server, so only the tests ask for it
#   python  the Python module: a venv, the headers, pybind11
# Usage: scripts/setup-packages.sh GROUP... (default: build test python)
set -euo pipefail
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(build test python)
packages=()
for g in "${groups[@]}"; do
  case "$g" in
    build) packages+=(cmake g++ make libboost-graph-dev libyaml-cpp-dev libfmt-dev nlohmann-json3-dev libcli11-dev
                      libjs-chart.js libcpp-httplib-dev libssl-dev zlib1g-dev libbrotli-dev pkg-config libsimdjson-dev
                      libyaml-dev libmimalloc-dev) ;;
    test) packages+=(catch2 prometheus) ;;
    python) packages+=(python3-venv python3-dev pybind11-dev) ;;
    *) echo "setup-packages: unknown group '$g' (build, test or python)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
echo "setup: installing Debian packages: ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
# No recommended packages: the build needs none of them (g++'s alone pull in
# hundreds of megabytes on a fresh machine).
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
