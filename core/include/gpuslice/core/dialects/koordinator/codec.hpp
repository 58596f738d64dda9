// Koordinator's texts: a pod's device resources (koordinator.sh/gpu-core,
// gpu-memory, gpu-memory-ratio, gpu.shared, gpu; nvidia.com/gpu), the
// Device CR that lists a node's GPUs (scheduling.koordinator.sh/v1alpha1),
// and the scheduling.koordinator.sh/device-allocated annotation DeviceShare
// writes. Errors are CodecErrors naming the field, in Koordinator's words
// where it has some ("invalid resource device requests: [...]").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/core/codec/object_facts.hpp"
#include "gpuslice/core/model.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core::codec {

inline constexpr std::string_view kKoordDeviceAllocated = "scheduling.koordinator.sh/device-allocated";
inline constexpr std::string_view kKoordIsolationProvider = "koordinator.sh/gpu-isolation-provider";
inline constexpr std::string_view kKoordGpuModel = "node.koordinator.sh/gpu-model";
inline constexpr std::string_view kKoordGpuVendor = "node.koordinator.sh/gpu-vendor";
inline constexpr std::string_view kKoordPartitionPolicy = "node.koordinator.sh/gpu-partition-policy";
inline constexpr std::string_view kKoordPartitions = "scheduling.koordinator.sh/gpu-partitions";

// One of Koordinator's own GPU resources (koordinator.sh/gpu, gpu-core,
// gpu-memory, gpu-memory-ratio, gpu.shared): a pod naming one is read as
// Koordinator's.
inline bool is_koordinator_gpu_resource(std::string_view name) {
  return name.starts_with("koordinator.sh/gpu");
}

// The pod's GPU request as DeviceShare's PreFilter reads it: the pod's
// requests summed (init containers at their peak), validated as
// ValidateDeviceRequest does and divided per GPU
// (calcDesiredRequestsAndCountForGPU). Count, cores, and a memory ratio or
// bytes per GPU; nullopt when the pod asks for no GPU resource. Pod
// annotations Koordinator reads that gpuslice does not model
// (device-allocate-hint, device-joint-allocate, gpu-partition-spec) are
// refused, naming them.
std::optional<ContainerRequest> decode_koordinator_request(const PodFacts& pod);

// One spec.devices[] entry of a Device CR.
struct KoordinatorDeviceInfo {
  std::string type;  // gpu | rdma | fpga
  std::string uuid;  // id
  std::optional<int> minor;
  bool health = false;
  TextMap resources;  // quantities as written
  bool has_topology = false;
  int numa = 0;      // topology.nodeID
  std::string pcie;  // topology.pcieID
};

struct KoordinatorDeviceCr {
  std::string name;  // the node's name
  TextMap labels, annotations;
  std::vector<KoordinatorDeviceInfo> devices;
};

// The node's GPUs from its Device CR (buildDeviceResources), with what the
// Node's labels and the CR add: GPU model, isolation provider, the
// partition table and whether the node honours it. Cards get HAMi's
// default 10 slots (Koordinator counts none) so a HAMi policy can replay
// the fleet. `warnings` gets what is read but rounded.
void apply_koordinator_device_cr(Node& node, const TextMap& node_labels, const KoordinatorDeviceCr& cr,
                                 std::vector<std::string>& warnings);

// device-allocated: the "gpu" entries as written.
struct KoordinatorGrantText {
  int minor = 0;
  std::optional<int64_t> core, bytes, ratio;
  std::string id;
};
std::vector<KoordinatorGrantText> decode_device_allocated(std::string_view json);
// Grants on the node's cards by minor; a minor the node does not have is
// dropped with a line in `warnings`. The grants go to container
// `device_container` of a pod of `containers` containers.
PodAllocation resolve_device_allocated(const std::vector<KoordinatorGrantText>& grants, const Node& node,
                                       size_t containers, size_t init_count, size_t device_container,
                                       std::vector<std::string>& warnings);
// The annotation DeviceShare writes for a pod's grants on `node` (PreBind):
// {"gpu":[{"minor":1,"resources":{...},"id":"GPU-..."}]}, resources in
// Kubernetes' canonical quantities, keys sorted.
std::string encode_device_allocated(const PodAllocation& allocation, const Node& node);

}  // namespace gpuslice::core::codec
