#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for SECONDS (default 60).
# ASan's quarantine is kept small: with the default 256 MiB it dominates RSS
# and trips libFuzzer's memory limit although nothing leaks.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-60}"
command -v clang++ >/dev/null || { echo "fuzz: clang++ not found, skipped"; exit 0; }
# The libraries as a unity build, as scripts/setup.sh builds them (the fuzz
# targets themselves compile file by file: cmake/GpusliceUnity.cmake).
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DGPUSLICE_BUILD_FUZZ=ON -DGPUSLICE_BUILD_TESTS=OFF \
  -DGPUSLICE_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON >/dev/null
TARGETS=(registration allocation quantity manifest kube_reader scenario openb extender label_selector)
# Only the fuzz targets and the libraries they link: the CLI, realgpu,
# monitor and plan are not fuzzed, and building them took ~40 % of this step.
cmake --build build-fuzz -j"${JOBS:-$(nproc)}" --target "${TARGETS[@]/#/fuzz_}" >/dev/null
for t in "${TARGETS[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  cp -n fuzz/corpus/$t/* "build-fuzz/corpus/$t/" 2>/dev/null || true
  echo "fuzz_$t: ${SECONDS_EACH}s"
  # -timeout: one input may take 10 s at most (libFuzzer's default is 20 min,
  # which let a hang eat the whole CI budget); the outer timeout bounds the
  # run even if reporting a finding itself gets stuck.
  ASAN_OPTIONS=quarantine_size_mb=32 timeout -k 10 "$((SECONDS_EACH + 120))" \
    build-fuzz/bin/fuzz_$t -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="build-fuzz/" "build-fuzz/corpus/$t" 2>&1 | grep -E "^Done|ERROR|SUMMARY" || true
  # compgen, not ls: ls of four patterns fails when any one matches nothing,
  # so a crash alone (no leak, timeout or oom file beside it) passed unseen.
  if compgen -G "build-fuzz/crash-*" >/dev/null || compgen -G "build-fuzz/leak-*" >/dev/null ||
    compgen -G "build-fuzz/timeout-*" >/dev/null || compgen -G "build-fuzz/oom-*" >/dev/null; then
    echo "fuzz: fuzz_$t found a failing input:"; ls build-fuzz/crash-* build-fuzz/leak-* build-fuzz/timeout-* build-fuzz/oom-* 2>/dev/null || true
    exit 1
  fi
done
