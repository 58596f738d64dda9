// Cluster Autoscaler's node groups in the simulator, against runs worked
// out by hand from CA's rules (binpacking estimate, expanders, scale-down
// after scale_down_unneeded when every pod can move, never below min or
// above max) and HAMi's fit.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/diurnal.hpp"
#include "gpuslice/sim/headline.hpp"
#include "gpuslice/sim/html_report.hpp"
#include "gpuslice/sim/scenario.hpp"
#include "gpuslice/sim/simulator.hpp"

using namespace gpuslice;
using namespace gpuslice::sim;

namespace {

RunResult run(const std::string& yaml, uint64_t seed = 42) {
  const Scenario s = parse_scenario(yaml, "autoscale.yaml", ".");
  RunOptions o = scenario_options(s);
  o.seed = seed;
  return simulate(s, o);
}

const PodRecord& pod(const RunResult& r, const std::string& name) {
  for (const auto& p : r.pods)
    if (p.name == name) return p;
  FAIL("no pod " << name);
  return r.pods.front();
}

size_t count_events(const RunResult& r, const std::string& reason) {
  size_t n = 0;
  for (const auto& e : r.events) n += e.reason == reason;
  return n;
}

// One fixed T4 node of 16000 MiB and a pool of the same nodes, 0..max.
std::string burst(int max, const std::string& pods) {
  return R"(
name: burst
fleet:
- template: {name: fixed, model: NVIDIA-Tesla T4, cards: 1, card_memory_mib: 16000, slots: 10}
  count: 1
node_groups:
- name: t4-pool
  template: {name: t4, model: NVIDIA-Tesla T4, cards: 1, card_memory_mib: 16000, slots: 10}
  min: 0
  max: )" +
         std::to_string(max) +
         R"(
  price_per_hour: 0.36
  scale_up_delay: 3m
  scale_down_unneeded: 10m
  scale_down_utilization: 0.5
templates:
  half: {gpu: 1, gpumem: 8000}
  big: {gpu: 1, gpumem: 16000}
  keep-bare: {gpu: 1, gpumem: 4000, controller: false}
  keep-pdb: {gpu: 1, gpumem: 4000, pdb_protected: true}
  keep: {gpu: 1, gpumem: 4000}
  small: {gpu: 1, gpumem: 2000}
pods:
)" + pods;
}

}  // namespace

TEST_CASE("autoscaler: a burst waits the scale-up delay on exactly the binpacking estimate, then shrinks",
          "[sim][autoscaler]") {
  // Six pods of 8000 MiB: the fixed node takes two; the other four fit no
  // node at t=0. CA's estimate packs them two to a 16000 MiB template: 2
  // nodes, Ready at 180 s, where the four start (each waited 180 s). They
  // leave at 3780 s; both nodes are empty (below 0.5) from then and go 10
  // minutes later, at 4380 s. Billed from the decision: 2 x 4380 s.
  const RunResult r = run(burst(5, "- {at: 0, duration: 3600, template: half, repeat: 6}\n"));
  CHECK(pod(r, "half-0").start == 0);
  CHECK(pod(r, "half-1").start == 0);
  for (const char* name : {"half-2", "half-3", "half-4", "half-5"}) {
    CHECK(pod(r, name).start == 180);
    CHECK(pod(r, name).node.rfind("t4-", 0) == 0);
  }
  const auto& g = r.summary["node_groups"][0];
  CHECK(g["name"] == "t4-pool");
  CHECK(g["scale_ups"] == 1);
  CHECK(g["nodes_added"] == 2);
  CHECK(g["peak_nodes"] == 2);
  CHECK(g["scale_downs"] == 2);
  CHECK(g["nodes_at_end"] == 0);
  CHECK(g["node_hours"].get<double>() == Approx(2 * 4380 / 3600.0));
  CHECK(g["cost"].get<double>() == 0.88);  // 2.4333 h x 0.36 = 0.876
  CHECK(r.summary["cost"].get<double>() == 0.88);
  CHECK(r.summary["simulated_seconds"].get<double>() == 4380);
  CHECK(r.summary["pending_seconds"]["max"].get<double>() == 180);
  CHECK(r.summary["nodes"] == 1);  // back to the fixed node
  CHECK(count_events(r, "TriggeredScaleUp") == 4);
  for (const auto& e : r.events)
    if (e.reason == "TriggeredScaleUp")
      CHECK(e.message == "pod triggered scale-up: [{t4-pool 0->2 (max: 5)}]");
  // The node's two events, marked and removed, for each node.
  CHECK(count_events(r, "ScaleDown") == 4);
  size_t most = 0;
  for (const auto& row : r.timeline) most = std::max(most, row.nodes);
  CHECK(most == 3);
  CHECK(r.timeline.back().nodes == 1);
  // compare.csv's columns and plan's metrics read them.
  CHECK(*headline_value(r.summary, "node_hours") == Approx(2 * 4380 / 3600.0));
  CHECK(*headline_value(r.summary, "cost") == 0.88);
  // The group's size after each change, for report.html's chart.
  // (several changes at one instant keep the last).
  CHECK(g["sizes"]["time"] == nlohmann::ordered_json::array({0.0, 4380.0}));
  CHECK(g["sizes"]["nodes"] == nlohmann::ordered_json::array({2, 0}));
  CHECK(render_report_html(r).find("id=\"chart-nodes\"") != std::string::npos);
}

