// KAI's texts: a pod's GPU-sharing annotations (gpu-fraction, gpu-memory,
// gpu-fraction-num-devices, gpu-fraction-container-name) checked as KAI's
// admission checks them; a node's GPUs from GPU feature discovery's labels
// (nvidia.com/gpu.count, nvidia.com/gpu.memory) and its nvidia.com/gpu
// allocatable; the GPU group a shared pod joins (label runai-gpu-group),
// received-resource-type, and the reservation pod KAI's binder runs per
// new group. Errors are CodecErrors in KAI's words.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/core/codec/object_facts.hpp"
#include "gpuslice/core/model.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core::codec {

inline constexpr std::string_view kKaiGpuFraction = "gpu-fraction";
inline constexpr std::string_view kKaiGpuMemory = "gpu-memory";
inline constexpr std::string_view kKaiNumDevices = "gpu-fraction-num-devices";
inline constexpr std::string_view kKaiContainerName = "gpu-fraction-container-name";
inline constexpr std::string_view kKaiGroupLabel = "runai-gpu-group";
inline constexpr std::string_view kKaiReceivedType = "received-resource-type";
inline constexpr std::string_view kKaiReservationNamespace = "kai-resource-reservation";
inline constexpr std::string_view kKaiGpuIndexAnnotation = "run.ai/reserve_for_gpu_index";
inline constexpr std::string_view kGfdGpuMemory = "nvidia.com/gpu.memory";
inline constexpr std::string_view kGfdGpuCount = "nvidia.com/gpu.count";
inline constexpr std::string_view kGfdGpuProduct = "nvidia.com/gpu.product";

// An annotation that asks a KAI share (gpu-fraction, gpu-memory,
// gpu-fraction-num-devices): a pod carrying one is read as KAI's.
inline bool is_kai_share_annotation(std::string_view key) {
  return key == kKaiGpuFraction || key == kKaiGpuMemory || key == kKaiNumDevices;
}

// A KAI share applied to the container it names: that container's request
// becomes `count` devices of the fraction or MiB asked. ValidateGpuRequests'
// refusals as CodecErrors ("gpu-fraction annotation value must be a
// positive number smaller than 1.0", ...).
struct KaiShare {
  int32_t count = 1;
  double fraction = 0;
  int64_t memory_mib = 0;
  std::string container;  // gpu-fraction-container-name; empty: the first container
};
KaiShare decode_kai_share(const PodFacts& pod);

// A node's GPUs as KAI sees them: nvidia.com/gpu allocatable (else the
// gpu.count label) cards of the gpu.memory label's MiB (a value of a TiB or
// more is read as bytes, as KAI does). A node without gpu.memory is refused:
// KAI would assume 100 MiB per GPU. Returns false when the node has no GPU.
bool apply_kai_gpu_labels(Node& node, const TextMap& labels, std::optional<int64_t> allocatable_gpus);

// The groups a pod's labels name (runai-gpu-group, runai-gpu-group/<g>).
std::vector<std::string> kai_groups_of(const TextMap& labels);

// What KAI writes when it binds a pod: its GPU group label(s),
// received-resource-type, and a reservation pod for each group it opens.
struct KaiBinding {
  std::vector<std::pair<std::string, std::string>> labels;
  std::string received_type;  // Fraction | Regular
  std::vector<std::string> groups;
  std::vector<std::string> reservation_pods;  // Pod manifests (YAML), one per new group
};
// `groups_by_card`: the groups already on the node's cards (position ->
// group). A new group's name is a UUID derived from the node, pod and card
// (KAI draws a random one).
KaiBinding kai_binding(const Node& node, const PodRequest& pod, const PodAllocation& allocation,
                       const std::map<int, std::string>& groups_by_card);
// The card a reservation pod's run.ai/reserve_for_gpu_index names: a card
// UUID of the node (what the reservation pod writes) or a card index.
std::optional<int> kai_reserved_card(const Node& node, std::string_view annotation);
// gpu-reservation-<first 8 bytes of sha256(node/group), hex> (reservationPodName).
std::string kai_reservation_pod_name(std::string_view node, std::string_view group);

}  // namespace gpuslice::core::codec
