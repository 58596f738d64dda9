#include "gpuslice/core/allocation.hpp"

#include <algorithm>

namespace gpuslice::core {

std::vector<DeviceCharge> effective_charges(const PodAllocation& allocation) {
  std::vector<DeviceCharge> init_peak, app_sum;
  auto slot_of = [](std::vector<DeviceCharge>& list, int device) -> DeviceUsage& {
    for (auto& c : list)
      if (c.device == device) return c.usage;
    list.push_back({device, {}});
    return list.back().usage;
  };
  for (size_t i = 0; i < allocation.containers.size(); ++i) {
    for (const auto& g : allocation.containers[i]) {
      if (i < allocation.init_count) {
        // Init containers run one after another: one slot, the largest demand.
        auto& u = slot_of(init_peak, g.device);
        u.slots = 1;
        u.memory_mib = std::max(u.memory_mib, g.memory_mib);
        u.cores = std::max(u.cores, g.cores);
      } else {
        auto& u = slot_of(app_sum, g.device);
        u.slots += 1;
        u.memory_mib += g.memory_mib;
        u.cores += g.cores;
      }
    }
  }
  std::vector<DeviceCharge> out = std::move(app_sum);
  for (const auto& p : init_peak) {
    auto& u = slot_of(out, p.device);
    u.slots = std::max(u.slots, p.usage.slots);
    u.memory_mib = std::max(u.memory_mib, p.usage.memory_mib);
    u.cores = std::max(u.cores, p.usage.cores);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.device < b.device; });
  return out;
}

}  // namespace gpuslice::core
