// Kubernetes manifests (YAML or JSON text): Nodes carrying the registration
// annotation, Pods as users write them, and placed Pods whose annotations
// say where they run. Errors carry the line and field.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/codec/object_facts.hpp"
#include "gpuslice/core/dialect.hpp"
#include "gpuslice/core/model.hpp"
#include "gpuslice/core/request.hpp"

namespace YAML {
class Node;
}

namespace gpuslice::core::codec {

// HAMi's scheduler configuration that shapes requests (webhook defaults).
struct RequestDefaults {
  int64_t default_memory_mib = 0;  // 0: a card's whole memory
  int32_t default_cores = 0;
  int32_t default_gpu_num = 1;  // added when only gpumem/gpucores are given
  std::string resource_count = "nvidia.com/gpu";
  std::string resource_memory = "nvidia.com/gpumem";
  std::string resource_memory_percentage = "nvidia.com/gpumem-percentage";
  std::string resource_cores = "nvidia.com/gpucores";
  std::string resource_priority = "nvidia.com/priority";
};

struct PodDocument {
  PodRequest request;
  int line = 0;               // where the document starts
  std::string assigned_node;  // hami.io/vgpu-node (placed pods)
  std::string allocated;      // hami.io/vgpu-devices-allocated (placed pods)
  int allocated_line = 0;
  std::string phase;      // status.phase ("" when absent)
  std::string node_name;  // spec.nodeName: where Kubernetes bound it (any pod)
  // metadata.creationTimestamp as written (RFC 3339), for queue order.
  std::string created;
  int created_line = 0;
  // gpuslice.io/expected-duration: how long the pod runs once placed
  // ("45m", "2h30m", "3600" seconds), read by the simulator's snapshots.
  std::string expected_duration;
  int expected_duration_line = 0;
  // Koordinator's and KAI's marks of a placed pod (docs/dialects.md).
  StringMap labels;                   // metadata.labels (KAI's runai-gpu-group)
  std::string koordinator_allocated;  // scheduling.koordinator.sh/device-allocated
  int koordinator_allocated_line = 0;
  std::string kai_reserved_gpu;  // run.ai/reserve_for_gpu_index (KAI's reservation pods)
  // HAMi drops Succeeded and Failed pods (k8sutil.IsPodInTerminatedState):
  // what they held is free again.
  bool terminated() const { return phase == "Succeeded" || phase == "Failed"; }
};

struct NodeDocument {
  Node node;
  int line = 0;
  bool unschedulable = false;               // spec.unschedulable (kubectl cordon)
  StringMap labels;                         // metadata.labels
  std::optional<int64_t> allocatable_gpus;  // status.allocatable nvidia.com/gpu
  bool registered = false;                  // HAMi's registration annotation was there
};

// The simulator's own pod annotation: expected run time once placed.
inline constexpr std::string_view kExpectedDurationAnnotation = "gpuslice.io/expected-duration";

// Why a node name cannot be used ("" when it can): HAMi's annotations join
// card UUIDs (which openb and templates derive from node names) with ',', ':'
// and ';', so those, blanks and NULs are refused wherever nodes are named.
std::string node_name_problem(std::string_view name);

// Multi-document YAML, a v1 List, or a single object. `source` names the
// file in errors. Documents of other kinds are skipped. A node's cards come
// from HAMi's registration annotation, else from a Koordinator Device CR of
// the node's name in the same text, else from KAI's GPU labels
// (nvidia.com/gpu.count, nvidia.com/gpu.memory); `warnings` gets what was
// rounded or left without a node.
std::vector<NodeDocument> parse_nodes(std::string_view text, const std::string& source,
                                      std::vector<std::string>* warnings = nullptr);
std::vector<PodDocument> parse_pods(std::string_view text, const std::string& source,
                                    const RequestDefaults& defaults = {});

// One object already read into a tree (the extender converts the API's
// JSON objects; scanning them again as text cost more than deciding).
// `source` names it in errors; a tree built in memory has no lines (0).
PodDocument parse_pod_object(const YAML::Node& object, const std::string& source,
                             const RequestDefaults& defaults = {});
NodeDocument parse_node_object(const YAML::Node& object, const std::string& source);

}  // namespace gpuslice::core::codec
