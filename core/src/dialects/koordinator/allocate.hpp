// DeviceShare's GPU allocator (allocator_gpu.go GPUAllocator.Allocate):
// the partition table for whole-card requests, then the topology tree
// when every card has one, else the score-ordered fallback
// (device_allocator.go defaultAllocateDevices). Internal to the policy.
#pragma once

#include <optional>
#include <vector>

#include "gpuslice/core/dialects/koordinator/policy.hpp"
#include "gpuslice/core/reasons.hpp"

namespace gpuslice::core::koordinator {

struct Allocated {
  std::vector<int> positions;    // cards in Node::devices, in the order Koordinator lists them
  std::optional<Reason> reason;  // why not, when positions is empty
};

Allocated allocate(const Node& node, const std::vector<KoordinatorCard>& cards,
                   const KoordinatorRequirement& r, const KoordinatorConfig& config);

}  // namespace gpuslice::core::koordinator
