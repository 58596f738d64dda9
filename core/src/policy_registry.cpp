#include <fmt/format.h>

#include <map>
#include <mutex>
#include <stdexcept>

#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core {

void register_research_policies();  // policies/research/register.cpp

namespace {
std::map<std::string, PolicyFactory, std::less<>>& registry() {
  static std::map<std::string, PolicyFactory, std::less<>> r;
  return r;
}
// Explicit registration (not static initialisers, which a static library
// may drop) done once, on first use.
void ensure_registered() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Each dialect brings its own; the study's read HAMi's requests.
    for (const dialects::DialectUnit* unit : dialects::all()) unit->register_policies();
    register_research_policies();
  });
}
}  // namespace

std::string Policy::gpu_policy_for(const PodRequest& pod) const {
  return pod.gpu_policy.empty() ? default_gpu_policy_ : pod.gpu_policy;
}

size_t NodeLottery::best_draw(std::span<const uint32_t> nodes) const {
  return highest_ticket(nodes, [this](uint32_t node) { return node_draw(node); });
}

void register_policy(std::string name, PolicyFactory factory) {
  registry()[std::move(name)] = std::move(factory);
}

std::unique_ptr<Policy> make_policy(std::string_view name, const PolicyArgs& args) {
  if (std::string problem = policy_name_problem(name); !problem.empty()) throw std::invalid_argument(problem);
  check_gpu_policy(args.gpu_policy);
  return registry().find(name)->second(args);
}

std::string policy_name_problem(std::string_view name) {
  ensure_registered();
  if (registry().count(name)) return {};
  return fmt::format("unknown policy '{}' (known: {})", name, fmt::join(policy_names(), ", "));
}

std::vector<std::string> policy_names() {
  ensure_registered();
  std::vector<std::string> names;
  for (const auto& [n, f] : registry()) names.push_back(n);
  return names;
}

float hami_node_score(const NodeView& node) {
  int64_t used = 0, used_cores = 0, used_mem = 0, total = 0, total_cores = 0, total_mem = 0;
  for (size_t i = 0; i < node.device_count(); ++i) {
    const auto& d = node.device(i);
    const auto& u = node.usage[i];
    used += u.slots;
    used_cores += u.cores;
    used_mem += u.memory_mib;
    total += d.slots;
    total_cores += d.cores;
    total_mem += d.memory_mib;
  }
  if (total == 0 || total_cores == 0 || total_mem == 0) return 0.0f;
  // float on purpose: HAMi's score is float32 and users compare printed values.
  const float use_score = static_cast<float>(used) / static_cast<float>(total);
  const float core_score = static_cast<float>(used_cores) / static_cast<float>(total_cores);
  const float mem_score = static_cast<float>(used_mem) / static_cast<float>(total_mem);
  return 10.0f * (use_score + core_score + mem_score);
}

}  // namespace gpuslice::core
