// A PodDisruptionBudget as the codec read it (core::codec::BudgetDocument)
// turned into what the disruption model counts with: its selector checked
// as metav1.LabelSelectorAsSelector checks it. defrag and the simulator's
// snapshot read their budgets through this one function.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/disruption/workload_facts.hpp"

namespace gpuslice::core::disruption {

// nullopt, with a warning, for a budget that is not policy/v1 (v1beta1 read
// an empty selector as "no pod" and is gone since Kubernetes 1.25: its
// budgets are not guessed at). A malformed selector throws core::InputError
// naming the source, line and field.
std::optional<BudgetFacts> budget_facts(const codec::BudgetDocument& budget, const std::string& source,
                                        std::vector<std::string>& warnings);

// What the disruption controller reads of a listed pod (status.phase and
// its metadata): labels, controller, readiness, deletion.
PodFacts pod_facts(const codec::PodMeta& meta, const std::string& phase);

}  // namespace gpuslice::core::disruption
