// Each research policy's choice on small cases worked out by hand, and the
// fragmentation measure they rest on.
#include <catch2/catch.hpp>

#include "../../core/src/policies/research/common.hpp"
#include "gpuslice/core/mig.hpp"
#include "policy_fixtures.hpp"

using namespace gpuslice::core;
using namespace gpuslice::core::testing;

TEST_CASE("fragment: free compute a typical pod cannot use", "[core][fragmentation]") {
  Cluster c;
  c.add_node(t4_node("a", 2));
  FragmentationModel half({TypicalPod{share(50), 1.0}});
  CHECK(half.node_fragment(c.view(0)) == 0);  // both cards can take half a card
  use(c, 0, 0, 70);                           // card 0 keeps 300 milli: too little
  CHECK(half.node_fragment(c.view(0)) == Approx(300));
  // Weighted over typical pods: a whole-card pod cannot use card 0 either,
  // a 20% pod can use both.
  FragmentationModel mix({TypicalPod{share(100), 0.5}, TypicalPod{share(20), 0.5}});
  CHECK(mix.node_fragment(c.view(0)) == Approx(0.5 * 300));
  // No CPU left: nothing fits, all free compute (300 + 1000) is fragment.
  Cluster cpu_bound;
  cpu_bound.add_node(t4_node("b", 2, {.cpu_milli = 500}));
  cpu_bound.charge(0, PodAllocation{{{DeviceGrant{0, 7000, 70}}}, 0}, {});
  CHECK(half.node_fragment(cpu_bound.view(0)) == Approx(1300));
}

TEST_CASE("typical pods: the shapes covering 95% of pods, renormalised", "[core][fragmentation]") {
  std::vector<PodRequest> pods;
  for (int i = 0; i < 90; ++i) pods.push_back(share(50));
  for (int i = 0; i < 8; ++i) pods.push_back(share(100));
  for (int i = 0; i < 2; ++i) pods.push_back(share(30));
  pods.push_back(PodRequest{});  // CPU only: a shape too, but 1 in 101 is past 95%
  const auto typical = typical_pods(pods);
  REQUIRE(typical.size() == 2);  // 90% then 98%: the 30% shape is past 95%
  CHECK(typical[0].pod.containers.front().cores == 50);
  CHECK(typical[0].weight == Approx(90.0 / 98));
  CHECK(typical[1].weight == Approx(8.0 / 98));
}

TEST_CASE("fgd keeps a card that typical pods can still use", "[core][policy][fgd]") {
  // Card 0 is 40% used, card 1 idle; typical pod: half a card. A 50% pod on
  // card 0 leaves 100 milli nobody can use; on card 1 it leaves 500, which a
  // typical pod can use. FGD picks card 1; best fit picks card 0.
  Cluster c;
  c.add_node(t4_node("a", 2));
  use(c, 0, 0, 40);
  CHECK(place(c, share(50), "fgd", {TypicalPod{share(50), 1.0}}).card == 1);
  CHECK(place(c, share(50), "bestfit").card == 0);
}

TEST_CASE("fgd prefers the node whose fragment it shrinks", "[core][policy][fgd]") {
  // Node a: card at 600 milli used (400 free, below a typical 50%: fragment).
  // Node b: card at 200 used (800 free, usable). A 30% pod on a turns 400
  // fragment into 100 (gain 300); on b it leaves 500, still usable (gain 0).
  Cluster c;
  c.add_node(t4_node("b", 1));
  c.add_node(t4_node("a", 1));
  use(c, 0, 0, 20);
  use(c, 1, 0, 60);
  CHECK(place(c, share(30), "fgd", {TypicalPod{share(50), 1.0}}).node == "a");
}

TEST_CASE("bestfit takes the node left with least", "[core][policy][bestfit]") {
  Cluster c;
  c.add_node(t4_node("big", 8));
  c.add_node(t4_node("small", 2));
  CHECK(place(c, share(100), "bestfit").node == "small");
}

TEST_CASE("gpupacking: shared card, then idle card on a busy node, then an idle node",
          "[core][policy][gpupacking]") {
  Cluster c;
  c.add_node(t4_node("idle", 2));
  c.add_node(t4_node("busy", 2));
  use(c, 1, 0, 30);
  const Choice shared = place(c, share(20), "gpupacking");
  CHECK(shared.node == "busy");
  CHECK(shared.card == 0);
  const Choice whole = place(c, share(100), "gpupacking");
  CHECK(whole.node == "busy");
  CHECK(whole.card == 1);
}

TEST_CASE("dotprod avoids the node whose free resources align with the pod", "[core][policy][dotprod]") {
  // Same cards; node a has much free CPU, node b little. A CPU-heavy pod's
  // demand aligns with a's free vector (larger product), so b is chosen.
  Cluster c;
  c.add_node(t4_node("a", 1, {.cpu_milli = 64000}));
  c.add_node(t4_node("b", 1, {.cpu_milli = 64000}));
  c.charge(1, PodAllocation{}, {48000, 0});
  CHECK(place(c, share(50, 1, 8000), "dotprod").node == "b");
}

