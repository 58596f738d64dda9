#!/usr/bin/env bash
# Builds everything and runs every test (Catch2 through CTest, then pytest
# when the Python package is present). Fails loudly on the first failure.
# Usage: scripts/test.sh [build-dir] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
shift || true
scripts/setup.sh "$BUILD_DIR" "$@"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"${JOBS:-$(nproc)}" --timeout 900
if [ -f python/tests/conftest.py ] || ls python/tests/test_*.py >/dev/null 2>&1; then
  scripts/python-env.sh
  .venv/bin/python -m pytest -q python/tests
fi
