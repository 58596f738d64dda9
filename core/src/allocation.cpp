#include "gpuslice/core/allocation.hpp"

#include <algorithm>

#include "gpuslice/core/mig.hpp"

namespace gpuslice::core {

int32_t memory_ratio_of(int64_t bytes, int64_t card_bytes) {
  if (card_bytes <= 0) return 0;
  return static_cast<int32_t>(static_cast<double>(bytes) / static_cast<double>(card_bytes) * 100);
}

std::vector<DeviceCharge> effective_charges(const PodAllocation& allocation,
                                            std::span<const Device> devices) {
  auto ratio_of = [&](const DeviceGrant& g) -> int32_t {
    if (g.memory_ratio != kRatioFromMemory) return g.memory_ratio;
    if (g.device < 0 || static_cast<size_t>(g.device) >= devices.size()) return 0;
    return memory_ratio_of(g.memory_bytes(),
                           devices[static_cast<size_t>(g.device)].memory_mib * DeviceUsage::kMiB);
  };
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
        if (g.memory_bytes() > u.memory_bytes()) {
          u.memory_mib = g.memory_mib;
          u.memory_sub_mib = g.memory_sub_mib;
        }
        u.cores = std::max(u.cores, g.cores);
        u.memory_ratio = std::max(u.memory_ratio, ratio_of(g));
      } else {
        auto& u = slot_of(app_sum, g.device);
        u.slots += 1;
        u.memory_mib += g.memory_mib;
        u.memory_sub_mib += g.memory_sub_mib;
        u.cores += g.cores;
        u.memory_ratio += ratio_of(g);
      }
    }
  }
  std::vector<DeviceCharge> out = std::move(app_sum);
  for (const auto& p : init_peak) {
    auto& u = slot_of(out, p.device);
    u.slots = std::max(u.slots, p.usage.slots);
    if (p.usage.memory_bytes() > u.memory_bytes()) {
      u.memory_mib = p.usage.memory_mib;
      u.memory_sub_mib = p.usage.memory_sub_mib;
    }
    u.cores = std::max(u.cores, p.usage.cores);
    u.memory_ratio = std::max(u.memory_ratio, p.usage.memory_ratio);
  }
  // Every MIG instance is held while the pod runs, an init container's too:
  // HAMi reads all of a pod's reservations back (getNodesUsage), whatever
  // the peak of its memory.
  for (const auto& container : allocation.containers)
    for (const auto& g : container)
      if (g.is_mig()) slot_of(out, g.device).mig_slices += mig_slice_counts(g.mig_placement);
  for (const auto& h : allocation.mig_held)
    slot_of(out, h.device).mig_slices += mig_slice_counts(h.placement);
  for (int card : allocation.closes_cards) slot_of(out, card).closed_by += 1;
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.device < b.device; });
  return out;
}

}  // namespace gpuslice::core
