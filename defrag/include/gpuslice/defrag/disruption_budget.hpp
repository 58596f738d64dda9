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

#include "gpuslice/defrag/workload_facts.hpp"

namespace gpuslice::defrag {

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

}  // namespace gpuslice::defrag
