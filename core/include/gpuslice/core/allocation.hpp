// Which cards a pod got: the content of hami.io/vgpu-devices-allocated.
#pragma once

#include <cstdint>
#include <vector>

#include "gpuslice/core/model.hpp"

namespace gpuslice::core {

struct DeviceGrant {
  int device = 0;  // position in Node::devices
  int64_t memory_mib = 0;
  int32_t cores = 0;
  friend bool operator==(const DeviceGrant&, const DeviceGrant&) = default;
};

// One entry per container, init containers first; a container without
// devices is an empty entry (the annotation keeps the index mapping).
struct PodAllocation {
  std::vector<std::vector<DeviceGrant>> containers;
  size_t init_count = 0;
  bool empty() const {
    for (const auto& c : containers)
      if (!c.empty()) return false;
    return true;
  }
  friend bool operator==(const PodAllocation&, const PodAllocation&) = default;
};

// What a placed pod holds per card while it runs: init containers run one
// after another (peak of them), app containers together (sum), and the pod
// holds the larger of the two (HAMi CollapseInitContainerUsage).
struct DeviceCharge {
  int device = 0;
  DeviceUsage usage;
};
std::vector<DeviceCharge> effective_charges(const PodAllocation& allocation);

}  // namespace gpuslice::core
