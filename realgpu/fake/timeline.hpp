// The per-device kernel timeline shared by all processes. A device runs one
// kernel at a time: a launch, under the state lock, starts its kernel at
// max(now, end of the last queued kernel) and records the busy interval.
// Nothing actually runs; time passing is the only effect, which is what
// utilisation, synchronisation and a compute limiter can observe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "shared_state.hpp"

namespace gpuslice::fake::timeline {

// Queues kernels of the given durations back to back for `pid`; returns
// the end time of the last one (0 when `durations_ns` is empty).
std::int64_t enqueue(StateLayout& state, std::size_t device, std::int32_t pid,
                     std::span<const std::int64_t> durations_ns, std::int64_t now_ns);

struct ProcessBusy {
  std::int32_t pid;
  std::int64_t busy_ns;
};

// Busy time inside (from_ns, to_ns], counting only what has run by `to_ns`
// (pass now). Kernels older than the ring's reach are not counted.
std::int64_t busy_ns(const StateLayout& state, std::size_t device, std::int64_t from_ns, std::int64_t to_ns);
std::vector<ProcessBusy> busy_by_process(const StateLayout& state, std::size_t device, std::int64_t from_ns,
                                         std::int64_t to_ns);

// After a holder died mid-launch: make sure the next kernel cannot start
// before the newest recorded one ends.
void repair(StateLayout& state);

}  // namespace gpuslice::fake::timeline
