#include "gpuslice/core/disruption/budget_facts.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::disruption {

namespace {

LabelSelector selector_of(const codec::BudgetDocument& b, const std::string& source) {
  LabelSelector sel;
  if (!b.has_selector) {
    sel.nothing = true;  // metav1.LabelSelectorAsSelector(nil): labels.Nothing()
    return sel;
  }
  for (const auto& [key, value] : b.match_labels) {
    try {
      sel.requirements.push_back(label_expression(key, "In", {value}));
    } catch (const std::invalid_argument& e) {
      throw InputError(source, b.line, "spec.selector.matchLabels." + key, e.what());
    }
  }
  for (size_t i = 0; i < b.match_expressions.size(); ++i) {
    const auto& x = b.match_expressions[i];
    try {
      sel.requirements.push_back(label_expression(x.key, x.op, x.values));
    } catch (const std::invalid_argument& e) {
      throw InputError(source, x.line, fmt::format("spec.selector.matchExpressions[{}]", i), e.what());
    }
  }
  return sel;
}

}  // namespace

std::optional<BudgetFacts> budget_facts(const codec::BudgetDocument& b, const std::string& source,
                                        std::vector<std::string>& warnings) {
  if (b.api_version != "policy/v1") {
    warnings.push_back(fmt::format("{}:{}: PodDisruptionBudget {}/{} is {}, not policy/v1: left out", source,
                                   b.line, b.ns, b.name,
                                   b.api_version.empty() ? "without apiVersion" : b.api_version));
    return std::nullopt;
  }
  BudgetFacts f;
  f.ns = b.ns;
  f.name = b.name;
  f.selector = selector_of(b, source);
  if (b.min_available) f.min_available = IntOrPercent{b.min_available->value, b.min_available->percent};
  if (b.max_unavailable)
    f.max_unavailable = IntOrPercent{b.max_unavailable->value, b.max_unavailable->percent};
  f.source = fmt::format("{}:{}", source, b.line);
  return f;
}

PodFacts pod_facts(const codec::PodMeta& meta, const std::string& phase) {
  PodFacts f;
  f.labels = Labels(meta.labels.begin(), meta.labels.end());
  if (meta.controller)
    f.controller = ControllerRef{meta.controller->kind, meta.controller->name, meta.controller->uid};
  f.phase = phase;
  f.ready = meta.ready;
  f.deleting = meta.deleting;
  return f;
}

}  // namespace gpuslice::core::disruption
