// The extender's filter on large fleets takes place_among's fast path
// (Detail::Minimal: the ranked walk for HAMi's scores, a pruned scan for the
// research policies). It must choose what the full report chooses: the same
// node and the same cards, for any candidate subset in any order, on a
// cluster that keeps changing (so the cluster's change log is trimmed and
// the rank index must follow it).
#include <algorithm>
#include <random>

#include "gpuslice/core/dialects/hami/policy.hpp"
#include "policy_fixtures.hpp"

using namespace gpuslice::core;
using namespace gpuslice::core::testing;

namespace {

Cluster mixed_fleet(std::mt19937& rng, int nodes) {
  Cluster c;
  for (int i = 0; i < nodes; ++i) {
    const bool big = rng() % 3 == 0;
    NodeShape shape{big ? 128000 : 32000, big ? 81920 : 15360};
    c.add_node(t4_node("node-" + std::to_string(i), big ? 8 : 1 + static_cast<int>(rng() % 4), shape));
  }
  return c;
}

// Shares by core %, memory-only slices (most HAMi pods), whole cards and
// multi-card jobs; some steer binpack or spread by annotation.
PodRequest random_pod(std::mt19937& rng, int n) {
  PodRequest p =
      share(5 + static_cast<int>(rng() % 60), 1 + static_cast<int>(rng() % 10 == 0 ? rng() % 3 : 0),
            static_cast<int64_t>(500 + rng() % 4000));
  p.name = "pod-" + std::to_string(n);
  auto& c = p.containers.front();
  switch (rng() % 4) {
    case 0:  // memory alone
      c.cores = 0;
      c.memory_percent = kMemoryPercentUnset;
      c.memory_mib = 1000 + static_cast<int64_t>(rng() % 8000);
      break;
    case 1:  // a whole card
      c.cores = 100;
      c.memory_percent = 100;
      break;
    default:
      break;
  }
  const auto steer = rng() % 3;
  if (steer == 1) p.node_policy = "spread";
  if (steer == 2) p.node_policy = "binpack";
  return p;
}

// Pods placed and still running: node -> (pod, what it holds).
using Running = std::vector<std::pair<size_t, std::pair<PodRequest, PodAllocation>>>;

// Releases running pods at random: always past `at_most`, else with one
// chance in `one_in` each time, so nodes move both ways.
void let_pods_leave(Cluster& cluster, Policy& policy, Running& running, std::mt19937& rng, size_t at_most,
                    unsigned one_in) {
  while (running.size() > at_most || (!running.empty() && rng() % one_in == 0)) {
    const size_t k = rng() % running.size();
    const auto& [node, held] = running[k];
    cluster.release(node, held.second, held.first.host);
    unreserved(policy, cluster.view(node), held.first, held.second);
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
  }
}

}  // namespace

TEST_CASE("place_among's fast path chooses the node and cards its full report chooses",
          "[core][scheduler][extender]") {
  register_hami_policies();
  for (const char* name : {"hami", "bestfit", "gpupacking", "dotprod", "fgd"}) {
    INFO("policy " << name);
    std::mt19937 rng(7);
    Cluster cluster = mixed_fleet(rng, 60);
    PolicyArgs args;
    args.typical_pods = {{share(20), 1.0}, {share(50), 1.0}, {share(100), 0.5}};
    auto policy = make_policy(name, args);
    Scheduler fast, full;
    Running running;
    int compared = 0, placed = 0;
    // Enough charges and releases that the change log is trimmed on the way.
    for (int round = 0; round < 3000; ++round) {
      const PodRequest pod = random_pod(rng, round);
      std::vector<size_t> candidates;
      for (size_t id = 0; id < cluster.size(); ++id)
        if (rng() % 5 != 0) candidates.push_back(id);
      std::shuffle(candidates.begin(), candidates.end(), rng);
      const Decision want =
          full.place_among(cluster, candidates, candidates.size(), pod, *policy, Detail::Full);
      const Decision got =
          fast.place_among(cluster, candidates, candidates.size(), pod, *policy, Detail::Minimal);
      INFO("round " << round);
      REQUIRE(got.placed() == want.placed());
      ++compared;
      if (!want.placed()) {
        // Nothing fits: the fast path gives the full report (FailedNodes).
        CHECK(got.failed == want.failed);
        CHECK(got.events.size() == want.events.size());
      } else {
        REQUIRE(*got.node == *want.node);
        REQUIRE(got.allocation == want.allocation);
        CHECK(got.events.empty());
        Scheduler::commit(cluster, pod, got, *policy);
        running.push_back({*got.node, {pod, got.allocation}});
        ++placed;
      }
      // Pods leave too, so nodes move both ways in the rank order.
      let_pods_leave(cluster, *policy, running, rng, 40, 3);
    }
    CHECK(compared == 3000);
    CHECK(placed > 1000);
    CHECK(cluster.first_change() > 0);  // the log was trimmed, the index followed
  }
}

TEST_CASE("the cluster's change log keeps absolute positions when trimmed", "[core][cluster]") {
  Cluster c;
  c.add_node(t4_node("a", 1));
  PodAllocation a;
  a.containers.push_back({DeviceGrant{0, 100, 1}});
  for (int i = 0; i < 5000; ++i) {
    c.charge(0, a, {});
    c.release(0, a, {});
  }
  CHECK(c.change_count() == 10000);
  CHECK(c.first_change() > 0);
  CHECK(c.change_count() - c.first_change() <= 4096);
  CHECK(c.changed_node(c.change_count() - 1) == 0);
}

TEST_CASE("a full report refuses each node for its own state while nodes change between reports",
          "[core][scheduler][extender]") {
  // Nodes of one shape share states, so a kept Scheduler copies refusals
  // and remembers which nodes it found alike; after any node changes, each
  // node must still get the refusal its own fit gives.
  register_hami_policies();
  auto policy = make_policy("hami", PolicyArgs{});
  std::mt19937 rng(11);
  Cluster cluster;
  for (int i = 0; i < 48; ++i) cluster.add_node(t4_node("node-" + std::to_string(i), 4));
  Scheduler kept;
  FitScratch scratch;
  Running running;
  int refused_nodes = 0;
  for (int round = 0; round < 600; ++round) {
    INFO("round " << round);
    const PodRequest pod = random_pod(rng, round);
    const Decision report = kept.place(cluster, pod, *policy, Detail::Full);
    const GpuPolicy gpu = GpuPolicy::parse(policy->gpu_policy_for(pod));
    for (const auto& [id, refusal] : report.failed) {
      const FitResult own = fit_pod(cluster.view(id), pod, gpu, scratch);
      REQUIRE_FALSE(own.fits);
      CHECK(refusal == own.refusal);
      ++refused_nodes;
    }
    Scheduler fresh;
    CHECK(fresh.place(cluster, pod, *policy, Detail::Full).failed == report.failed);
    if (report.placed() && rng() % 2 == 0) {
      Scheduler::commit(cluster, pod, report, *policy);
      running.push_back({*report.node, {pod, report.allocation}});
    }
    let_pods_leave(cluster, *policy, running, rng, 60, 4);
  }
  CHECK(refused_nodes > 1000);
}
