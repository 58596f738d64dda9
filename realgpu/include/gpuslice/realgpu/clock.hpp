// CLOCK_MONOTONIC in seconds: the one clock realgpu's timing uses (the fake
// driver's timeline, NVML's samples and the probe's windows all share it).
#pragma once

#include <time.h>

namespace gpuslice::realgpu {

inline double monotonic_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace gpuslice::realgpu
