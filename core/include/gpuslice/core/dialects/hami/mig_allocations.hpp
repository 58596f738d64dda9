// hami.io/vgpu-mig-allocations (HAMi v2.10.0 pkg/device/nvidia/
// mig_allocations.go): one JSON object per MIG instance a pod was granted,
// beside hami.io/vgpu-devices-allocated. The scheduler writes the
// reservation; the device plugin adds the instance's runtime identity once
// it made it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/core/model.hpp"

namespace gpuslice::core::codec {

inline constexpr std::string_view kMigAllocationsAnnotation = "hami.io/vgpu-mig-allocations";

struct MigReservation {
  int64_t container_index = 0;  // in the pod's device list: init containers first
  int64_t device_index = 0;     // within that container's grants
  std::string gpu_uuid;
  std::string profile;
  MigPlacement placement;
  // Runtime identity, all or none (the device plugin's).
  std::string mig_uuid;
  std::optional<uint32_t> gpu_instance_id, compute_instance_id;
  friend bool operator==(const MigReservation&, const MigReservation&) = default;
};

// HAMi EncodeMigAllocations: the MIG grants in container then device
// order, compact, keys in HAMi's order. Empty when the pod holds no MIG
// instance (HAMi then writes no annotation).
std::string encode_mig_allocations(const PodAllocation& allocation, const Node& node);

// HAMi DecodeMigAllocations: "" is none; bad JSON, an incomplete entry, a
// partial runtime identity or a repeated (container, device) pair throws
// CodecError with HAMi's words.
std::vector<MigReservation> decode_mig_allocations(std::string_view text);

}  // namespace gpuslice::core::codec
