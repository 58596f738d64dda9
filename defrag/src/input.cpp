#include "gpuslice/defrag/input.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/memory_estimate.hpp"

namespace gpuslice::defrag {

namespace {

LabelSelector selector_of(const core::codec::BudgetDocument& b, const std::string& source) {
  LabelSelector sel;
  if (!b.has_selector) {
    sel.nothing = true;  // metav1.LabelSelectorAsSelector(nil): labels.Nothing()
    return sel;
  }
  for (const auto& [key, value] : b.match_labels) {
    try {
      sel.requirements.push_back(label_expression(key, "In", {value}));
    } catch (const std::invalid_argument& e) {
      throw core::InputError(source, b.line, "spec.selector.matchLabels." + key, e.what());
    }
  }
  for (size_t i = 0; i < b.match_expressions.size(); ++i) {
    const auto& x = b.match_expressions[i];
    try {
      sel.requirements.push_back(label_expression(x.key, x.op, x.values));
    } catch (const std::invalid_argument& e) {
      throw core::InputError(source, x.line, fmt::format("spec.selector.matchExpressions[{}]", i), e.what());
    }
  }
  return sel;
}

}  // namespace

WorkloadFacts facts_of(const std::vector<sim::ListedPod>& pods,
                       const std::vector<core::codec::BudgetDocument>& budgets, const std::string& source,
                       std::vector<std::string>& warnings) {
  WorkloadFacts facts;
  facts.pods.reserve(pods.size());
  for (const auto& p : pods) {
    PodFacts f;
    f.labels = Labels(p.meta.labels.begin(), p.meta.labels.end());
    if (p.meta.controller)
      f.controller = ControllerRef{p.meta.controller->kind, p.meta.controller->name, p.meta.controller->uid};
    f.phase = p.phase;
    f.ready = p.meta.ready;
    f.deleting = p.meta.deleting;
    facts.pods.emplace(p.key, std::move(f));
  }
  for (const auto& b : budgets) {
    if (b.api_version != "policy/v1") {
      // policy/v1beta1 read an empty selector as "no pod" and is gone since
      // Kubernetes 1.25: its budgets are not guessed at.
      warnings.push_back(fmt::format("{}:{}: PodDisruptionBudget {}/{} is {}, not policy/v1: left out",
                                     source, b.line, b.ns, b.name,
                                     b.api_version.empty() ? "without apiVersion" : b.api_version));
      continue;
    }
    BudgetFacts f;
    f.ns = b.ns;
    f.name = b.name;
    f.selector = selector_of(b, source);
    if (b.min_available) f.min_available = IntOrPercent{b.min_available->value, b.min_available->percent};
    if (b.max_unavailable)
      f.max_unavailable = IntOrPercent{b.max_unavailable->value, b.max_unavailable->percent};
    f.source = fmt::format("{}:{}", source, b.line);
    facts.budgets.push_back(std::move(f));
  }
  return facts;
}

Input parse_input(std::string_view text, const std::string& source,
                  const core::codec::RequestDefaults& defaults) {
  Input in;
  in.snapshot = sim::parse_snapshot(text, source, std::nullopt, defaults);
  in.warnings = in.snapshot.warnings;
  in.facts =
      facts_of(in.snapshot.listed, core::codec::parse_disruption_budgets(text, source), source, in.warnings);
  return in;
}

Input load_input(const std::string& path, const core::codec::RequestDefaults& defaults) {
  sim::guard_read_memory(path);
  return parse_input(core::codec::read_text_file(path), path, defaults);
}

}  // namespace gpuslice::defrag