TEST_CASE("autoscaler: max binds the estimate and the rest wait for room", "[sim][autoscaler]") {
  // max 1: the estimate stops at one node (two pods); the group cannot grow
  // for the other two, which wait until the fixed node's pods leave at
  // 3600 s. The pool node empties at 3780 s and goes at 4380 s.
  const RunResult r = run(burst(1, "- {at: 0, duration: 3600, template: half, repeat: 6}\n"));
  CHECK(pod(r, "half-2").start == 180);
  CHECK(pod(r, "half-3").start == 180);
  CHECK(pod(r, "half-4").start == 3600);
  CHECK(pod(r, "half-5").start == 3600);
  const auto& g = r.summary["node_groups"][0];
  CHECK(g["scale_ups"] == 1);
  CHECK(g["nodes_added"] == 1);
  CHECK(g["peak_nodes"] == 1);
  CHECK(g["scale_downs"] == 1);
  CHECK(g["node_hours"].get<double>() == Approx(4380 / 3600.0));
  CHECK(g["cost"].get<double>() == 0.44);  // 1.2167 h x 0.36 = 0.438
  CHECK(r.summary["simulated_seconds"].get<double>() == 7200);
  for (const auto& e : r.events)
    if (e.reason == "TriggeredScaleUp")
      CHECK(e.message == "pod triggered scale-up: [{t4-pool 0->1 (max: 1)}]");
}

TEST_CASE("autoscaler: a node whose pod cannot be evicted stays until the pod leaves", "[sim][autoscaler]") {
  // `big` fills the fixed node until 300 s; the small pod waits for a pool
  // node (Ready at 180 s, where it starts; 4000 of 16000 MiB is below 0.5).
  // At 780 s the node has been unneeded 10 minutes and the fixed node is
  // empty: a controller's pod moves there and the node goes; a bare pod or
  // one its PDB protects keeps the node until it leaves at 3780 s, and the
  // node goes 10 minutes later.
  auto pods = [](const std::string& small) {
    return "- {at: 0, duration: 300, template: big}\n- {at: 0, duration: 3600, template: " + small + "}\n";
  };
  SECTION("a controller's pod moves") {
    const RunResult r = run(burst(5, pods("keep")));
    const auto& g = r.summary["node_groups"][0];
    CHECK(g["scale_downs"] == 1);
    CHECK(g["pods_evicted"] == 1);
    CHECK(g["node_hours"].get<double>() == Approx(780 / 3600.0));
    const auto& p = pod(r, "keep-1");
    CHECK(p.node == "fixed-0");
    CHECK(p.start == 780);  // made again by its controller, placed at once
    CHECK(p.end == 780 + 3600);
    CHECK(r.summary["placements"] == 2);  // the move is not a second placement
    bool evicted = false;
    for (const auto& e : r.events)
      evicted = evicted || (e.pod == "keep-1" && e.reason == "ScaleDown" &&
                            e.message == "deleting pod for node scale down" && e.time == 780);
    CHECK(evicted);
  }
  SECTION("a bare pod keeps its node") {
    const RunResult r = run(burst(5, pods("keep-bare")));
    const auto& g = r.summary["node_groups"][0];
    CHECK(g["scale_downs"] == 1);
    CHECK(g["pods_evicted"] == 0);
    CHECK(pod(r, "keep-bare-1").node == "t4-0");
    CHECK(pod(r, "keep-bare-1").end == 3780);
    CHECK(g["node_hours"].get<double>() == Approx(4380 / 3600.0));
  }
  SECTION("a PDB keeps its node") {
    const RunResult r = run(burst(5, pods("keep-pdb")));
    const auto& g = r.summary["node_groups"][0];
    CHECK(g["pods_evicted"] == 0);
    CHECK(pod(r, "keep-pdb-1").end == 3780);
    CHECK(g["node_hours"].get<double>() == Approx(4380 / 3600.0));
  }
}

