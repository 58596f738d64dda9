// Preemption as kube-scheduler's DefaultPreemption picks it, with HAMi's
// fit: hand-built cases whose victims are worked out in the comments by
// kube-scheduler's rules, and a randomised replay of every plan.
#include "gpuslice/core/preemption.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gpuslice/core/scheduler.hpp"

using namespace gpuslice::core;

namespace {

constexpr int64_t kCard = 16000;  // MiB per card

Node node_with_cards(const std::string& name, int cards, int32_t slots = 10) {
  Node n;
  n.name = name;
  for (int i = 0; i < cards; ++i) {
    Device d;
    d.uuid = name + "-GPU-" + std::to_string(i);
    d.index = i;
    d.type = "NVIDIA-A100";
    d.slots = slots;
    d.memory_mib = kCard;
    d.cores = 100;
    d.healthy = true;
    n.devices.push_back(d);
  }
  return n;
}

// An A100 in MIG mode (HAMi's a100MigProfiles), scaled to memory slices
// of `slice_mib`: instances of 1, 2 and 4 slices (1g, 2g, 3g).
void mig_mode(Device& card, int32_t slice_mib) {
  card.mode = "mig";
  card.slots = 7;
  card.memory_mib = 8 * slice_mib;
  auto name = [&](int g, int32_t mib) {
    return std::to_string(g) + "g." + std::to_string(mib / 1000) + "gb";
  };
  card.mig_profiles = {
      {name(1, slice_mib), slice_mib, 14, 1, {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}},
      {name(2, 2 * slice_mib), 2 * slice_mib, 28, 2, {{0, 2}, {2, 2}, {4, 2}}},
      {name(3, 4 * slice_mib), 4 * slice_mib, 42, 3, {{0, 4}, {4, 4}}},
  };
}

// One container on `card` holding `mib` and `cores`.
PodAllocation on_card(int card, int64_t mib, int32_t cores = 0) {
  PodAllocation a;
  a.containers = {{DeviceGrant{card, mib, cores}}};
  return a;
}

PodRequest asking(int32_t cards, int64_t mib, int32_t cores = 0) {
  PodRequest p;
  p.name = "preemptor";
  ContainerRequest c;
  c.name = "main";
  c.count = cards;
  c.memory_mib = mib;
  c.cores = cores;
  p.containers.push_back(c);
  return p;
}

// The question's running pods charged on the cluster.
struct Fixture {
  Cluster cluster;
  PreemptionQuestion question;
  std::unique_ptr<Policy> policy = make_policy("hami");

  void run(const std::string& id, size_t node, int32_t priority, double start, PodAllocation allocation,
           std::vector<uint32_t> budgets = {}) {
    cluster.charge(node, allocation, {});
    question.running.push_back(
        RunningPod{id, node, priority, start, std::move(allocation), {}, std::move(budgets), {}});
  }
  PreemptionPlan plan(FitRule rule = FitRule::Devices) {
    return plan_preemption(cluster, question, *policy, {}, rule);
  }
  // The replay against what preemption did not write: the victims released
  // from a copy of the cluster as the simulator evicts them, then HAMi's
  // fit (fit_pod, with its reasons and card picks) on that node.
  bool fits_after_release(size_t node, std::span<const uint32_t> victims) const {
    Cluster after = cluster;
    for (const uint32_t v : victims)
      after.release(node, question.running[v].allocation, question.running[v].host);
    FitScratch scratch;
    return fit_pod(after.view(node), question.pod, GpuPolicy::parse(policy->gpu_policy_for(question.pod)),
                   scratch)
        .fits;
  }
  std::vector<std::string> ids(const NodeVictims& v) const {
    std::vector<std::string> out;
    for (const uint32_t i : v.victims) out.push_back(question.running[i].id);
    return out;
  }
};

}  // namespace

