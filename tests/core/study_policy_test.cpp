// The research policies as the FGD study's artifact computes them
// (hkust-adsl/kubernetes-scheduler-simulator), and fragmentation over HAMi's
// dimensions (slots, memory, cores): cases worked out by hand.
#include <catch2/catch.hpp>

#include "policy_fixtures.hpp"

using namespace gpuslice::core;
using namespace gpuslice::core::testing;

namespace {

// A HAMi request for memory only (nvidia.com/gpumem), as most HAMi pods are.
PodRequest memory_only(int64_t mib) {
  PodRequest p;
  p.name = "m";
  ContainerRequest c;
  c.count = 1;
  c.memory_mib = mib;
  p.containers.push_back(c);
  p.host = {1000, 1024};
  return p;
}

}  // namespace

TEST_CASE("fgd scores as integers: small gains tie and go to the node listed first", "[core][policy][fgd]") {
  // Typical pods: 60% (weight 0.05) and 10% (0.95). A 50% pod on node a
  // (520 milli free) leaves 20 nobody can use: gain 26 - 20 = 6; on node b
  // (500 free) it leaves nothing: gain 25. sigmoid(gain/1000) x 100 is 50.1
  // and 50.6: both score 50, and the artifact's selectHost takes the name
  // sorting first, here the node listed first. The exact variant takes b.
  Cluster c;
  c.add_node(t4_node("a", 1));
  c.add_node(t4_node("b", 1));
  use(c, 0, 0, 48, 4800);
  use(c, 1, 0, 50, 5000);
  const std::vector<TypicalPod> typical = {{share(60), 0.05}, {share(10), 0.95}};
  CHECK(place(c, share(50), "fgd", typical).node == "a");
  CHECK(place(c, share(50), "fgd-exact", typical).node == "b");
  PolicyArgs args;
  args.typical_pods = typical;
  auto fgd = make_policy("fgd", args);
  Scheduler s;
  const Decision d = s.place(c, share(50), *fgd, Detail::Full);
  for (const auto& f : d.fitting) CHECK(f.score.shown == 50);
}

TEST_CASE("typical pods count CPU-only shapes - equal counts put the larger shape first",
          "[core][fragmentation]") {
  std::vector<PodRequest> pods;
  PodRequest cpu_only;
  cpu_only.host = {2000, 4096};
  for (int i = 0; i < 50; ++i) pods.push_back(cpu_only);
  for (int i = 0; i < 50; ++i) pods.push_back(share(50));
  // Host memory is not part of a shape: these are the same shape as share(50).
  pods.back().host.memory_mib = 99;
  const auto typical = typical_pods(pods);
  REQUIRE(typical.size() == 2);
  CHECK(typical[0].pod.containers.empty());  // 2000 m CPU sorts above 1000 m
  CHECK(typical[0].weight == Approx(0.5));
  CHECK(typical[1].weight == Approx(0.5));
}

TEST_CASE("fragment: a CPU-only typical pod counts all free GPU - typical fit reads CPU, not memory",
          "[core][fragmentation]") {
  Cluster c;
  Node n = t4_node("a", 2);
  n.capacity = {64000, 2048};
  c.add_node(n);
  use(c, 0, 0, 30, 3000);
  c.charge(0, PodAllocation{}, {0, 2048});  // host memory full, CPU free
  PodRequest cpu_only;
  cpu_only.host = {1000, 1024};
  // Free: 700 + 1000. The 50% typical pod still fits (memory is not checked).
  FragmentationModel model({TypicalPod{cpu_only, 0.5}, TypicalPod{share(50), 0.5}});
  CHECK(model.node_fragment(c.view(0)) == Approx(0.5 * 1700));
  c.charge(0, PodAllocation{}, {64000, 0});  // now no CPU: the 50% pod cannot fit either
  CHECK(model.node_fragment(c.view(0)) == Approx(1700));
}

TEST_CASE("2-D: a card's free capacity is its binding dimension", "[core][fragmentation]") {
  Device t4;
  t4.slots = 10;
  t4.memory_mib = 15360;
  t4.cores = 100;
  t4.healthy = true;
  CHECK(card_free_milli(t4, {}) == 1000);
  CHECK(card_free_milli(t4, DeviceUsage{1, 12000, 0}) == 1000 * 3360 / 15360);  // memory binds
  CHECK(card_free_milli(t4, DeviceUsage{1, 1000, 90}) == 100);                  // cores bind
  CHECK(card_free_milli(t4, DeviceUsage{10, 0, 0}) == 0);                       // no slot left
}

TEST_CASE("2-D repro: a 3000 MiB pod goes to the T4 with 3360 MiB free, not 5360", "[core][policy]") {
  // Two T4s (15360 MiB) holding 10000 and 12000 MiB, no cores in use: the
  // research policies used to read cores only and saw two idle cards.
  for (const char* policy : {"bestfit", "fgd", "gpupacking", "dotprod", "fgd-exact"}) {
    Cluster c;
    c.add_node(t4_node("a", 2, {.card_mib = 15360}));
    use(c, 0, 0, 0, 10000);
    use(c, 0, 1, 0, 12000);
    INFO(policy);
    CHECK(place(c, memory_only(3000), policy).card == 1);
  }
}

TEST_CASE("each research policy on memory-only pods", "[core][policy]") {
  // Node a: 12000 of 15360 MiB used (218 milli free); node b: 2000 used
  // (869 free). A 3000 MiB pod fits both.
  auto fleet = [] {
    Cluster c;
    c.add_node(t4_node("a", 1, {.card_mib = 15360}));
    c.add_node(t4_node("b", 1, {.card_mib = 15360}));
    use(c, 0, 0, 0, 12000);
    use(c, 1, 0, 0, 2000);
    return c;
  };
  Cluster c = fleet();
  CHECK(place(c, memory_only(3000), "bestfit").node == "a");        // least left
  CHECK(place(c, memory_only(3000), "gpupacking").node == "a");     // 100 - 21/10 = 98 over 100 - 86/10 = 92
  CHECK(place(c, memory_only(3000), "dotprod").node == "a");        // less free GPU aligns less
  CHECK(place(c, memory_only(3000), "gpuclustering").node == "a");  // 25 + 24 over 25 + 22
  // FGD (the pod is the typical pod): on a the pod leaves 360 MiB nobody can
  // use (gain -23 milli, score 49); on b 10360, usable (gain 0, score 50).
  CHECK(place(c, memory_only(3000), "fgd").node == "b");
  CHECK_FALSE(place(c, memory_only(3000), "random").node.empty());
}
