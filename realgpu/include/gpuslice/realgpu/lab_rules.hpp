// The pass rules of the labs' rows, judged by what a seed's claim MEANS.
//
// A slice's memory is shared by the allocations and the context the driver
// made for the process (its footprint: ~260 MiB on the seed's A40, ~100 MiB
// on the T4, ~4 MiB on the A6000, ~518 MiB on an H100 with CUDA 13). So the
// seed's "19500 MiB granted in a 20000 MiB slice" holds only where the
// context is under 500 MiB; the faithful outcome on an H100 is a refusal.
// The rule everywhere: the slice ends exactly at limit - footprint, where the
// footprint is what the view shows taken before allocating (total - free),
// and a refusal's "Device <i> OOM <needed> / <limit>" line says
// needed = footprint + what is held + what was asked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuslice::realgpu {

inline constexpr uint64_t kMiB = 1ULL << 20;
// "20000 MiB", or "19999.5 MiB" when it is not whole.
std::string mib_text(uint64_t bytes);

// "Device <i> OOM <needed> / <limit>" as HAMi-core and the shim write it.
struct OomLine {
  int device = 0;
  uint64_t needed = 0, limit = 0;
};
// The first such line in `text`, nullopt when there is none.
std::optional<OomLine> find_oom_line(std::string_view text);

// What the driver takes for `bytes`, as the shim charges it: whole 2 MiB
// pages from 2 MiB up, 512-byte steps below.
uint64_t driver_charge(uint64_t bytes);

struct AllocationTrial {
  uint64_t limit = 0;          // the slice, bytes
  uint64_t request = 0;        // the one allocation, or each chunk
  bool chunked = false;        // chunks until refused, else one allocation
  uint64_t context = 0;        // footprint: total - free in the view before allocating
  uint64_t granted = 0;        // what the application got
  bool refused = false;        // the application saw an out-of-memory error
  std::optional<OomLine> oom;  // the shim's refusal line
};

// What a slice that is exact does with the trial's requests.
struct AllocationExpectation {
  uint64_t granted = 0;
  bool refused = false;
  uint64_t needed = 0;  // in the refusal line
};
AllocationExpectation expected_outcome(const AllocationTrial& trial);

struct Verdict {
  bool passed = false;
  std::string why;  // what differs, when it failed
};

// A context may grow by one page between the view and the refusal (the
// footprint is measured again after each context or module load).
inline constexpr uint64_t kFootprintSlack = 2 * kMiB;

Verdict judge_allocation(const AllocationTrial& trial);

// A mean utilisation (percent) within `tolerance` points of the cap.
Verdict judge_share(double mean_percent, int cap_percent, double tolerance_points);

}  // namespace gpuslice::realgpu
