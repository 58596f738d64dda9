// The research policies' fast path (Detail::Minimal: per-(request shape,
// node) score cache, Random's per-shape lists of nodes that may fit, a
// shared fragment model, same-state node skipping, same-card skipping)
// must choose exactly what the full scan chooses, pod after pod, with
// departures in between.
#include <catch2/catch.hpp>
#include <map>
#include <random>

#include "gpuslice/core/fragmentation.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/scheduler.hpp"

using namespace gpuslice::core;

namespace {

// Few templates, so many nodes share a state and the skipping is exercised.
Cluster templated_fleet(std::mt19937_64& rng, int nodes) {
  Cluster c;
  struct Template {
    int cards;
    int64_t mem;
    int32_t slots;
    int64_t cpu;
  };
  const Template templates[] = {
      {8, 32768, 10, 96000}, {2, 15360, 10, 64000}, {4, 16384, 4, 48000}, {1, 24576, 10, 32000}};
  std::uniform_int_distribution<int> pick(0, 3);
  for (int n = 0; n < nodes; ++n) {
    const Template& t = templates[pick(rng)];
    Node node;
    node.name = "node-" + std::to_string(n);
    for (int i = 0; i < t.cards; ++i)
      node.devices.push_back(healthy_card(node.name + "-gpu-" + std::to_string(i), i,
                                          t.mem == 32768 ? "G2" : "T4", t.slots, t.mem));
    node.capacity = {t.cpu, 262144};
    c.add_node(node);
  }
  return c;
}

PodRequest shaped_pod(std::mt19937_64& rng, int i) {
  PodRequest p;
  p.name = "pod-" + std::to_string(i);
  ContainerRequest r;
  std::uniform_int_distribution<int> kind(0, 5), share(1, 9), cpu(0, 4);
  const int k = kind(rng);
  const int s = share(rng);
  const int c = cpu(rng);
  if (k <= 3) {  // a share: s tenths of a card
    r.count = 1;
    r.cores = s * 10;
    r.memory_percent = s * 10;
  } else if (k == 4) {  // whole cards
    r.count = 1 + s % 4;
    r.cores = 100;
    r.memory_percent = 100;
  }  // else CPU only
  if (r.count > 0) p.containers.push_back(r);
  p.host = {c * 4000, 4096};
  return p;
}

void run_equivalence(const std::string& name, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Cluster a = templated_fleet(rng, 50);
  Cluster b = a;
  // Typical pods from a sample of the same stream.
  std::mt19937_64 sample_rng(seed + 100);
  std::vector<PodRequest> sample;
  for (int i = 0; i < 300; ++i) sample.push_back(shaped_pod(sample_rng, i));
  PolicyArgs args;
  args.seed = seed;
  args.typical_pods = typical_pods(sample);
  auto pa = make_policy(name, args);
  // The fast side's FGD shares a fragment model (as the simulator's does):
  // its memo must not change a choice.
  PolicyArgs shared = args;
  shared.fragmentation = std::make_shared<FragmentationModel>(args.typical_pods);
  auto pb = make_policy(name, shared);
  Scheduler sa, sb;
  std::vector<std::pair<PodRequest, Decision>> live;
  int placed = 0, refused = 0;
  for (int i = 0; i < 700; ++i) {
    if (!live.empty() && i % 4 == 0) {
      const size_t k = static_cast<size_t>(i) % live.size();
      auto [pod, d] = live[k];
      a.release(*d.node, d.allocation, pod.host);
      b.release(*d.node, d.allocation, pod.host);
      unreserved(*pa, a.view(*d.node), pod, d.allocation);
      unreserved(*pb, b.view(*d.node), pod, d.allocation);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    }
    PodRequest pod = shaped_pod(rng, i);
    Decision full = sa.place(a, pod, *pa, Detail::Full);
    Decision fast = sb.place(b, pod, *pb, Detail::Minimal);
    INFO(name << " pod " << i);
    REQUIRE(full.node == fast.node);
    REQUIRE(full.allocation == fast.allocation);
    if (full.placed()) {
      Scheduler::commit(a, pod, full, *pa);
      Scheduler::commit(b, pod, fast, *pb);
      live.emplace_back(pod, full);
      ++placed;
    } else {
      ++refused;
    }
  }
  CHECK(placed > 100);
  CHECK(refused > 10);
}

}  // namespace

TEST_CASE("research policies: the fast path chooses what the full scan chooses", "[scheduler][research]") {
  for (const char* name : {"fgd", "bestfit", "dotprod", "gpupacking", "gpuclustering", "random"})
    for (uint64_t seed : {1u, 2u}) run_equivalence(name, seed);
}
