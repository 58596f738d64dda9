// The memory guard (docs/cli.md#memory): a run whose estimate does not fit
// in the memory this process may still use is refused before it starts,
// with the estimate, the limit and how to lower it, rather than climbing
// until the kernel kills it or an allocation aborts it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gpuslice/core/errors.hpp"

namespace gpuslice::cli {

// The memory this process may still use and which limit says so: the least
// of the machine's MemAvailable, RLIMIT_AS and RLIMIT_DATA less what the
// process already maps, and its cgroup's limit less its use (v2 memory.max,
// v1 memory.limit_in_bytes, on the process's own cgroup and its parents).
struct MemoryRoom {
  uint64_t bytes = UINT64_MAX;
  std::string limit;  // "MemAvailable", "RLIMIT_AS (ulimit -v)", "cgroup memory.max", ... ; empty: none known
};
MemoryRoom memory_room();

// The same from given texts (tests): each limit's figures, nullopt when not set.
struct MemoryFacts {
  std::optional<uint64_t> mem_available;                  // /proc/meminfo MemAvailable
  std::optional<uint64_t> rlimit_as, address_space_used;  // RLIMIT_AS, VmSize
  std::optional<uint64_t> rlimit_data, data_used;         // RLIMIT_DATA, VmData
  std::optional<uint64_t> cgroup_limit, cgroup_used;      // the tightest cgroup's limit and use
  std::string cgroup_file;                                // which file gave cgroup_limit
};
MemoryRoom memory_room_of(const MemoryFacts& facts);

// A run refused because its estimate is above the room: bad input (exit 2,
// Python's gpuslice.MemoryLimitError, an InputError), with both figures.
class MemoryLimitError : public core::InputError {
 public:
  MemoryLimitError(const std::string& what_runs, uint64_t estimate, const MemoryRoom& room,
                   const std::string& how_to_lower);
  uint64_t estimate_bytes() const { return estimate_; }
  uint64_t limit_bytes() const { return limit_; }

 private:
  uint64_t estimate_;
  uint64_t limit_;
};

// Throws MemoryLimitError when `estimate` bytes do not fit in `room`.
// what_runs: "simulate: 50000000 pods on 1000 nodes"; how_to_lower: what the
// user can change ("fewer generator.pods, --no-card-use").
void guard_memory(const std::string& what_runs, uint64_t estimate, const std::string& how_to_lower,
                  const MemoryRoom& room = memory_room());

// "1.5 GiB", "320 MiB": how the guard's messages write a size.
std::string size_text(uint64_t bytes);

}  // namespace gpuslice::cli
