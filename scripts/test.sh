#!/usr/bin/env bash
# Builds everything and runs every test (Catch2 through CTest, then pytest
# when the Python package is present). Fails loudly on the first failure.
# Reuses what scripts/run-example.sh built in the same folder (one set of
# flags: scripts/setup.sh's), adding the tests and benchmarks.
# Usage: scripts/test.sh [build-dir] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
shift || true
scripts/setup.sh "$BUILD_DIR" -DGPUSLICE_BUILD_TESTS=ON -DGPUSLICE_BUILD_BENCH=ON "$@"
echo "test.sh: set-up and build took $SECONDS s"
started=$SECONDS
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"${JOBS:-$(nproc)}" --timeout 900
echo "test.sh: ctest took $((SECONDS - started)) s"
if [ -f python/tests/conftest.py ] || ls python/tests/test_*.py >/dev/null 2>&1; then
  started=$SECONDS
  scripts/python-env.sh
  .venv/bin/python -m pytest -q python/tests
  echo "test.sh: Python set-up and pytest took $((SECONDS - started)) s"
fi
