// The fake's one clock: CLOCK_MONOTONIC, in nanoseconds. It is shared by
// every process on the machine, so kernel intervals written by one process
// are comparable with "now" in another.
#pragma once

#include <time.h>

#include <cerrno>
#include <cstdint>

namespace gpuslice::fake {

inline std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Sleeps until the monotonic clock reads `deadline_ns` (absolute, so a
// signal that interrupts the sleep cannot stretch it).
inline void sleep_until_ns(std::int64_t deadline_ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(deadline_ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(deadline_ns % 1'000'000'000);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace gpuslice::fake