TEST_CASE("gpuclustering keeps one GPU tag together", "[core][policy][gpuclustering]") {
  // The artifact's tags: every share is "share-gpu", a whole card "1-gpu"
  // (this test used to key by share size, which the artifact does not).
  Cluster c;
  c.add_node(t4_node("other", 2));
  c.add_node(t4_node("same", 2));
  c.add_node(t4_node("idle", 2));
  auto p = make_policy("gpuclustering");
  Scheduler s;
  auto commit_on = [&](size_t id, const PodRequest& pod) {
    Decision d;
    d.node = id;
    d.allocation.containers.push_back({DeviceGrant{0, 1000, pod.containers.front().cores}});
    Scheduler::commit(c, pod, d, *p);
  };
  commit_on(0, share(100));  // a whole card: tag 1-gpu
  commit_on(1, share(10));   // a share: tag share-gpu
  // Any share joins the node running only shares (75 + 25 x 6100/8000 = 94)
  // over the idle node (25 + 25 x 6000/8000 = 43) and the whole-card node
  // (0 + 25 x 7000/8000 = 21); GPU in use counts against an 8-GPU node.
  CHECK(c.node(*s.place(c, share(70), *p, Detail::Full).node).name == "same");
  CHECK(c.node(*s.place(c, share(10), *p, Detail::Full).node).name == "same");
  // A whole card joins the whole-card node: 75 + 21 = 96.
  CHECK(c.node(*s.place(c, share(100), *p, Detail::Full).node).name == "other");
  // CPU-only pods score 0 everywhere: the node listed first.
  PodRequest cpu_only;
  cpu_only.host = {1000, 1024};
  const Decision d = s.place(c, cpu_only, *p, Detail::Full);
  CHECK(c.node(*d.node).name == "other");
  for (const auto& f : d.fitting) CHECK(f.score.shown == 0);
}

TEST_CASE("random is fixed by its seed and differs across seeds", "[core][policy][random]") {
  auto run = [](uint64_t seed) {
    Cluster c;
    for (int i = 0; i < 20; ++i) c.add_node(t4_node("n" + std::to_string(i), 2));
    PolicyArgs args;
    args.seed = seed;
    auto p = make_policy("random", args);
    Scheduler s;
    std::vector<size_t> chosen;
    for (int i = 0; i < 30; ++i) {
      const Decision d = s.place(c, share(20), *p, Detail::Minimal);
      chosen.push_back(*d.node);
      Scheduler::commit(c, share(20), d, *p);
    }
    return chosen;
  };
  CHECK(run(1) == run(1));
  CHECK(run(1) != run(2));
}

TEST_CASE("every policy the CLI names is registered", "[core][policy]") {
  for (const char* name :
       {"hami-binpack", "hami-spread", "random", "dotprod", "gpupacking", "gpuclustering", "bestfit", "fgd"})
    CHECK(make_policy(name) != nullptr);
  CHECK(make_policy("fgd-exact") != nullptr);
}

// The research policies' look-ahead charges a candidate grant into a copy of
// the node's use (policies/research/common.hpp usage_after); a MIG
// instance's slices must be taken there too, or FGD's fragmentation would
// see room for another instance where HAMi's fit finds none.
TEST_CASE("the look-ahead charges a tentative MIG grant's slices", "[research][mig]") {
  gpuslice::core::Node node;
  node.name = "n";
  gpuslice::core::Device d;
  d.uuid = "GPU-a";
  d.slots = 7;
  d.memory_mib = 40960;
  d.cores = 100;
  d.mode = "mig";
  d.healthy = true;
  d.mig_profiles = {{"1g.5gb", 5120, 14, 1, {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}}};
  node.devices = {d};
  // Slices 0-5 held: only slice 6 is left for a 1g.
  gpuslice::core::DeviceUsage used;
  for (uint32_t s = 0; s < 6; ++s) used.mig_slices += gpuslice::core::mig_slice_counts({s, 1});
  const std::vector<gpuslice::core::DeviceUsage> usage = {used};
  gpuslice::core::NodeView view{0, &node, usage, {}, 0, 0};
  REQUIRE(gpuslice::core::mig_has_room(d, used, 5000));
  gpuslice::core::PodAllocation alloc;
  gpuslice::core::DeviceGrant g;
  g.device = 0;
  g.memory_mib = 5120;
  g.cores = 14;
  g.mig_profile = 0;
  g.mig_placement = {6, 1};
  alloc.containers = {{g}};
  gpuslice::core::research::UsageAfter after;
  REQUIRE(gpuslice::core::research::usage_after(view, alloc, after));
  CHECK(after.cards[0].memory_mib == 5120);
  CHECK(after.cards[0].slots == 1);
  CHECK_FALSE(gpuslice::core::mig_has_room(d, after.cards[0], 5000));
  // An init container's grant goes through the peak path: its slices too.
  alloc.init_count = 1;
  alloc.containers = {{g}, {}};
  REQUIRE(gpuslice::core::research::usage_after(view, alloc, after));
  CHECK_FALSE(gpuslice::core::mig_has_room(d, after.cards[0], 5000));
}
