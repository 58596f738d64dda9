// status.disruptionsAllowed as the disruption controller computes it: the
// one model lives in the core (gpuslice/core/disruption/disruption_budget.hpp),
// which the simulator's preemption also reads; defrag names it here.
#pragma once

#include "gpuslice/core/disruption/disruption_budget.hpp"
#include "gpuslice/defrag/workload_facts.hpp"

namespace gpuslice::defrag {

using core::disruption::Budgets;
using core::disruption::BudgetState;
using core::disruption::evaluate_budgets;

}  // namespace gpuslice::defrag
