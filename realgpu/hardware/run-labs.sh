#!/usr/bin/env bash
# The seed labs on this machine's GPU, for a machine that has only a build of
# gpuslice (bin/gpuslice, bin/gpuslice-probe, lib/libgpuslice_shim.so, lib/fakecuda/).
#
#   run-labs.sh [--build DIR] [OPTIONS for `gpuslice realgpu labs`...]
#
# DIR defaults to $GPUSLICE_BUILD, else ../../build beside this script. The
# report goes to ${LABS_OUT:-labs-<host>-<UTC time>}/labs.json and labs.md:
# send labs.json back. The exit status is the labs' own (0 every row that can
# be shown passed, 1 a row failed, 2 a bad option, 3 the pieces are missing).
# Without a GPU the same command runs the labs on the fake driver.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${GPUSLICE_BUILD:-$here/../../build}"
if [ "${1:-}" = "--build" ]; then
  build="${2:?--build needs a directory}"
  shift 2
fi
for piece in bin/gpuslice bin/gpuslice-probe lib/libgpuslice_shim.so; do
  [ -e "$build/$piece" ] || { echo "run-labs: no $piece under $build (build it, or pass --build DIR)" >&2; exit 3; }
done
out="${LABS_OUT:-labs-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
echo "run-labs: build $build, report in $out" >&2
if command -v nvidia-smi >/dev/null; then
  nvidia-smi -L >&2 || true
else
  echo "run-labs: no nvidia-smi here (the labs use the real driver if libcuda.so.1 answers, else the fake)" >&2
fi
python3 -c 'import torch; print("run-labs: PyTorch", torch.__version__, "CUDA available:", torch.cuda.is_available())' >&2 \
  2>/dev/null || echo "run-labs: no PyTorch for python3: the probe stands in for the seeds' PyTorch steps" >&2
"$build/bin/gpuslice" realgpu labs --lab all --out "$out" "$@"