TEST_CASE("preemption reprieves the most important pod that can stay", "[preemption]") {
  // One 16000 MiB card full: low (priority 1, 8000 MiB) and mid (priority 5,
  // 8000 MiB). The preemptor (priority 10) asks 8000 MiB. Both go, it fits;
  // reprieve in importance order: mid back (8000 used, 8000 free: fits, so
  // mid stays), low back (16000 used: no room, low is the victim).
  Fixture f;
  f.cluster.add_node(node_with_cards("n0", 1));
  f.run("low", 0, 1, 0, on_card(0, 8000));
  f.run("mid", 0, 5, 0, on_card(0, 8000));
  f.question.pod = asking(1, 8000);
  f.question.priority = 10;
  const PreemptionPlan plan = f.plan();
  REQUIRE(plan.eligible);
  REQUIRE(plan.nodes.size() == 1);
  CHECK(f.ids(plan.nodes[0]) == std::vector<std::string>{"low"});
  CHECK(plan.nodes[0].pdb_violations == 0);
  REQUIRE(plan.choice());
  CHECK(plan.choice()->node == 0);
}

TEST_CASE("preemption frees the card a multi-card pod needs, not any slot", "[preemption]") {
  // Two cards. Card 0: a (priority 1, 12000 MiB) and d (priority 3, 2000
  // MiB); card 1: b (priority 2, 12000 MiB). The preemptor asks 2 cards x
  // 8000 MiB. All three gone: fits. Importance order d, b, a:
  //   d back: card 0 has 14000 free, card 1 16000: fits, d stays;
  //   b back: card 1 has 4000 free: no, b is a victim;
  //   a back: card 0 has 2000 free: no, a is a victim.
  // Victims most important first: b, a.
  Fixture f;
  f.cluster.add_node(node_with_cards("n0", 2));
  f.run("a", 0, 1, 0, on_card(0, 12000));
  f.run("d", 0, 3, 0, on_card(0, 2000));
  f.run("b", 0, 2, 0, on_card(1, 12000));
  f.question.pod = asking(2, 8000);
  f.question.priority = 10;
  const PreemptionPlan plan = f.plan();
  REQUIRE(plan.nodes.size() == 1);
  CHECK(f.ids(plan.nodes[0]) == std::vector<std::string>{"b", "a"});

  // Counting slots only (kube-scheduler without the cards): 3 of 20 slots
  // are used, the pod asks 2, so it "fits already" and nobody is preempted
  // though neither card has 8000 MiB free: the first symptom.
  VictimSelector slots(f.cluster, *f.policy, FitRule::SlotCount);
  const std::vector<uint32_t> all{0, 1, 2};
  CHECK(slots.select(f.question, 0, all).outcome == NodeOutcome::FitsAlready);
  CHECK(f.plan(FitRule::SlotCount).nodes.empty());
  // With the GPU resources ignoredByScheduler kube-scheduler sees only the
  // host (untracked here): the same.
  CHECK(f.plan(FitRule::HostOnly).nodes.empty());
}

TEST_CASE("preemption frees the MIG instance a victim holds", "[preemption][mig]") {
  // An A100 in MIG mode (HAMi's a100MigProfiles) holding two 3g.20gb
  // instances: low (priority 1) on memory slices 4-7, mid (priority 5) on
  // slices 0-3. The preemptor (priority 10) asks 20000 MiB: only a 3g.20gb
  // holds it, and both of its placements are taken. Both go: fits; mid back
  // (slices 4-7 free: fits, mid stays); low back (no placement free): low is
  // the victim. Evicting a pod frees its slices as Cluster::release does;
  // a what-if that kept them would find no room on the card at all.
  Fixture f;
  Node n = node_with_cards("n0", 1);
  mig_mode(n.devices[0], 5120);  // 40960 MiB: 1g.5gb, 2g.10gb, 3g.20gb
  f.cluster.add_node(n);
  auto instance = [](MigPlacement at) {
    PodAllocation a;
    a.containers = {{DeviceGrant{0, 20480, 42, kRatioFromMemory, 0, 2, at}}};
    return a;
  };
  f.run("low", 0, 1, 0, instance({4, 4}));
  f.run("mid", 0, 5, 0, instance({0, 4}));
  f.question.pod = asking(1, 20000);
  f.question.priority = 10;
  VictimSelector selector(f.cluster, *f.policy);
  CHECK(selector.select(f.question, 0, std::vector<uint32_t>{}).outcome == NodeOutcome::NoLowerPriority);
  const PreemptionPlan plan = f.plan();
  REQUIRE(plan.nodes.size() == 1);
  CHECK(f.ids(plan.nodes[0]) == std::vector<std::string>{"low"});
  // Replayed on the cluster: with low released the pod fits the card.
  CHECK(selector.fits_without(f.question, 0, plan.nodes[0].victims));
  CHECK_FALSE(selector.fits_without(f.question, 0, std::vector<uint32_t>{}));
}

