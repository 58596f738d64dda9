#!/usr/bin/env bash
# Creates .venv (if missing) with the gpuslice package of this checkout: the
# pybind11 module is compiled on its own against the static libraries of the
# C++ build (build/, or GPUSLICE_BUILD_DIR; only the libraries the module
# links are built there if missing), so nothing is compiled twice; the
# package's Python files are installed beside it. Idempotent and quick when
# nothing changed (CMake's own incremental build; the requirements are
# reinstalled when their file changes).
# Usage: scripts/python-env.sh [--runtime]
#   --runtime: only what the package needs to run (python/requirements.txt),
#              not the test and notebook tools (python/requirements-dev.txt)
# PYTHON=python3.12 picks the interpreter; JOBS the parallel compile jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
VENV=.venv
BUILD="${GPUSLICE_BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
REQUIREMENTS=python/requirements-dev.txt
[ "${1:-}" = "--runtime" ] && REQUIREMENTS=python/requirements.txt
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)

if [ ! -x "$VENV/bin/python" ]; then
  echo "python-env: creating $VENV with $("$PY" --version 2>&1)"
  "$PY" -m venv "$VENV"
  "${PIP[@]}" install -U pip
fi

req_stamp="$VENV/.gpuslice-$(basename "$REQUIREMENTS" .txt)"
if [ ! -f "$req_stamp" ] || [ "$REQUIREMENTS" -nt "$req_stamp" ] || [ python/requirements.txt -nt "$req_stamp" ]; then
  echo "python-env: installing $REQUIREMENTS"
  touch "$req_stamp.new"
  "${PIP[@]}" install -r "$REQUIREMENTS"
  mv "$req_stamp.new" "$req_stamp"
fi

# The libraries the module links, from the C++ build (configured here if it
# is not yet; scripts/setup.sh has installed the Debian packages).
if [ ! -f "$BUILD/gpuslice-libraries.cmake" ]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" >/dev/null
fi
cmake --build "$BUILD" -j"$JOBS" --target gpuslice_defrag gpuslice_plan gpuslice_sim gpuslice_core >/dev/null
# The module alone, linking them; then installed into the environment.
MODULE_BUILD="$BUILD/python-module"
# Configured afresh for another interpreter or another pybind11 (a build
# configured before the requirements brought pip's pybind11 keeps Debian's).
pybind11_dir=$("$VENV/bin/python" -m pybind11 --cmakedir)
if [ ! -f "$MODULE_BUILD/CMakeCache.txt" ] || ! grep -q "^Python_EXECUTABLE:.*=$PWD/$VENV/bin/python$" "$MODULE_BUILD/CMakeCache.txt" \
   || [ "$(cat "$MODULE_BUILD/.gpuslice-pybind11-dir" 2>/dev/null)" != "$pybind11_dir" ]; then
  rm -rf "$MODULE_BUILD"
  cmake -S python -B "$MODULE_BUILD" -DGPUSLICE_BUILD_DIR="$PWD/$BUILD" -DPython_EXECUTABLE="$PWD/$VENV/bin/python" \
    -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" -Dpybind11_DIR="$pybind11_dir" >/dev/null
  echo "$pybind11_dir" > "$MODULE_BUILD/.gpuslice-pybind11-dir"
fi
cmake --build "$MODULE_BUILD" -j"$JOBS" | { grep -E "error|warning" || true; }
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
installed=$(cmake --install "$MODULE_BUILD" --component python --prefix "$site" | grep -c '^-- Installing' || true)
[ "$installed" = 0 ] || echo "python-env: installed gpuslice into $site ($installed of its files changed)"
"$VENV/bin/python" -c "import gpuslice" || { echo "python-env: gpuslice does not import from $VENV"; exit 1; }
