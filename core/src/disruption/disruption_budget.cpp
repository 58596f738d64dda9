#include "gpuslice/core/disruption/disruption_budget.hpp"

#include <algorithm>

namespace gpuslice::core::disruption {

namespace {

// intstr.GetScaledValueFromIntOrPercent(v, total, roundUp=true).
int32_t scaled_up(const IntOrPercent& v, int32_t total) {
  if (!v.percent) return v.value;
  return static_cast<int32_t>((static_cast<int64_t>(v.value) * total + 99) / 100);
}

bool terminated(const PodFacts& p) { return p.phase == "Succeeded" || p.phase == "Failed"; }

using Entry = std::pair<const std::string, PodFacts>;

// The pods of one namespace, and who carries each label value.
struct NamespacePods {
  std::vector<const Entry*> all;
  std::unordered_map<std::string, std::vector<const Entry*>> by_label;  // "key=value" -> pods
};

// The pods a selector could match: those carrying a value its most
// selective In requirement accepts, or the whole namespace.
std::vector<const Entry*> candidates(const LabelSelector& selector, const NamespacePods& ns) {
  const LabelRequirement* narrowest = nullptr;
  size_t fewest = ns.all.size();
  auto count = [&](const LabelRequirement& r) {
    size_t n = 0;
    for (const auto& v : r.values)
      if (auto it = ns.by_label.find(r.key + "=" + v); it != ns.by_label.end()) n += it->second.size();
    return n;
  };
  for (const auto& r : selector.requirements)
    if (r.op == LabelRequirement::Op::In)
      if (const size_t n = count(r); !narrowest || n < fewest) {
        narrowest = &r;
        fewest = n;
      }
  if (!narrowest) return ns.all;
  std::vector<const Entry*> out;
  for (const auto& v : narrowest->values)
    if (auto it = ns.by_label.find(narrowest->key + "=" + v); it != ns.by_label.end())
      out.insert(out.end(), it->second.begin(), it->second.end());
  return out;
}

}  // namespace

Budgets evaluate_budgets(const WorkloadFacts& facts) {
  Budgets out;
  // A budget selects pods of its own namespace only.
  std::unordered_map<std::string, NamespacePods> by_namespace;
  for (const auto& b : facts.budgets) by_namespace.try_emplace(b.ns);
  for (const auto& entry : facts.pods) {
    auto it = by_namespace.find(entry.first.substr(0, entry.first.find('/')));
    if (it == by_namespace.end()) continue;  // no budget there
    it->second.all.push_back(&entry);
    for (const auto& [key, value] : entry.second.labels)
      it->second.by_label[key + "=" + value].push_back(&entry);
  }
  for (uint32_t i = 0; i < facts.budgets.size(); ++i) {
    const BudgetFacts& b = facts.budgets[i];
    BudgetCounts counts;
    if (!b.selector.nothing)
      for (const Entry* e : candidates(b.selector, by_namespace.at(b.ns))) {
        const PodFacts& p = e->second;
        if (!b.selector.matches(p.labels)) continue;
        count_pod(counts, p);
        out.of_pod[e->first].push_back(i);
      }
    BudgetState s = budget_state(b, counts);
    out.states.push_back(std::move(s));
  }
  return out;
}

void count_pod(BudgetCounts& counts, const PodFacts& p) {
  ++counts.matched;
  if (p.healthy()) ++counts.healthy;
  if (p.controller && !terminated(p)) ++counts.managed;  // the controllers' scale, as far as it shows
}

BudgetState budget_state(const BudgetFacts& b, BudgetCounts counts) {
  BudgetState s;
  s.ns = b.ns;
  s.name = b.name;
  s.matched = counts.matched;
  s.healthy = counts.healthy;
  if (b.max_unavailable) {
    s.expected = counts.managed;
    s.desired = std::max(0, s.expected - scaled_up(*b.max_unavailable, s.expected));
  } else if (b.min_available) {
    if (b.min_available->percent) {
      s.expected = counts.managed;
      s.desired = scaled_up(*b.min_available, s.expected);
    } else {
      s.expected = counts.matched;
      s.desired = b.min_available->value;
    }
  }
  s.allowed = s.expected > 0 ? std::max(0, s.healthy - s.desired) : 0;
  return s;
}

bool preemption_counts(const BudgetFacts& b, const std::string& pod_namespace, const Labels& pod_labels) {
  if (b.ns != pod_namespace || pod_labels.empty()) return false;
  if (b.selector.nothing || b.selector.requirements.empty()) return false;
  return b.selector.matches(pod_labels);
}

}  // namespace gpuslice::core::disruption
