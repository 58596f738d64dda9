#include "gpuslice/defrag/disruption_budget.hpp"

#include <algorithm>

namespace gpuslice::defrag {

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
    BudgetState s;
    s.ns = b.ns;
    s.name = b.name;
    int32_t managed = 0;  // the controllers' scale, as far as the snapshot shows it
    if (!b.selector.nothing)
      for (const Entry* e : candidates(b.selector, by_namespace.at(b.ns))) {
        const PodFacts& p = e->second;
        if (!b.selector.matches(p.labels)) continue;
        ++s.matched;
        if (p.healthy()) ++s.healthy;
        if (p.controller && !terminated(p)) ++managed;
        out.of_pod[e->first].push_back(i);
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
    out.states.push_back(std::move(s));
  }
  return out;
}

}  // namespace gpuslice::defrag
