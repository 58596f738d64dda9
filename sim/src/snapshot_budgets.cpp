#include "snapshot_budgets.hpp"

#include <unordered_set>

#include "gpuslice/core/disruption/budget_facts.hpp"
#include "gpuslice/core/disruption/disruption_budget.hpp"

namespace gpuslice::sim {

namespace {

// The budgets counting a pod, and those of them preemption charges.
template <typename Pod>
void name_budgets(Pod& pod, const core::disruption::Budgets& selected,
                  const core::disruption::WorkloadFacts& facts) {
  const std::string key = pod.request.ns + "/" + pod.request.name;
  const auto it = selected.of_pod.find(key);
  if (it == selected.of_pod.end()) return;
  pod.counted_by_budgets = it->second;
  const core::disruption::Labels& labels = facts.pods.at(key).labels;
  for (uint32_t b : it->second)
    if (core::disruption::preemption_counts(facts.budgets[b], pod.request.ns, labels))
      pod.guarded_by_budgets.push_back(b);
}

}  // namespace

void attach_budgets(ClusterSnapshot& snap, std::vector<core::disruption::BudgetFacts> budgets) {
  if (budgets.empty()) return;
  core::disruption::WorkloadFacts facts;
  facts.pods.reserve(snap.listed.size());
  for (const ListedPod& p : snap.listed)
    facts.pods.emplace(p.key, core::disruption::pod_facts(p.meta, p.phase));
  facts.budgets = std::move(budgets);
  const core::disruption::Budgets selected = core::disruption::evaluate_budgets(facts);

  std::unordered_set<std::string> simulated;
  for (StartingPod& p : snap.starting) {
    simulated.insert(p.request.ns + "/" + p.request.name);
    name_budgets(p, selected, facts);
  }
  for (QueuedPod& p : snap.queue) {
    simulated.insert(p.request.ns + "/" + p.request.name);
    name_budgets(p, selected, facts);
  }
  for (const auto& b : facts.budgets) snap.budgets.push_back({b, {}});
  // The pods the run leaves as listed count as the dump shows them.
  for (const auto& [key, indexes] : selected.of_pod) {
    if (simulated.count(key)) continue;
    for (uint32_t b : indexes) core::disruption::count_pod(snap.budgets[b].outside, facts.pods.at(key));
  }
}

}  // namespace gpuslice::sim
