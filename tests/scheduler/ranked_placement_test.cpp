// The ranked fast path (pod-independent policies, Detail::Minimal) must
// choose exactly what the full scan chooses, pod after pod.
#include <catch2/catch.hpp>
#include <random>

#include "gpuslice/core/dialects/hami/policy.hpp"
#include "gpuslice/core/scheduler.hpp"

using namespace gpuslice::core;

namespace {

Cluster random_fleet(std::mt19937_64& rng, int nodes) {
  Cluster c;
  std::uniform_int_distribution<int> cards(1, 8), mem_pick(0, 2), slots_pick(1, 10);
  const int64_t mems[] = {15360, 24576, 81920};
  for (int n = 0; n < nodes; ++n) {
    Node node;
    node.name = "node-" + std::to_string(n);
    const int k = cards(rng);
    const int64_t mem = mems[mem_pick(rng)];
    for (int i = 0; i < k; ++i) {
      Device d;
      d.uuid = node.name + "-gpu-" + std::to_string(i);
      d.index = i;
      d.type = "NVIDIA-Test";
      d.slots = slots_pick(rng);
      d.memory_mib = mem;
      d.cores = 100;
      d.healthy = true;
      d.numa = i / 4;
      node.devices.push_back(d);
    }
    node.capacity = {64000, 262144};
    c.add_node(node);
  }
  return c;
}

PodRequest random_pod(std::mt19937_64& rng, int i) {
  PodRequest p;
  p.name = "pod-" + std::to_string(i);
  ContainerRequest r;
  std::uniform_int_distribution<int> kind(0, 3), count(1, 4), mem(1, 20), cores(0, 10);
  switch (kind(rng)) {
    case 0:
      r.count = 1;
      r.memory_mib = mem(rng) * 1000;
      r.cores = cores(rng) * 10;
      break;
    case 1:
      r.count = count(rng);
      r.memory_percent = 100;
      r.cores = 100;
      break;
    case 2:
      r.count = 1;
      r.memory_percent = 25 * (1 + kind(rng));
      r.cores = 30;
      break;
    default:
      r.count = 2;
      r.memory_mib = 4000;
      r.cores = 0;
      break;
  }
  p.containers.push_back(r);
  p.host = {std::uniform_int_distribution<int64_t>(0, 16)(rng) * 1000, 8192};
  return p;
}

void run_equivalence(const std::string& node_policy, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Cluster a = random_fleet(rng, 40);
  Cluster b = a;
  HamiPolicy pa(HamiPolicyConfig{node_policy, "spread", true, false, "hami"});
  HamiPolicy pb = pa;
  Scheduler sa, sb;
  int placed = 0, refused = 0;
  for (int i = 0; i < 600; ++i) {
    PodRequest pod = random_pod(rng, i);
    Decision full = sa.place(a, pod, pa, Detail::Full);
    Decision fast = sb.place(b, pod, pb, Detail::Minimal);
    REQUIRE(full.node == fast.node);
    REQUIRE(full.allocation == fast.allocation);
    if (full.placed()) {
      REQUIRE(full.score == Approx(fast.score));
      Scheduler::commit(a, pod, full, pa);
      Scheduler::commit(b, pod, fast, pb);
      ++placed;
    } else {
      ++refused;
    }
  }
  // The run must exercise both outcomes to mean anything.
  CHECK(placed > 50);
  CHECK(refused > 10);
}

}  // namespace

TEST_CASE("ranked binpack placement equals the full scan", "[scheduler][ranked]") {
  for (uint64_t seed : {1u, 2u, 3u}) run_equivalence("binpack", seed);
}

TEST_CASE("ranked spread placement equals the full scan", "[scheduler][ranked]") {
  for (uint64_t seed : {4u, 5u, 6u}) run_equivalence("spread", seed);
}

TEST_CASE("ranked path follows releases", "[scheduler][ranked]") {
  std::mt19937_64 rng(9);
  Cluster a = random_fleet(rng, 12);
  Cluster b = a;
  HamiPolicy pa(HamiPolicyConfig{"binpack", "spread", true, false, "hami"});
  Scheduler sa, sb;
  std::vector<std::pair<PodRequest, Decision>> live;
  for (int i = 0; i < 400; ++i) {
    if (!live.empty() && i % 3 == 0) {
      auto [pod, d] = live[live.size() / 2];
      a.release(*d.node, d.allocation, pod.host);
      b.release(*d.node, d.allocation, pod.host);
      live.erase(live.begin() + static_cast<long>(live.size() / 2));
    }
    PodRequest pod = random_pod(rng, i);
    Decision full = sa.place(a, pod, pa, Detail::Full);
    Decision fast = sb.place(b, pod, pa, Detail::Minimal);
    REQUIRE(full.node == fast.node);
    REQUIRE(full.allocation == fast.allocation);
    if (full.placed()) {
      a.charge(*full.node, full.allocation, pod.host);
      b.charge(*fast.node, fast.allocation, pod.host);
      live.emplace_back(pod, full);
    }
  }
}