TEST_CASE("autoscaler: a pod drained the instant it landed leaves once", "[sim][autoscaler]") {
  // `keep` waits for t4-0 (Ready at 180 s, 4000 of 16000 MiB: unneeded from
  // then, checked at 780 s); `big` leaves the fixed node at 300 s. At 780 s
  // `small` arrives first and binpack puts it on t4-0 (the fuller node, now
  // 6000 MiB, still below half); the check then moves both pods to the
  // fixed node and removes t4-0. small's first departure (780 + 1000) falls
  // on its new one: it leaves once, at 1780 s.
  const RunResult r = run(burst(5,
                                "- {at: 0, duration: 300, template: big}\n"
                                "- {at: 0, duration: 5000, template: keep}\n"
                                "- {at: 780, duration: 1000, template: small}\n"));
  const auto& small = pod(r, "small-2");
  CHECK(small.node == "fixed-0");
  CHECK(small.start == 780);
  CHECK(small.end == 1780);
  CHECK(small.status == "completed");
  CHECK(pod(r, "keep-1").start == 780);
  CHECK(pod(r, "keep-1").end == 5780);
  CHECK(r.summary["node_groups"][0]["pods_evicted"] == 2);
  CHECK(r.summary["placements"] == 3);
}

TEST_CASE("autoscaler: never below min", "[sim][autoscaler]") {
  // min 1: the pool's one node is Ready from the start, takes two pods and,
  // empty after they leave, stays. No scale-up: the fixed node and it hold all four.
  std::string yaml = burst(3, "- {at: 0, duration: 600, template: half, repeat: 4}\n");
  yaml.replace(yaml.find("min: 0"), 6, "min: 1");
  const RunResult r = run(yaml);
  const auto& g = r.summary["node_groups"][0];
  CHECK(g["scale_ups"] == 0);
  CHECK(g["scale_downs"] == 0);
  CHECK(g["nodes_at_end"] == 1);
  CHECK(pod(r, "half-3").start == 0);
  CHECK(r.summary["simulated_seconds"].get<double>() == 600);
  CHECK(g["node_hours"].get<double>() == Approx(600 / 3600.0));
}

namespace {
// Two groups for four pods of 6000 MiB: `t4` (16000 MiB, two pods a node,
// up to 5 nodes) and `a10` (20000 MiB, three pods a node, at most 1 node).
// Options: t4 2 nodes, 4 pods, GPU memory unused 8000/32000 = 0.25; a10 1
// node, 3 pods, unused 2000/20000 = 0.1.
std::string two_groups(const std::string& expander, double t4_price) {
  return R"(
name: two-groups
node_groups:
- name: t4
  template: {name: t4, model: NVIDIA-Tesla T4, cards: 1, card_memory_mib: 16000}
  max: 5
  price_per_hour: )" +
         std::to_string(t4_price) +
         R"(
- name: a10
  template: {name: a10, model: NVIDIA A10, cards: 1, card_memory_mib: 20000}
  max: 1
  price_per_hour: 1.0
autoscaler: {expander: )" +
         expander + R"(}
templates:
  six: {gpu: 1, gpumem: 6000}
pods:
- {at: 0, duration: 600, template: six, repeat: 4}
)";
}
size_t added(const RunResult& r, size_t group) {
  return r.summary["node_groups"][group]["nodes_added"].get<size_t>();
}
}  // namespace