TEST_CASE("counting slots, kube-scheduler evicts pods whose cards do not help", "[preemption]") {
  // Two cards of 2 slots each: card 0 holds a (priority 1, 4000 MiB) and b
  // (priority 2, 8000 MiB); card 1 holds c (priority 3, 15000 MiB) and d
  // (priority 4, 100 MiB). All 4 slots are used; the pod (priority 10)
  // asks 1 card of 10000 MiB.
  Fixture f;
  f.cluster.add_node(node_with_cards("n0", 2, 2));
  f.run("a", 0, 1, 0, on_card(0, 4000));
  f.run("b", 0, 2, 0, on_card(0, 8000));
  f.run("c", 0, 3, 0, on_card(1, 15000));
  f.run("d", 0, 4, 0, on_card(1, 100));
  f.question.pod = asking(1, 10000);
  f.question.priority = 10;
  // Slots: d back (3 free), c back (2), b back (1), a back (0 free: a is
  // the victim). Evicting a alone leaves card 0 with 8000 MiB free and
  // card 1 with 900: the pod still does not fit its cards.
  const PreemptionPlan slots = f.plan(FitRule::SlotCount);
  REQUIRE(slots.nodes.size() == 1);
  CHECK(f.ids(slots.nodes[0]) == std::vector<std::string>{"a"});
  VictimSelector replay(f.cluster, *f.policy);
  CHECK_FALSE(replay.fits_without(f.question, 0, slots.nodes[0].victims));
  // HAMi's fit: d and c back (card 0 empty: fits), b back (card 0 8000
  // free, card 1 900: no) -> victim b; a back (card 0 12000 free and a slot:
  // fits). The victim is b.
  const PreemptionPlan cards = f.plan();
  REQUIRE(cards.nodes.size() == 1);
  CHECK(f.ids(cards.nodes[0]) == std::vector<std::string>{"b"});
  CHECK(replay.fits_without(f.question, 0, cards.nodes[0].victims));
}

TEST_CASE("preemption orders equal priorities by start time", "[preemption]") {
  // One card, two priority-1 pods of 8000 MiB: early (started at 50) and
  // late (started at 100). MoreImportantPod: the earlier start is the more
  // important, so early is reprieved first and fits; late is the victim.
  Fixture f;
  f.cluster.add_node(node_with_cards("n0", 1));
  f.run("late", 0, 1, 100, on_card(0, 8000));
  f.run("early", 0, 1, 50, on_card(0, 8000));
  f.question.pod = asking(1, 8000);
  f.question.priority = 2;
  PreemptionPlan plan = f.plan();
  REQUIRE(plan.nodes.size() == 1);
  CHECK(f.ids(plan.nodes[0]) == std::vector<std::string>{"late"});

  // Between nodes, with one priority-1 victim each (equal PDB violations,
  // highest priority, sum and count), the node whose victim started last
  // wins (GetEarliestPodStartTime is latest there): n2, started at 200.
  Fixture g;
  g.cluster.add_node(node_with_cards("n1", 1));
  g.cluster.add_node(node_with_cards("n2", 1));
  g.run("v1", 0, 1, 100, on_card(0, kCard));
  g.run("v2", 1, 1, 200, on_card(0, kCard));
  g.question.pod = asking(1, 4000);
  g.question.priority = 5;
  plan = g.plan();
  REQUIRE(plan.nodes.size() == 2);
  REQUIRE(plan.choice());
  CHECK(plan.choice()->node == 1);
}

