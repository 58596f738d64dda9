#!/usr/bin/env bash
# Creates .venv (if missing) with python/requirements-dev.txt and the gpuslice
# package built from this checkout (scikit-build-core: the pybind11 module over
# the static C++ libraries). Idempotent and quick when nothing changed: the
# requirements are reinstalled when the file changes, the package when a C++
# or Python source is newer than the last install.
# Usage: scripts/python-env.sh        (PYTHON=python3.12 to pick the interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
VENV=.venv
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)

if [ ! -x "$VENV/bin/python" ]; then
  echo "python-env: creating $VENV with $("$PY" --version 2>&1)"
  "$PY" -m venv "$VENV"
  "${PIP[@]}" install -U pip
fi

req_stamp="$VENV/.gpuslice-requirements"
if [ ! -f "$req_stamp" ] || [ python/requirements-dev.txt -nt "$req_stamp" ]; then
  echo "python-env: installing python/requirements-dev.txt"
  touch "$req_stamp.new"
  "${PIP[@]}" install -r python/requirements-dev.txt
  mv "$req_stamp.new" "$req_stamp"
fi

pkg_stamp="$VENV/.gpuslice-installed"
stale=""
if [ ! -f "$pkg_stamp" ] || ! "$VENV/bin/python" -c "import gpuslice._gpuslice" >/dev/null 2>&1; then
  stale=yes
else
  for src in pyproject.toml CMakeLists.txt cmake core sim plan defrag python/CMakeLists.txt python/src python/gpuslice; do
    [ -e "$src" ] || continue
    if [ -n "$(find "$src" -type f -newer "$pkg_stamp" -print -quit)" ]; then stale=yes; break; fi
  done
fi
if [ -n "$stale" ]; then
  echo "python-env: building and installing gpuslice (pip install .)"
  touch "$pkg_stamp.new"  # sources edited during the build make the next run rebuild
  CMAKE_BUILD_PARALLEL_LEVEL="${JOBS:-$(nproc)}" "${PIP[@]}" install --no-build-isolation --no-deps .
  mv "$pkg_stamp.new" "$pkg_stamp"
fi