TEST_CASE("autoscaler: the expanders choose between two groups", "[sim][autoscaler]") {
  SECTION("least-waste takes a10; the fourth pod grows t4 by one node in CA's next loop") {
    const RunResult r = run(two_groups("least-waste", 1.0));
    CHECK(added(r, 1) == 1);
    CHECK(added(r, 0) == 1);
    CHECK(pod(r, "six-3").start == 10 + 180);
  }
  SECTION("most-pods takes t4 (4 pods against 3)") {
    const RunResult r = run(two_groups("most-pods", 1.0));
    CHECK(added(r, 0) == 2);
    CHECK(added(r, 1) == 0);
  }
  SECTION("price takes the cheaper option: t4 2 x 0.2 against a10 1 x 1.0") {
    const RunResult r = run(two_groups("price", 0.2));
    CHECK(added(r, 0) == 2);
    CHECK(added(r, 1) == 0);
  }
  SECTION("price with t4 at 0.6 a node: 1.2 against 1.0, a10") {
    const RunResult r = run(two_groups("price", 0.6));
    CHECK(added(r, 1) == 1);
  }
  SECTION("random is one of them, the same for the same seed") {
    const RunResult a = run(two_groups("random", 1.0), 7), b = run(two_groups("random", 1.0), 7);
    CHECK(added(a, 0) == added(b, 0));
    CHECK(added(a, 1) == added(b, 1));
    CHECK(added(a, 0) + 3 * added(a, 1) >= 2);
  }
}

TEST_CASE("autoscaler: bad node groups name the file, line and field", "[sim][autoscaler]") {
  auto error = [](const std::string& from, const std::string& to) -> core::InputError {
    std::string yaml = burst(5, "- {at: 0, template: half}\n");
    yaml.replace(yaml.find(from), from.size(), to);
    try {
      parse_scenario(yaml, "autoscale.yaml", ".");
    } catch (const core::InputError& e) {
      return e;
    }
    FAIL("no error");
    return core::InputError("", 0, "", "");
  };
  const auto min_above = error("min: 0", "min: 6");
  CHECK(min_above.file() == "autoscale.yaml");
  CHECK(min_above.field() == "node_groups[0].min");
  CHECK(min_above.line() == 9);
  CHECK(min_above.detail() == "6 is above max (5)");
  CHECK(error("price_per_hour: 0.36", "price_per_hour: -1").field() == "node_groups[0].price_per_hour");
  CHECK(error("scale_up_delay: 3m", "scale_up_delay: soon").field() == "node_groups[0].scale_up_delay");
  CHECK(error("scale_down_utilization: 0.5", "scale_down_utilization: 2").field() ==
        "node_groups[0].scale_down_utilization");
  CHECK(error("name: t4,", "name: fixed,").field() == "node_groups[0].template.name");
}

TEST_CASE("diurnal arrivals follow the day's rate", "[sim][diurnal]") {
  // rate(t) = 1 x (1 + 0.8 cos(2 pi (t - 14h) / 1 day)): over 20 days the
  // rate's mean over the hour from 14:00 is 1 + 0.8 sin(x) / x with x = 2 pi / 24,
  // 1.7909, over the hour from 02:00 (half a day off) 1 - 0.7909 = 0.2091.
  std::mt19937_64 rng(42);
  const DiurnalRate rate{1.0, 0.8, 14 * 3600.0};
  size_t at14 = 0, at2 = 0, all = 0;
  for (double t = next_diurnal_arrival(0, rate, rng); t < 20 * 86400.0;
       t = next_diurnal_arrival(t, rate, rng)) {
    const double hour = std::fmod(t, 86400.0) / 3600;
    at14 += hour >= 14 && hour < 15;
    at2 += hour >= 2 && hour < 3;
    ++all;
  }
  CHECK(static_cast<double>(all) == Approx(20 * 86400.0).epsilon(0.01));  // the mean rate is 1
  CHECK(static_cast<double>(at14) == Approx(20 * 3600 * 1.7909).epsilon(0.03));
  CHECK(static_cast<double>(at2) == Approx(20 * 3600 * 0.2091).epsilon(0.06));
}
