#include "gpuslice/serve/dialect_check.hpp"

#include <fmt/format.h>

#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::serve {

std::vector<std::string> check_servable(const std::string& policy, const NodesByDialect* snapshot_nodes,
                                        const std::string& source) {
  if (policy != "hami") {
    if (std::string problem = core::policy_name_problem(policy); !problem.empty())
      throw core::InputError("command line", 0, "--policy", problem);
    // A policy is its unit's: `dra` reads HAMi's requests but is DRA's (it
    // allocates inside kube-scheduler and writes ResourceClaim status, not an
    // extender's annotations). The study's policies are the dialect's whose
    // requests they read (HAMi's).
    const core::dialects::DialectUnit* own = core::dialects::policy_unit(policy);
    const core::dialects::DialectUnit& d =
        own ? *own : core::dialects::unit(core::make_policy(policy)->dialect());
    if (std::string problem = d.serve_problem(); !problem.empty())
      throw core::InputError(
          "command line", 0, "--policy",
          fmt::format("{} is {}, which serve cannot serve: {}", policy, d.policies_are(), problem));
  }
  std::vector<std::string> warnings;
  if (!snapshot_nodes) return warnings;
  size_t served = 0, unserved = 0;
  std::string named;
  for (const auto& [dialect, count] : *snapshot_nodes) {
    const core::dialects::DialectUnit& d = core::dialects::unit(dialect);
    if (d.serve_problem().empty()) {
      served += count;
      continue;
    }
    unserved += count;
    named += fmt::format("{}{} node{} through {}", named.empty() ? "" : ", ", count, count == 1 ? "" : "s",
                         d.registers_by());
    warnings.push_back(fmt::format("{}: {} node{} register{} GPUs through {}, which serve does not read: {}",
                                   source, count, count == 1 ? "" : "s", count == 1 ? "s its" : " their",
                                   d.registers_by(), d.serve_problem()));
  }
  if (unserved > 0 && served == 0)
    throw core::InputError(source, 0, "kind",
                           fmt::format("no GPU node serve can read: {} ({})", named, warnings.front()));
  for (auto& w : warnings) w += "; those nodes answer every filter with \"node unregistered\"";
  return warnings;
}

std::string unserved_node_note(const std::string& node, core::Dialect registered_by) {
  const core::dialects::DialectUnit& d = core::dialects::unit(registered_by);
  if (d.serve_problem().empty()) return {};
  return fmt::format(
      "node {} registers its GPUs through {}, which serve does not read: it answers every "
      "filter with \"node unregistered\"",
      node, d.registers_by());
}

}  // namespace gpuslice::serve
