// What the benchmarks measure a run with: wall seconds and the process's
// peak resident memory.
#pragma once

#include <sys/resource.h>

#include <chrono>

namespace gpuslice::bench {

inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

inline double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux reports KiB
}

}  // namespace gpuslice::bench
