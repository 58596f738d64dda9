// HAMi's reading of Kubernetes objects: Nodes carrying the registration
// annotation, Pods as users write them, and placed Pods whose annotations
// say where they run. The objects come from the one reader
// (kube_reader.hpp); errors carry the file, line and field.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/codec/kube_objects.hpp"
#include "gpuslice/core/codec/object_facts.hpp"
#include "gpuslice/core/dialect.hpp"
#include "gpuslice/core/dialects/dra/objects.hpp"
#include "gpuslice/core/dialects/koordinator/codec.hpp"
#include "gpuslice/core/model.hpp"
#include "gpuslice/core/request.hpp"

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
struct ControllerOwner {
  std::string kind, name, uid;
};

// What decides whether a pod may be evicted and placed again (gpuslice
// defrag), beyond its request.
struct PodMeta {
  TextMap labels;                             // metadata.labels
  std::optional<ControllerOwner> controller;  // none: a bare pod
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
  std::string mig_allocations;  // hami.io/vgpu-mig-allocations (HAMi v2.10 MIG reservations)
  int mig_allocations_line = 0;
  std::string phase;      // status.phase ("" when absent)
  std::string node_name;  // spec.nodeName: where Kubernetes bound it (any pod)
  // metadata.creationTimestamp as written (RFC 3339), for queue order.
  std::string created;
  int created_line = 0;
  // What kube-scheduler's preemption reads: spec.priority (0 when unset, as
  // its PodPriority reads it), spec.preemptionPolicy Never, and
  // status.startTime as written (RFC 3339; empty: not started).
  int32_t priority = 0;
  bool preempt_never = false;
  // Whether spec.priority / spec.preemptionPolicy were written, and
  // spec.priorityClassName: a hand-written dump may name a class whose
  // value the API server would have filled in (priority_class.hpp).
  bool priority_given = false, preemption_policy_given = false;
  std::string priority_class;
  std::string started;
  // status.nominatedNodeName ("" when absent): serve holds the pod's room
  // there against pods of no higher priority (docs/serve.md#nominated-pods).
  std::string nominated_node;
  // gpuslice.io/expected-duration: how long the pod runs once placed
  // ("45m", "2h30m", "3600" seconds), read by the simulator's snapshots.
  std::string expected_duration;
  int expected_duration_line = 0;
  // Koordinator's and KAI's marks of a placed pod (docs/dialects.md); KAI's
  // runai-gpu-group is among meta.labels.
  std::string koordinator_allocated;  // scheduling.koordinator.sh/device-allocated
  int koordinator_allocated_line = 0;
  std::string kai_reserved_gpu;  // run.ai/reserve_for_gpu_index (KAI's reservation pods)
  // DRA: spec.resourceClaims with status.resourceClaimStatuses' generated
  // names. What the claims ask and hold is in objects printed after the
  // pods: the DRA unit's complete_requests reads them once the whole dump
  // is read, and sets claim_held on a bound pod whose allocated claims it
  // could read (what read_placed_pods then counts, PlacedRole::Dra).
  std::vector<dra::PodClaimRef> claims;
  std::optional<PodAllocation> claim_held;
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
  TextMap match_labels;
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
  bool unschedulable = false;               // spec.unschedulable (kubectl cordon)
  TextMap labels;                           // metadata.labels
  std::optional<int64_t> allocatable_gpus;  // status.allocatable nvidia.com/gpu
  bool registered = false;                  // HAMi's registration annotation was there
};

// The simulator's own pod annotation: expected run time once placed.
inline constexpr std::string_view kExpectedDurationAnnotation = "gpuslice.io/expected-duration";

// Why a node name cannot be used ("" when it can): HAMi's annotations join
// card UUIDs (which openb and templates derive from node names) with ',', ':'
// and ';', so those, blanks and NULs are refused wherever nodes are named.
std::string node_name_problem(std::string_view name);

class ReadContext;

// One decoded object as gpuslice reads it; `context` (the reader's, during
// the visit) names the lines of errors. Throws InputError. A pod's request
// is HAMi's resources, else Koordinator's (koordinator.sh/*) or a KAI share
// (gpu-fraction annotations). A node's cards are HAMi's registration; a node
// without one gets them from a Koordinator Device or KAI's labels once the
// whole text is read (complete_dialect_nodes).
// `warnings` (when given) gets a line per pod whose request HAMi reads
// otherwise than written (nvidia.com/gpucores above 100, clamped to 100).
PodDocument pod_document(const PodObject& pod, const ReadContext& context,
                         const RequestDefaults& defaults = {}, std::vector<std::string>* warnings = nullptr);
NodeDocument node_document(const NodeObject& node, const ReadContext& context);
// A Koordinator Device (scheduling.koordinator.sh/v1alpha1) as the dialect
// codec reads it.
struct DeviceDocument {
  KoordinatorDeviceCr cr;
  int line = 0;
};
DeviceDocument device_document(const DeviceObject& device, const ReadContext& context);

// After every object of `source` is read: nodes without HAMi's registration
// take their cards from the Device of their name, else from KAI's GPU labels
// (nvidia.com/gpu.count, nvidia.com/gpu.memory). `warnings` gets what was
// rounded, a Device naming no node, a node with GPUs but no way to count them.
void complete_dialect_nodes(std::vector<NodeDocument>& nodes, const std::vector<DeviceDocument>& devices,
                            const std::string& source, std::vector<std::string>& warnings);

// Every Node / Pod of a text (JSON or YAML: multi-document, a v1 List, or a
// single object), through the one reader. `source` names the file in errors.
// Objects of other kinds are skipped, but a Device of the text gives its
// node's cards (complete_dialect_nodes); `warnings` gets what that rounded
// or left without a node.
std::vector<NodeDocument> parse_nodes(std::string_view text, const std::string& source,
                                      std::vector<std::string>* warnings = nullptr);
std::vector<PodDocument> parse_pods(std::string_view text, const std::string& source,
                                    const RequestDefaults& defaults = {},
                                    std::vector<std::string>* warnings = nullptr);

// The PodDisruptionBudget objects of a dump (`kubectl get pdb -A -o yaml`
// appended to nodes and pods), through the one reader; a malformed one throws
// InputError with its line and field.
std::vector<BudgetDocument> parse_disruption_budgets(std::string_view text, const std::string& source);
// One decoded budget; `context` names the lines of errors.
BudgetDocument budget_document(const PodDisruptionBudgetObject& budget, const ReadContext& context);

}  // namespace gpuslice::core::codec
