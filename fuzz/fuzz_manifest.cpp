// Any text as Node, Pod and PodDisruptionBudget manifests (Koordinator's
// Devices and KAI's labels among them): parsed or refused with an
// InputError naming where, never a crash; parsed pods are placed on parsed
// nodes under HAMi's, Koordinator's and KAI's policies, each pod said in the
// policy's dialect when it can be.
#include <cstdint>
#include <string>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/scheduler.hpp"
#include "gpuslice/core/translate.hpp"

using namespace gpuslice::core;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto nodes = codec::parse_nodes(text, "fuzz.yaml");
    auto pods = codec::parse_pods(text, "fuzz.yaml");
    (void)codec::parse_disruption_budgets(text, "fuzz.yaml");
    Cluster fleet;
    for (auto& n : nodes)
      if (!fleet.find(n.node.name)) fleet.add_node(n.node);
    for (const char* name : {"hami-binpack", "koordinator", "kai-binpack"}) {
      Cluster cluster = fleet;
      auto policy = make_policy(name);
      Scheduler scheduler;
      for (const auto& p : pods) {
        PodRequest request = p.request;
        if (translate(request, policy->dialect())) continue;  // not sayable in this dialect
        auto d = scheduler.place(cluster, request, *policy, Detail::Full);
        Scheduler::commit(cluster, request, d, *policy);
      }
    }
  } catch (const InputError&) {
  }
  return 0;
}
