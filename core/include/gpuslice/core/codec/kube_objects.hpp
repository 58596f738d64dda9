// Kubernetes objects as the one reader (kube_reader.hpp) decodes them: only
// the fields some part of gpuslice reads, each scalar as written with where
// it was written. Whatever reads cluster state starts from these: HAMi's
// view of nodes and pods (manifest.hpp), and any other scheduler's dialect
// (Koordinator's Device objects and koordinator.sh/* resources, KAI's
// annotations) or tool (PodDisruptionBudgets and owners for moving pods).
// The reader checks the structure it walks (a mapping where one belongs, a
// list where one belongs); what a value means is the interpreter's call, so
// leaves keep their kind: an interpreter refuses a mapping where it wants a
// string with its own words.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gpuslice::core::codec {

// Where a value was written, to name its line in an error: the reader turns
// it into a line (ReadContext::line_of) only when asked. Opaque to callers.
using Position = uint64_t;
inline constexpr Position kNoPosition = UINT64_MAX;

// One leaf as written. Numbers and booleans keep their source spelling
// ("4000", "4e3", "true") so quantities read as the user wrote them; JSON
// and YAML give the same text for the same value.
struct Scalar {
  enum class Kind : uint8_t {
    Absent,    // the key is not there
    Null,      // null, ~ or an empty value
    Text,      // a string, number or boolean
    Mapping,   // present, but a mapping (its content is skipped)
    Sequence,  // present, but a list (its content is skipped)
  };
  Kind kind = Kind::Absent;
  // Text only: written as a string (quoted, a block scalar, a JSON string)
  // rather than a plain number or word: "3" is a string, 3 an integer.
  bool quoted = false;
  std::string text;  // Text only
  Position at = kNoPosition;

  bool present() const { return kind != Kind::Absent; }
  bool is_text() const { return kind == Kind::Text; }
  // Present and not null: HAMi's reader treats a null like a missing key.
  bool given() const { return kind != Kind::Absent && kind != Kind::Null; }
};

// A map of strings (labels, annotations, a resource list), in source order.
struct Entry {
  std::string key;
  Position key_at = kNoPosition;
  Scalar value;
};
struct StringMap {
  Scalar::Kind kind = Scalar::Kind::Absent;  // Absent, Null or Mapping
  Position at = kNoPosition;
  std::vector<Entry> entries;
  const Entry* find(std::string_view key) const {
    for (const auto& e : entries)
      if (e.key == key) return &e;
    return nullptr;
  }
};

struct OwnerReference {
  std::string api_version, kind, name, uid;
  bool controller = false;  // metadata.ownerReferences[].controller
  Position at = kNoPosition;
};

struct ObjectMeta {
  Scalar name, namespace_name, uid, creation_timestamp, resource_version;
  Scalar deletion_timestamp;  // set once the pod is being deleted
  StringMap labels, annotations;
  std::vector<OwnerReference> owner_references;
  Scalar::Kind kind = Scalar::Kind::Absent;  // of metadata itself: Absent, Null or Mapping
  Position at = kNoPosition;
};

// What every decoded object carries.
struct ObjectHeader {
  std::string api_version;  // "v1", "policy/v1", "scheduling.koordinator.sh/v1alpha1"
  std::string kind;
  ObjectMeta meta;
  Position at = kNoPosition;  // the object's first line
  int line = 0;               // the same as a line (0: objects from memory, the API)
};

struct ContainerObject {
  Scalar name;
  Scalar::Kind resources_kind = Scalar::Kind::Absent;  // resources: Absent, Null or Mapping
  StringMap limits, requests;                          // resources.limits / resources.requests
  Position at = kNoPosition;
};

// A value kept whole, as written, for objects whose interpreter walks them
// itself (DRA's resource.k8s.io objects: dialects/dra/read.hpp): leaves as
// Scalars, mappings as ordered fields, lists as items.
// A mapping's entry is a struct of its own, not a std::pair: a pair of an
// incomplete TreeValue is ill-formed (clang refuses it; vector is the one
// standard container that may hold an incomplete type).
struct TreeField;
struct TreeValue {
  Scalar leaf;  // kind Mapping / Sequence for those (their content below), else the leaf itself
  std::vector<TreeField> fields;
  std::vector<TreeValue> items;
  Position at = kNoPosition;
  const TreeValue* field(std::string_view key) const;
  bool is_mapping() const { return leaf.kind == Scalar::Kind::Mapping; }
  bool is_list() const { return leaf.kind == Scalar::Kind::Sequence; }
};
struct TreeField {
  std::string key;
  TreeValue value;
};
inline const TreeValue* TreeValue::field(std::string_view key) const {
  for (const auto& f : fields)
    if (f.key == key) return &f.value;
  return nullptr;
}

