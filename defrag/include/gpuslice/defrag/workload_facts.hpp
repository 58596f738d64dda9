// What decides whether a pod may be moved (labels, controller, readiness,
// PodDisruptionBudgets): the one model lives in the core
// (gpuslice/core/disruption/workload_facts.hpp); defrag names it here.
#pragma once

#include "gpuslice/core/disruption/workload_facts.hpp"
#include "gpuslice/defrag/label_selector.hpp"

namespace gpuslice::defrag {

using core::disruption::BudgetFacts;
using core::disruption::ControllerRef;
using core::disruption::IntOrPercent;
using core::disruption::PodFacts;
using core::disruption::WorkloadFacts;

}  // namespace gpuslice::defrag