TEST_CASE("a PodDisruptionBudget decides the node", "[preemption]") {
  // n0: guarded (priority 1) fills its card, under a budget allowing 0
  // disruptions: evicting it violates the budget (1 violation). n1: free
  // (priority 5) fills its card, no budget. The lower victim priority would
  // pick n0, but fewest PDB violations comes first: n1.
  Fixture f;
  f.cluster.add_node(node_with_cards("n0", 1));
  f.cluster.add_node(node_with_cards("n1", 1));
  f.question.budgets = {0};
  f.run("guarded", 0, 1, 0, on_card(0, kCard), {0});
  f.run("free", 1, 5, 0, on_card(0, kCard));
  f.question.pod = asking(1, 10000);
  f.question.priority = 10;
  PreemptionPlan plan = f.plan();
  REQUIRE(plan.nodes.size() == 2);
  CHECK(plan.nodes[0].pdb_violations == 1);
  CHECK(plan.nodes[1].pdb_violations == 0);
  REQUIRE(plan.choice());
  CHECK(plan.choice()->node == 1);

  // With one disruption allowed the budget holds: n0 has no violation and
  // its victim's lower priority (1 < 5) picks it.
  f.question.budgets = {1};
  plan = f.plan();
  REQUIRE(plan.choice());
  CHECK(plan.choice()->node == 0);
  CHECK(plan.choice()->pdb_violations == 0);
}

TEST_CASE("pickOneNodeForPreemption's order, step by step", "[preemption]") {
  // Victims listed most important first, as select() returns them.
  std::vector<RunningPod> pods;
  auto pod = [&](int32_t priority, double start) {
    pods.push_back(RunningPod{"p" + std::to_string(pods.size()), 0, priority, start, {}, {}, {}, {}});
    return static_cast<uint32_t>(pods.size() - 1);
  };
  auto node = [](size_t id, std::vector<uint32_t> victims, int64_t violations = 0) {
    return NodeVictims{id, std::move(victims), violations};
  };
  // 2. The lowest highest-victim priority: n1's top victim is 3, n0's 5.
  std::vector<NodeVictims> nodes{node(0, {pod(5, 0)}), node(1, {pod(3, 0), pod(2, 0)})};
  CHECK(pick_one_node(nodes, pods) == 1u);
  // 3. Equal tops (4): the smaller sum wins, n0 (4 + 1) over n1 (4 + 3).
  nodes = {node(0, {pod(4, 0), pod(1, 0)}), node(1, {pod(4, 0), pod(3, 0)})};
  CHECK(pick_one_node(nodes, pods) == 0u);
  // The shift by 2^31 makes each victim count: two priority -5 victims sum
  // more than one, so n1 (one victim) wins though its plain sum (-5) is
  // larger than n0's (-10).
  nodes = {node(0, {pod(-5, 0), pod(-5, 0)}), node(1, {pod(-5, 0)})};
  CHECK(pick_one_node(nodes, pods) == 1u);
  // 4. Equal tops and sums, different counts: a victim of the lowest
  // priority (-2^31) adds 0 to the shifted sum, so n1's extra victim leaves
  // the sums equal and fewest victims picks n0.
  const int32_t lowest = std::numeric_limits<int32_t>::min();
  nodes = {node(0, {pod(3, 0)}), node(1, {pod(3, 0), pod(lowest, 0)})};
  CHECK(pick_one_node(nodes, pods) == 0u);
  // 5. Equal up to here: the node whose top victim started later (n1).
  nodes = {node(0, {pod(3, 100), pod(1, 0)}), node(1, {pod(3, 200), pod(1, 0)})};
  CHECK(pick_one_node(nodes, pods) == 1u);
  // 5 reads only the highest-priority victims: n0's priority-1 victim
  // started at 500, yet n0's top (priority 3) started at 50: n1 (top at 60).
  nodes = {node(0, {pod(3, 50), pod(1, 500)}), node(1, {pod(3, 60), pod(1, 0)})};
  CHECK(pick_one_node(nodes, pods) == 1u);
  // 6. All equal: the first listed.
  nodes = {node(4, {pod(2, 7)}), node(5, {pod(2, 7)})};
  CHECK(pick_one_node(nodes, pods) == 0u);
  CHECK_FALSE(pick_one_node({}, pods));
}

TEST_CASE("budget-violating victims are reprieved first", "[preemption]") {
  // One card: guarded (priority 1, 8000 MiB, budget allows 0) and plain
  // (priority 3, 8000 MiB). The preemptor asks 8000 MiB. Reprieve tries
  // the violating group first: guarded back fits, so it stays although it
  // is less important; plain is the victim.
  Fixture f;
  f.cluster.add_node(node_with_cards("n0", 1));
  f.question.budgets = {0};
  f.run("guarded", 0, 1, 0, on_card(0, 8000), {0});
  f.run("plain", 0, 3, 0, on_card(0, 8000));
  f.question.pod = asking(1, 8000);
  f.question.priority = 10;
  const PreemptionPlan plan = f.plan();
  REQUIRE(plan.nodes.size() == 1);
  CHECK(f.ids(plan.nodes[0]) == std::vector<std::string>{"plain"});
  CHECK(plan.nodes[0].pdb_violations == 0);
}

