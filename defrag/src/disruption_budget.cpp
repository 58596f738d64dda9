#include "gpuslice/defrag/disruption_budget.hpp"

#include <algorithm>
#include <set>

namespace gpuslice::defrag {

namespace {

std::string namespace_of(const std::string& key) { return key.substr(0, key.find('/')); }

// intstr.GetScaledValueFromIntOrPercent(v, total, roundUp=true).
int32_t scaled_up(const IntOrPercent& v, int32_t total) {
  if (!v.percent) return v.value;
  return static_cast<int32_t>((static_cast<int64_t>(v.value) * total + 99) / 100);
}

bool terminated(const PodFacts& p) { return p.phase == "Succeeded" || p.phase == "Failed"; }

}  // namespace

std::vector<uint32_t> budgets_of(const WorkloadFacts& facts, const std::string& ns, const Labels& labels) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < facts.budgets.size(); ++i)
    if (facts.budgets[i].ns == ns && facts.budgets[i].selector.matches(labels)) out.push_back(i);
  return out;
}

std::vector<BudgetState> budget_states(const WorkloadFacts& facts) {
  std::vector<BudgetState> out;
  // Pods in a stable order: the counts do not depend on it, but a
  // controller's scale is counted once per controller.
  std::vector<const std::pair<const std::string, PodFacts>*> pods;
  for (const auto& entry : facts.pods) pods.push_back(&entry);
  std::sort(pods.begin(), pods.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (const BudgetFacts& b : facts.budgets) {
    BudgetState s;
    s.ns = b.ns;
    s.name = b.name;
    int32_t managed = 0;  // the controllers' scale, as far as the snapshot shows it
    std::set<std::string> controllers;
    for (const auto* entry : pods) {
      const PodFacts& p = entry->second;
      if (namespace_of(entry->first) != b.ns || !b.selector.matches(p.labels)) continue;
      ++s.matched;
      if (p.healthy()) ++s.healthy;
      if (p.controller && !terminated(p)) {
        controllers.insert(p.controller->uid.empty() ? p.controller->kind + "/" + p.controller->name
                                                     : p.controller->uid);
        ++managed;
      }
    }
    if (b.max_unavailable) {
      s.expected = managed;
      s.desired = std::max(0, s.expected - scaled_up(*b.max_unavailable, s.expected));
    } else if (b.min_available) {
      if (b.min_available->percent) {
        s.expected = managed;
        s.desired = scaled_up(*b.min_available, s.expected);
      } else {
        s.expected = s.matched;
        s.desired = b.min_available->value;
      }
    }
    s.allowed = s.expected > 0 ? std::max(0, s.healthy - s.desired) : 0;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gpuslice::defrag
