// Small fleets, requests and placements shared by the research-policy tests
// (hand-worked cases: T4-like cards with 10 slots, 100 cores and 10000 MiB).
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "gpuslice/core/fragmentation.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/scheduler.hpp"

namespace gpuslice::core::testing {

struct NodeShape {
  int64_t cpu_milli = 64000;
  int64_t card_mib = 10000;
};

inline Node t4_node(const std::string& name, int cards, NodeShape shape = {}) {
  Node n;
  n.name = name;
  for (int i = 0; i < cards; ++i)
    n.devices.push_back(healthy_card(name + "-" + std::to_string(i), i, "NVIDIA-T4", 10, shape.card_mib));
  n.capacity = {shape.cpu_milli, 131072};
  return n;
}

// One container on `count` cards, `cores`% and the same % of memory each.
inline PodRequest share(int cores, int count = 1, int64_t cpu = 1000) {
  PodRequest p;
  p.name = "p";
  ContainerRequest c;
  c.count = count;
  c.cores = cores;
  c.memory_percent = cores;
  p.containers.push_back(c);
  p.host = {cpu, 1024};
  return p;
}

// Puts `cores`% and `mib` MiB of card `card` of node `id` in use (by
// default the same share of a 10000 MiB card's memory).
inline void use(Cluster& c, size_t id, int card, int cores, int64_t mib = -1) {
  PodAllocation a;
  a.containers.push_back({DeviceGrant{card, mib < 0 ? 100LL * cores : mib, cores}});
  c.charge(id, a, {});
}

struct Choice {
  std::string node;
  int card;
};

inline Choice place(Cluster& c, const PodRequest& pod, const std::string& policy,
                    std::vector<TypicalPod> typical = {}) {
  PolicyArgs args;
  args.typical_pods = std::move(typical);
  auto p = make_policy(policy, args);
  Scheduler s;
  const Decision d = s.place(c, pod, *p, Detail::Full);
  REQUIRE(d.placed());
  return {c.node(*d.node).name, d.allocation.containers.front().front().device};
}

}  // namespace gpuslice::core::testing
