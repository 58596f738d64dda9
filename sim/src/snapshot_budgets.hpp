// A snapshot's PodDisruptionBudgets as the simulator's preemption reads
// them (docs/simulator.md#disruption-budgets).
#pragma once

#include <vector>

#include "gpuslice/core/disruption/workload_facts.hpp"
#include "gpuslice/sim/snapshot.hpp"

namespace gpuslice::sim {

// Names on each starting and queued pod the budgets that count it (the
// disruption controller's selection over every listed pod) and those
// kube-scheduler's preemption charges for it, and counts into each budget
// the listed pods the run does not simulate. Nothing is done without budgets.
void attach_budgets(ClusterSnapshot& snapshot, std::vector<core::disruption::BudgetFacts> budgets);

}  // namespace gpuslice::sim
