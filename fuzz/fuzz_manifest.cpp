// Any text as Node, Pod and PodDisruptionBudget manifests: parsed or refused
// with an InputError naming where, never a crash; parsed pods are placed on
// parsed nodes.
#include <cstdint>
#include <string>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/policies/hami.hpp"
#include "gpuslice/core/scheduler.hpp"

using namespace gpuslice::core;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto nodes = codec::parse_nodes(text, "fuzz.yaml");
    auto pods = codec::parse_pods(text, "fuzz.yaml");
    (void)codec::parse_disruption_budgets(text, "fuzz.yaml");
    Cluster cluster;
    for (auto& n : nodes)
      if (!cluster.find(n.node.name)) cluster.add_node(n.node);
    HamiPolicy policy;
    Scheduler scheduler;
    for (const auto& p : pods) {
      auto d = scheduler.place(cluster, p.request, policy, Detail::Full);
      Scheduler::commit(cluster, p.request, d, policy);
    }
  } catch (const InputError&) {
  }
  return 0;
}
