// What Kubernetes knows about a cluster's pods beyond their GPU requests,
// and only what decides whether a pod may be moved: its labels, its
// controller and readiness, and the PodDisruptionBudgets (policy/v1) of the
// snapshot. Plain data: the snapshot reader fills it, the defrag model
// reads it, and neither knows how the other works.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuslice/core/disruption/label_selector.hpp"

namespace gpuslice::core::disruption {

// metadata.ownerReferences[] with controller: true.
struct ControllerRef {
  std::string kind;  // ReplicaSet, StatefulSet, Job, ...
  std::string name;
  std::string uid;
};

struct PodFacts {
  Labels labels;
  std::optional<ControllerRef> controller;  // none: a bare pod, which nothing recreates
  std::string phase;                        // status.phase
  // The pod's Ready condition (status.conditions), as the disruption
  // controller counts healthy pods; a pod listing no conditions counts as
  // ready when Running.
  std::optional<bool> ready;
  bool deleting = false;  // metadata.deletionTimestamp set
  bool healthy() const { return !deleting && (ready ? *ready : phase == "Running"); }
};

// minAvailable / maxUnavailable: an integer or a percentage ("50%").
struct IntOrPercent {
  int32_t value = 0;
  bool percent = false;
};

struct BudgetFacts {
  std::string ns, name;
  LabelSelector selector;  // .nothing when the object has none
  std::optional<IntOrPercent> min_available, max_unavailable;
  std::string source;  // file:line, for messages
};

struct WorkloadFacts {
  // Every pod of the snapshot, any phase (a budget counts them all), by
  // "namespace/name".
  std::unordered_map<std::string, PodFacts> pods;
  std::vector<BudgetFacts> budgets;
};

}  // namespace gpuslice::core::disruption