TEST_CASE("preemptionPolicy Never preempts nobody, and an equal priority is never a victim", "[preemption]") {
  Fixture f;
  f.cluster.add_node(node_with_cards("n0", 1));
  f.run("low", 0, 1, 0, on_card(0, kCard));
  f.question.pod = asking(1, 8000);
  f.question.priority = 10;
  f.question.preempt_never = true;
  PreemptionPlan plan = f.plan();
  CHECK_FALSE(plan.eligible);
  CHECK(plan.nodes.empty());
  CHECK_FALSE(plan.choice());

  f.question.preempt_never = false;
  f.question.priority = 1;  // same as low's: not lower, not a candidate
  VictimSelector selector(f.cluster, *f.policy);
  const std::vector<uint32_t> all{0};
  CHECK(selector.select(f.question, 0, all).outcome == NodeOutcome::NoLowerPriority);
  CHECK(f.plan().nodes.empty());
}

TEST_CASE("a node where no eviction makes room is no candidate", "[preemption]") {
  // keep (priority 9) holds 10000 MiB; low (priority 1) 6000 MiB. A
  // priority-5 pod asking 8000 MiB: with low gone 6000 MiB are free: no room.
  Fixture f;
  f.cluster.add_node(node_with_cards("n0", 1));
  f.run("keep", 0, 9, 0, on_card(0, 10000));
  f.run("low", 0, 1, 0, on_card(0, 6000));
  f.question.pod = asking(1, 8000);
  f.question.priority = 5;
  VictimSelector selector(f.cluster, *f.policy);
  const std::vector<uint32_t> all{0, 1};
  CHECK(selector.select(f.question, 0, all).outcome == NodeOutcome::NoRoom);
  CHECK(f.plan().nodes.empty());
}

TEST_CASE("preemption refuses pods the cluster never charged", "[preemption]") {
  Fixture f;
  f.cluster.add_node(node_with_cards("n0", 1));
  f.question.running.push_back(RunningPod{"ghost", 0, 1, 0, on_card(0, 4000), {}, {}, {}});
  f.question.pod = asking(1, 8000);
  f.question.priority = 5;
  CHECK_THROWS_AS(f.plan(), std::invalid_argument);
  f.question.running[0].node = 3;
  CHECK_THROWS_AS(f.plan(), std::invalid_argument);
}

