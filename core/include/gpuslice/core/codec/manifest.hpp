// Kubernetes manifests (YAML or JSON text): Nodes carrying the registration
// annotation, Pods as users write them, and placed Pods whose annotations
// say where they run. Errors carry the line and field.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// metadata.ownerReferences[] entry with controller: true: what recreates
// the pod when it is evicted.
struct OwnerReference {
  std::string kind, name, uid;
};

// What decides whether a pod may be evicted and placed again (gpuslice
// defrag), beyond its request.
struct PodMeta {
  std::map<std::string, std::string> labels;  // metadata.labels
  std::optional<OwnerReference> controller;   // none: a bare pod
  std::optional<bool> ready;                  // status.conditions[type=Ready].status, when listed
  bool deleting = false;                      // metadata.deletionTimestamp set
};

struct PodDocument {
  PodRequest request;
  PodMeta meta;
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
  // HAMi drops Succeeded and Failed pods (k8sutil.IsPodInTerminatedState):
  // what they held is free again.
  bool terminated() const { return phase == "Succeeded" || phase == "Failed"; }
};

// A PodDisruptionBudget as written (policy/v1): checked for form here,
// interpreted by its user. Lines point at the object and each expression.
struct BudgetDocument {
  std::string api_version;
  std::string ns = "default", name;
  int line = 0;
  bool has_selector = false;  // spec.selector given (an absent one selects no pod)
  std::map<std::string, std::string> match_labels;
  struct Expression {
    std::string key, op;
    std::vector<std::string> values;
    int line = 0;
  };
  std::vector<Expression> match_expressions;
  // minAvailable / maxUnavailable: an integer, or a percentage ("50%").
  struct IntOrPercent {
    int32_t value = 0;
    bool percent = false;
  };
  std::optional<IntOrPercent> min_available, max_unavailable;
};

struct NodeDocument {
  Node node;
  int line = 0;
  bool unschedulable = false;  // spec.unschedulable (kubectl cordon)
};

// The simulator's own pod annotation: expected run time once placed.
inline constexpr std::string_view kExpectedDurationAnnotation = "gpuslice.io/expected-duration";

// Why a node name cannot be used ("" when it can): HAMi's annotations join
// card UUIDs (which openb and templates derive from node names) with ',', ':'
// and ';', so those, blanks and NULs are refused wherever nodes are named.
std::string node_name_problem(std::string_view name);

// Multi-document YAML, a v1 List, or a single object. `source` names the
// file in errors. Documents of other kinds are skipped.
std::vector<NodeDocument> parse_nodes(std::string_view text, const std::string& source);
std::vector<PodDocument> parse_pods(std::string_view text, const std::string& source,
                                    const RequestDefaults& defaults = {});

// The PodDisruptionBudget objects of a dump (`kubectl get pdb -A -o yaml`
// appended to nodes and pods), any apiVersion; a malformed one throws
// InputError with its line and field.
std::vector<BudgetDocument> parse_disruption_budgets(std::string_view text, const std::string& source);

// One object already read into a tree (the extender converts the API's
// JSON objects; scanning them again as text cost more than deciding).
// `source` names it in errors; a tree built in memory has no lines (0).
PodDocument parse_pod_object(const YAML::Node& object, const std::string& source,
                             const RequestDefaults& defaults = {});
NodeDocument parse_node_object(const YAML::Node& object, const std::string& source);

}  // namespace gpuslice::core::codec
