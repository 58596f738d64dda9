// An independent replay of a plan for the tests: a copy of the cluster, a
// fresh scheduler and policy, each move released and charged by hand and
// every card checked after every step. It shares nothing with
// defrag::Replay but the core.
#pragma once

#include <catch2/catch.hpp>

#include "gpuslice/core/scheduler.hpp"
#include "gpuslice/defrag/move_plan.hpp"

namespace defrag_test {

inline void require_cards_within(const gpuslice::core::Cluster& c) {
  for (size_t n = 0; n < c.size(); ++n)
    for (size_t d = 0; d < c.node(n).devices.size(); ++d) {
      const auto& dev = c.node(n).devices[d];
      const auto& use = c.usage(n)[d];
      INFO(c.node(n).name << " card " << d);
      REQUIRE(use.slots <= dev.slots);
      REQUIRE(use.memory_mib <= dev.memory_mib);
      REQUIRE(use.cores <= dev.cores);
    }
}

// Replays `plan` step by step; every step is the scheduler's own choice.
inline void replay_step_by_step(const gpuslice::defrag::Problem& p, const gpuslice::defrag::Plan& plan) {
  using namespace gpuslice;
  core::Cluster c = p.cluster;
  auto policy = p.make_policy();
  for (const auto& pod : p.pods) core::reserved(*policy, c.view(pod.node), pod.request, pod.allocation);
  core::Scheduler scheduler;
  std::vector<defrag::Place> where;
  for (const auto& pod : p.pods) where.push_back({pod.node, pod.allocation});
  std::vector<int> evictions(p.budgets.size(), 0);
  require_cards_within(c);
  for (const auto& m : plan.moves) {
    const auto& pod = p.pods.at(m.pod);
    REQUIRE(pod.movable());
    for (uint32_t b : pod.budgets) REQUIRE(++evictions[b] <= p.budgets[b].allowed);
    REQUIRE(where[m.pod] == m.from);
    c.release(m.from.node, m.from.allocation, pod.request.host);
    core::unreserved(*policy, c.view(m.from.node), pod.request, m.from.allocation);
    const auto d = scheduler.place(c, pod.request, *policy, core::Detail::Full);
    REQUIRE(d.placed());
    REQUIRE(*d.node == m.to.node);
    REQUIRE(d.allocation == m.to.allocation);
    core::Scheduler::commit(c, pod.request, d, *policy);
    where[m.pod] = m.to;
    require_cards_within(c);
  }
  REQUIRE(plan.targets.size() == p.targets.size());
  for (size_t i = 0; i < p.targets.size(); ++i) {
    const auto d = scheduler.place(c, p.targets[i].request, *policy, core::Detail::Full);
    REQUIRE(d.placed());
    REQUIRE(*d.node == plan.targets[i].node);
    REQUIRE(d.allocation == plan.targets[i].allocation);
    core::Scheduler::commit(c, p.targets[i].request, d, *policy);
    require_cards_within(c);
  }
}

}  // namespace defrag_test
