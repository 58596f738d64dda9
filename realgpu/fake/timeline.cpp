#include "timeline.hpp"

#include <algorithm>

namespace gpuslice::fake::timeline {

namespace {

// Visits intervals overlapping (from, to] newest first, clipped to it.
template <typename Visit>
void for_each_clipped(const StateLayout& state, std::size_t device, std::int64_t from, std::int64_t to,
                      Visit visit) {
  const DeviceRecord& record = state.devices[device];
  const std::uint64_t count = record.interval_count;
  const std::uint64_t oldest = count > kRingSize ? count - kRingSize : 0;
  for (std::uint64_t i = count; i > oldest; --i) {
    const BusyInterval& interval = record.ring[(i - 1) % kRingSize];
    // Intervals are in start and end order, so once one ends before the
    // window every older one does too.
    if (interval.end_ns <= from) break;
    const std::int64_t start = std::max(interval.start_ns, from);
    const std::int64_t end = std::min(interval.end_ns, to);
    if (end > start) visit(interval.pid, end - start);
  }
}

}  // namespace

std::int64_t enqueue(StateLayout& state, std::size_t device, std::int32_t pid,
                     std::span<const std::int64_t> durations_ns, std::int64_t now_ns) {
  DeviceRecord& record = state.devices[device];
  std::int64_t end = 0;
  for (const std::int64_t duration : durations_ns) {
    const std::int64_t start = std::max(now_ns, record.busy_until_ns);
    end = start + duration;
    // Slot first, then the count, then busy_until: a death between steps
    // leaves at worst an unpublished slot (see repair()).
    record.ring[record.interval_count % kRingSize] = BusyInterval{start, end, pid, 0};
    ++record.interval_count;
    record.busy_until_ns = end;
  }
  return end;
}

std::int64_t busy_ns(const StateLayout& state, std::size_t device, std::int64_t from_ns, std::int64_t to_ns) {
  std::int64_t total = 0;
  for_each_clipped(state, device, from_ns, to_ns, [&](std::int32_t, std::int64_t ns) { total += ns; });
  return total;
}

std::vector<ProcessBusy> busy_by_process(const StateLayout& state, std::size_t device, std::int64_t from_ns,
                                         std::int64_t to_ns) {
  std::vector<ProcessBusy> result;
  for_each_clipped(state, device, from_ns, to_ns, [&](std::int32_t pid, std::int64_t ns) {
    auto it = std::find_if(result.begin(), result.end(), [&](const ProcessBusy& p) { return p.pid == pid; });
    if (it == result.end())
      result.push_back({pid, ns});
    else
      it->busy_ns += ns;
  });
  return result;
}

void repair(StateLayout& state) {
  for (std::size_t d = 0; d < state.device_count && d < kMaxDevices; ++d) {
    DeviceRecord& record = state.devices[d];
    if (record.interval_count == 0) continue;
    const BusyInterval& newest = record.ring[(record.interval_count - 1) % kRingSize];
    record.busy_until_ns = std::max(record.busy_until_ns, newest.end_ns);
  }
}

}  // namespace gpuslice::fake::timeline
