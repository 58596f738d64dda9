// How many evictions each PodDisruptionBudget allows right now, computed as
// the disruption controller computes status.disruptionsAllowed
// (pkg/controller/disruption): the pods its selector matches in its
// namespace, the healthy ones among them, and the desired count from
// minAvailable or maxUnavailable (percentages of the expected count,
// rounded up).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuslice/core/disruption/workload_facts.hpp"

namespace gpuslice::core::disruption {

struct BudgetState {
  std::string ns, name;
  int32_t matched = 0;   // pods selected (any phase)
  int32_t expected = 0;  // the controller's expectedPods
  int32_t healthy = 0;   // currentHealthy
  int32_t desired = 0;   // desiredHealthy
  int32_t allowed = 0;   // disruptionsAllowed: evictions the eviction API accepts
};

struct Budgets {
  std::vector<BudgetState> states;  // one per facts.budgets entry, in order
  // "namespace/name" -> the budgets selecting that pod (pods no budget selects are absent).
  std::unordered_map<std::string, std::vector<uint32_t>> of_pod;
};

// expectedPods for a percentage or maxUnavailable is the sum of the
// matched pods' controllers' scale (their replicas); a dump of nodes and
// pods does not carry replicas, so each controller's scale is taken as its
// pods in the snapshot that have not terminated. Pods without a controller
// are left out of that sum, as the controller leaves them out.
//
// A budget's candidates come from an index of the namespace's labels when
// its selector requires a label value (matchLabels always do), so the work
// is the pods matched, not budgets x pods.
Budgets evaluate_budgets(const WorkloadFacts& facts);

// What the disruption controller counts of one budget's pods: those its
// selector matches (any phase), the healthy ones, and those a controller
// owns that have not terminated (its stand-in for the controllers' scale).
struct BudgetCounts {
  int32_t matched = 0, healthy = 0, managed = 0;
};

// Adds one pod the budget's selector matches to its counts.
void count_pod(BudgetCounts& counts, const PodFacts& pod);

// The budget's status from those counts (expected, desired and
// disruptionsAllowed as updatePdbStatus sets them); ns and name are the
// budget's. evaluate_budgets uses it, and the simulator with counts it keeps
// as pods start and stop (status goes stale while a run goes on).
BudgetState budget_state(const BudgetFacts& budget, BudgetCounts counts);

// Whether kube-scheduler's preemption counts a pod against the budget
// (filterPodsWithPDBViolation): same namespace, a pod with labels, and a
// selector that is neither null nor empty and matches them. An empty
// selector selects every pod for the disruption controller but nothing
// for preemption.
bool preemption_counts(const BudgetFacts& budget, const std::string& pod_namespace, const Labels& pod_labels);

}  // namespace gpuslice::core::disruption
