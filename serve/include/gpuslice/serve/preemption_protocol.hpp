// kube-scheduler's preempt verb on the wire (k8s.io/kube-scheduler/extender/v1):
// ExtenderPreemptionArgs in, ExtenderPreemptionResult out. kube-scheduler
// sends the victims it chose per node as full pods (NodeNameToVictims) or,
// with nodeCacheCapable, as UIDs (NodeNameToMetaVictims); the answer is
// always NodeNameToMetaVictims. Field names are read by Go's rule (exact,
// then any case), as protocol.hpp reads the other verbs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuslice/serve/protocol.hpp"

namespace gpuslice::serve {

// A victim kube-scheduler offered: its UID, and with full pods what
// preemption reads of it.
struct OfferedVictim {
  std::string uid;
  std::optional<int32_t> priority;  // spec.priority (full pods only)
  std::string start_time;           // status.startTime as written (full pods only)
};

struct NodeVictimsOffer {
  std::string node;
  std::vector<OfferedVictim> pods;
  int64_t pdb_violations = 0;
};

struct ExtenderPreemptionArgs {
  std::string pod_json;                 // the Pod as sent
  std::vector<NodeVictimsOffer> nodes;  // in the order sent
  bool meta_form = false;               // true: NodeNameToMetaVictims was sent
};

struct MetaVictimsAnswer {
  std::string node;
  std::vector<std::string> uids;  // most important first
  int64_t pdb_violations = 0;
};

struct ExtenderPreemptionResult {
  std::vector<MetaVictimsAnswer> nodes;
};

// Throws ProtocolError naming the field.
ExtenderPreemptionArgs decode_preemption_args(std::string_view body);
// {"NodeNameToMetaVictims": {node: {"Pods": [{"UID": ...}], "NumPDBViolations": n}}}
std::string encode_preemption_result(const ExtenderPreemptionResult& result);

}  // namespace gpuslice::serve
