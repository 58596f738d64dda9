// hami.io/vgpu-devices-allocated: "UUID,NVIDIA,<MiB>,<cores>:" per card,
// each container closed by ';', init containers first.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/core/model.hpp"

namespace gpuslice::core::codec {

inline constexpr std::string_view kAllocatedAnnotation = "hami.io/vgpu-devices-allocated";
inline constexpr std::string_view kToAllocateAnnotation = "hami.io/vgpu-devices-to-allocate";
inline constexpr std::string_view kAssignedNodeAnnotation = "hami.io/vgpu-node";

struct GrantText {
  std::string uuid;
  std::string vendor;
  int64_t memory_mib = 0;
  int32_t cores = 0;
};
using AllocationText = std::vector<std::vector<GrantText>>;  // per container

// The card a grant names: a MIG grant's UUID carries "[template-instance]"
// after the card's, which HAMi strips when it counts usage (getNodesUsage).
inline std::string_view card_of(std::string_view grant_uuid) {
  return grant_uuid.substr(0, grant_uuid.find('['));
}

std::string encode_allocation(const PodAllocation& allocation, const Node& node);
AllocationText decode_allocation_text(std::string_view text);  // throws CodecError
// Resolves UUIDs against a node; throws CodecError for an unknown card.
PodAllocation resolve_allocation(const AllocationText& text, const Node& node, size_t init_count);

}  // namespace gpuslice::core::codec