// Every plan, replayed: the pod fits with the victims gone, and no proper
// subset of them makes room. What kube-scheduler's reprieve guarantees is
// that each victim, put back alone, leaves no room; with a fit that more
// use never helps (a one-container pod, as here) that means no proper
// subset suffices. It does not promise the fewest victims over all sets.
TEST_CASE("randomised: every plan fits and no proper subset of its victims does", "[preemption][random]") {
  std::mt19937_64 rng(20261128);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int plans = 0, victims_seen = 0, mig_plans = 0;
  for (int round = 0; round < 300; ++round) {
    Fixture f;
    const int nodes = pick(1, 4);
    for (int n = 0; n < nodes; ++n) {
      Node node = node_with_cards("n" + std::to_string(n), pick(1, 4), 4);
      // Some cards in MIG mode (16000 MiB as the others): an eviction must
      // free the victim's slices.
      for (Device& card : node.devices)
        if (pick(0, 3) == 0) mig_mode(card, 2000);
      f.cluster.add_node(node);
    }
    f.question.budgets = {pick(0, 2), pick(0, 2)};
    Scheduler scheduler;
    for (int i = 0, pods = pick(2, 24); i < pods; ++i) {
      PodRequest p = asking(pick(1, 2), 1000 * pick(1, 12), 10 * pick(0, 5));
      p.name = "p" + std::to_string(i);
      const Decision d = scheduler.place(f.cluster, p, *f.policy, Detail::Minimal);
      if (!d.placed()) continue;
      std::vector<uint32_t> budgets;
      if (pick(0, 3) == 0) budgets.push_back(static_cast<uint32_t>(pick(0, 1)));
      f.run(p.name, *d.node, pick(0, 5), pick(0, 3) * 10.0, d.allocation, budgets);
    }
    f.question.pod = asking(pick(1, 2), 1000 * pick(2, 16), 10 * pick(0, 10));
    f.question.priority = pick(1, 6);
    const PreemptionPlan plan = f.plan();
    VictimSelector replay(f.cluster, *f.policy);
    for (const NodeVictims& n : plan.nodes) {
      ++plans;
      REQUIRE_FALSE(n.victims.empty());
      victims_seen += static_cast<int>(n.victims.size());
      for (size_t k = 0; k < n.victims.size(); ++k) {
        const RunningPod& v = f.question.running[n.victims[k]];
        CHECK(v.node == n.node);
        CHECK(v.priority < f.question.priority);
        if (k > 0) CHECK_FALSE(more_important(v, f.question.running[n.victims[k - 1]]));
      }
      CHECK(replay.fits_without(f.question, n.node, n.victims));
      CHECK(f.fits_after_release(n.node, n.victims));
      mig_plans += f.cluster.node(n.node).devices.front().is_mig() ? 1 : 0;
      const size_t count = n.victims.size();
      if (count <= 10) {
        for (uint32_t mask = 0; mask + 1 < (1u << count); ++mask) {
          std::vector<uint32_t> subset;
          for (size_t b = 0; b < count; ++b)
            if (mask & (1u << b)) subset.push_back(n.victims[b]);
          INFO("round " << round << " node " << n.node << " subset mask " << mask);
          CHECK_FALSE(replay.fits_without(f.question, n.node, subset));
          CHECK_FALSE(f.fits_after_release(n.node, subset));
        }
      } else {
        for (size_t skip = 0; skip < count; ++skip) {
          std::vector<uint32_t> subset;
          for (size_t b = 0; b < count; ++b)
            if (b != skip) subset.push_back(n.victims[b]);
          CHECK_FALSE(replay.fits_without(f.question, n.node, subset));
          CHECK_FALSE(f.fits_after_release(n.node, subset));
        }
      }
    }
    // The chosen node is one no other candidate beats in kube-scheduler's order.
    if (plan.choice()) {
      auto key = [&](const NodeVictims& n) {
        int64_t sum = 0;
        for (const uint32_t v : n.victims) sum += f.question.running[v].priority + (int64_t{1} << 31);
        return std::tuple(n.pdb_violations, f.question.running[n.victims.front()].priority, sum,
                          n.victims.size());
      };
      for (const NodeVictims& n : plan.nodes) CHECK(key(*plan.choice()) <= key(n));
    } else {
      CHECK(plan.nodes.empty());
    }
  }
  // The generator must actually exercise preemption.
  CHECK(plans > 100);
  CHECK(victims_seen > plans);
  CHECK(mig_plans > 10);
}

TEST_CASE("score_victims holds what pickOneNodeForPreemption compares", "[preemption]") {
  std::vector<RunningPod> pods{RunningPod{"a", 0, 3, 50, {}, {}, {}, {}},
                               RunningPod{"b", 0, 1, 500, {}, {}, {}, {}},
                               RunningPod{"c", 0, 3, 40, {}, {}, {}, {}}};
  // Victims most important first: c (3, started 40), a (3, 50), b (1, 500).
  const VictimsScore s = score_victims(NodeVictims{0, {2, 0, 1}, 1}, pods);
  CHECK(s.pdb_violations == 1);
  CHECK(s.top_priority == 3);
  CHECK(s.shifted_sum == (3 + (int64_t{1} << 31)) * 2 + 1 + (int64_t{1} << 31));
  CHECK(s.count == 3);
  CHECK(s.earliest_top_ns == 40'000'000'000);  // the earliest of the priority-3 victims
  // Over scores, the first best: fewer violations beat a lower top priority.
  VictimsScore other = s;
  other.pdb_violations = 0;
  other.top_priority = 9;
  CHECK(pick_one_node(std::vector<VictimsScore>{s, other}) == 1u);
  CHECK(pick_one_node(std::vector<VictimsScore>{s, s}) == 0u);
  CHECK_FALSE(pick_one_node(std::span<const VictimsScore>{}));
}
