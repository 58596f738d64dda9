#include "gpuslice/defrag/input.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/disruption/budget_facts.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/memory_estimate.hpp"

namespace gpuslice::defrag {

WorkloadFacts facts_of(const std::vector<sim::ListedPod>& pods,
                       const std::vector<core::codec::BudgetDocument>& budgets, const std::string& source,
                       std::vector<std::string>& warnings) {
  WorkloadFacts facts;
  facts.pods.reserve(pods.size());
  for (const auto& p : pods) facts.pods.emplace(p.key, core::disruption::pod_facts(p.meta, p.phase));
  for (const auto& b : budgets)
    if (auto f = core::disruption::budget_facts(b, source, warnings)) facts.budgets.push_back(std::move(*f));
  return facts;
}

Input parse_input(std::string_view text, const std::string& source,
                  const core::codec::RequestDefaults& defaults) {
  Input in;
  in.snapshot = sim::parse_snapshot(text, source, std::nullopt, defaults);
  in.warnings = in.snapshot.warnings;
  // The snapshot read the budgets (and warned of those left out).
  in.facts = facts_of(in.snapshot.listed, {}, source, in.warnings);
  for (const auto& b : in.snapshot.budgets) in.facts.budgets.push_back(b.facts);
  return in;
}

Input load_input(const std::string& path, const core::codec::RequestDefaults& defaults) {
  sim::guard_read_memory(path);
  return parse_input(core::codec::read_text_file(path), path, defaults);
}

}  // namespace gpuslice::defrag
