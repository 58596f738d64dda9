// What a preloaded library adds to a driver call, measured with the probe's
// `time` command run without it and with it (shim_bench and the overhead
// rows of `gpuslice realgpu labs`).
#pragma once

#include <string>
#include <vector>

#include "gpuslice/realgpu/toolkit.hpp"

namespace gpuslice::realgpu {

enum class Preload {
  None,   // the driver alone
  Shim,   // libgpuslice_shim.so
  Other,  // another library in its place (HAMi-core's libvgpu.so)
};

struct CallTiming {
  const Toolkit& toolkit;
  std::string other_library;     // the path for Preload::Other
  double timeout_seconds = 600;  // per probe process
};

// Runs `processes` probes at once with `probe_args` (e.g. {"time", "--op",
// "launch", "--count", "1000"}); with a preload, in a slice with a memory
// limit as large as any card (so every allocation goes through the slice's
// accounting) and `cores` percent of compute (0: no compute limit, default
// policy). Returns the mean of their ns_per_op. Throws std::runtime_error
// with the probe's output when one fails or runs past its time.
double mean_ns_per_call(const CallTiming& setup, Preload preload, int processes,
                        const std::vector<std::string>& probe_args, int cores = 0);

}  // namespace gpuslice::realgpu