struct PodObject {
  ObjectHeader header;
  // spec.resourceClaims and status.resourceClaimStatuses (DRA), kept whole.
  TreeValue resource_claims, resource_claim_statuses;
  Scalar::Kind spec_kind = Scalar::Kind::Absent;  // Absent, Null or Mapping
  Position spec_at = kNoPosition;
  Scalar node_name, scheduler_name;  // spec.nodeName, spec.schedulerName
  // spec.priority, spec.preemptionPolicy, status.startTime: what preemption reads.
  Scalar priority, preemption_policy, start_time;
  Scalar priority_class_name;  // spec.priorityClassName
  std::vector<ContainerObject> init_containers, containers;
  Scalar phase;  // status.phase
  // status.nominatedNodeName: where kube-scheduler's preemption made room
  // for the pod while its victims terminate.
  Scalar nominated_node_name;
  // status.conditions[]: the Ready condition decides whether the disruption
  // controller counts a pod as healthy.
  struct Condition {
    Scalar type, status;
    Position at = kNoPosition;
  };
  std::vector<Condition> conditions;
};

struct NodeObject {
  ObjectHeader header;
  Scalar unschedulable;             // spec.unschedulable
  StringMap allocatable, capacity;  // status.allocatable / status.capacity
};

// Koordinator's Device (scheduling.koordinator.sh/v1alpha1), named after its
// node: spec.devices[].
struct DeviceInfo {
  Scalar type, uuid, minor, health;  // type, id, minor, health
  StringMap resources;               // koordinator.sh/gpu-core, gpu-memory, gpu-memory-ratio...
  Scalar socket_id, numa_node_id, pcie_id, bus_id;  // topology.socketID, nodeID, pcieID, busID
  Position at = kNoPosition;
};
struct DeviceObject {
  ObjectHeader header;
  std::vector<DeviceInfo> devices;
};

struct LabelSelectorRequirement {
  std::string key, op;  // op: In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
  Position at = kNoPosition;
};
struct LabelSelector {
  bool given = false;  // a selector was written (an empty one selects every pod)
  StringMap match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
};

// A PodDisruptionBudget (policy/v1): minAvailable / maxUnavailable are an
// integer or a percentage ("50%"): IntOrString says which was written.
struct IntOrString {
  bool given = false;
  bool is_int = false;
  int64_t int_value = 0;  // is_int
  std::string text;       // !is_int: as written ("50%")
  Position at = kNoPosition;
};
struct PodDisruptionBudgetObject {
  ObjectHeader header;
  Scalar::Kind spec_kind = Scalar::Kind::Absent;  // Absent, Null or Mapping
  IntOrString min_available, max_unavailable;
  LabelSelector selector;
};

// A ResourceQuota (v1): spec.hard as written (resource_quota.hpp reads
// the keys HAMi manages; status.used is not read: HAMi counts pods itself).
struct ResourceQuotaObject {
  ObjectHeader header;
  Scalar::Kind spec_kind = Scalar::Kind::Absent;  // Absent, Null or Mapping
  StringMap hard;                                 // spec.hard
};

// A PriorityClass (scheduling.k8s.io/v1): what the Priority admission
// plugin gives a pod naming it (or every pod, when globalDefault).
struct PriorityClassObject {
  ObjectHeader header;
  Scalar value, global_default, preemption_policy;
};

// An object of a kind a dialect unit keeps for itself
// (DialectUnit::object_kinds: DRA's ResourceSlices, DeviceClasses,
// ResourceClaims and templates): spec and status kept whole for the unit's
// interpreter, which NodeObjects hands it to.
struct ResourceObject {
  ObjectHeader header;
  TreeValue spec, status;
};

// One object as the reader hands it over.
using KubeObject = std::variant<PodObject, NodeObject, DeviceObject, PodDisruptionBudgetObject,
                                ResourceQuotaObject, PriorityClassObject, ResourceObject>;
const ObjectHeader& header_of(const KubeObject& object);

// Every object of one read, by kind, each in the order read.
struct KubeObjects {
  std::vector<NodeObject> nodes;
  std::vector<PodObject> pods;
  std::vector<DeviceObject> devices;
  std::vector<PodDisruptionBudgetObject> disruption_budgets;
  std::vector<ResourceQuotaObject> resource_quotas;
  std::vector<PriorityClassObject> priority_classes;
  std::vector<ResourceObject> resources;
  void add(KubeObject&& object);
};

}  // namespace gpuslice::core::codec
