// The simulator asks the refusal explainer's kept per-node refusals before
// the scheduler's scan of the fleet: a shape whose kept refusals show no
// fitting node is refused without the scan. These check the explainer's
// count of fitting nodes against HAMi's fit node by node, and "none fits"
// against the scheduler's own placement, while random pods are charged and
// released (the explainer follows the cluster's change log between asks).
#include "gpuslice/sim/refusal_explainer.hpp"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/scheduler.hpp"

using namespace gpuslice;

namespace {

core::Cluster random_fleet(std::mt19937_64& rng, size_t nodes) {
  core::Cluster cluster;
  const int64_t memories[] = {16000, 24000, 40000};
  for (size_t i = 0; i < nodes; ++i) {
    core::Node n;
    n.name = "node-" + std::to_string(i);
    const int cards = 1 + static_cast<int>(rng() % 4);
    const int64_t memory = memories[rng() % 3];
    for (int c = 0; c < cards; ++c)
      n.devices.push_back(core::healthy_card(n.name + "-" + std::to_string(c), c, "NVIDIA-A10", 4, memory));
    n.capacity = {16000, 65536};
    cluster.add_node(std::move(n));
  }
  return cluster;
}

core::PodRequest random_pod(std::mt19937_64& rng, size_t k) {
  core::PodRequest pod;
  pod.name = "shape-" + std::to_string(k);
  pod.host = {static_cast<int64_t>(500 + rng() % 4000), static_cast<int64_t>(1024 + rng() % 16384)};
  core::ContainerRequest c;
  c.count = 1 + static_cast<int32_t>(rng() % 2);
  c.memory_mib = static_cast<int64_t>(2000 + rng() % 30000);
  c.cores = static_cast<int32_t>(rng() % 4) * 25;
  pod.containers = {c};
  return pod;
}

}  // namespace

TEST_CASE("the explainer's fitting nodes are HAMi's fit's, and none means the scheduler places nowhere",
          "[sim][explainer]") {
  std::mt19937_64 rng(20261128);
  core::Cluster cluster = random_fleet(rng, 80);
  core::PolicyArgs args;
  args.gpu_policy = "binpack";
  auto policy = core::make_policy("hami-binpack", args);
  core::Scheduler scheduler;
  sim::RefusalExplainer explainer;
  std::vector<core::PodRequest> shapes;
  for (size_t k = 0; k < 12; ++k) shapes.push_back(random_pod(rng, k));
  struct Running {
    size_t node;
    core::PodAllocation allocation;
    core::HostResources host;
  };
  std::vector<Running> running;
  core::FitScratch scratch;
  size_t asked_with_none = 0, asked_with_some = 0;

  for (size_t k = 0; k < shapes.size(); ++k) CHECK_FALSE(explainer.knows(cluster, k));
  for (int step = 0; step < 600; ++step) {
    // Mostly placements, so the fleet fills and shapes are refused; some
    // releases, so refused shapes fit again.
    if (running.empty() || rng() % 3 != 0) {
      const core::PodRequest& pod = shapes[rng() % shapes.size()];
      core::Decision d = scheduler.place(cluster, pod, *policy, core::Detail::Minimal);
      if (d.placed()) {
        core::Scheduler::commit(cluster, pod, d, *policy);
        running.push_back({*d.node, std::move(d.allocation), pod.host});
      }
    } else {
      const size_t i = rng() % running.size();
      cluster.release(running[i].node, running[i].allocation, running[i].host);
      running[i] = std::move(running.back());
      running.pop_back();
    }
    // A few shapes asked per step: the others fall behind the change log
    // and catch up over several changes when next asked.
    for (int ask = 0; ask < 2; ++ask) {
      const size_t k = rng() % shapes.size();
      const core::PodRequest& pod = shapes[k];
      const core::GpuPolicy gpu = core::GpuPolicy::parse(policy->gpu_policy_for(pod));
      size_t fit_nodes = 0;
      for (size_t id = 0; id < cluster.size(); ++id)
        fit_nodes += core::fit_pod(cluster.view(id), pod, gpu, scratch).fits;
      const size_t fitting = explainer.fitting(cluster, k, pod, policy->gpu_policy_for(pod));
      REQUIRE(fitting == fit_nodes);
      REQUIRE(explainer.knows(cluster, k));
      const bool placed = scheduler.place(cluster, pod, *policy, core::Detail::Minimal).placed();
      REQUIRE(placed == (fitting > 0));
      ++(fitting == 0 ? asked_with_none : asked_with_some);
    }
  }
  // The run went both ways: shapes refused everywhere and shapes with room.
  CHECK(asked_with_none > 50);
  CHECK(asked_with_some > 50);
  // A new history (usage cleared) is not known: the simulator would scan.
  cluster.clear_usage();
  CHECK_FALSE(explainer.knows(cluster, 0));
}
