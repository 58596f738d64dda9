#include "gpuslice/sim/scenario.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/simulator.hpp"

using namespace gpuslice;
using namespace gpuslice::sim;

namespace {
std::string path(const std::string& rel) { return std::string(GPUSLICE_SOURCE_DIR) + "/" + rel; }
RunResult run(const std::string& rel) {
  Scenario s = load_scenario(path(rel));
  return simulate(s, scenario_options(s));
}
}  // namespace

TEST_CASE("golden: the T4 lab places 10 slices and refuses the 11th", "[sim][golden]") {
  auto r = run("scenarios/lab-t4-slices.yaml");
  CHECK(r.summary["placements"] == 10);
  CHECK(r.summary["failed"] == 1);
  CHECK(r.summary["refusals_by_reason"] == nlohmann::ordered_json{{"CardTimeSlicingExhausted", 1}});
  CHECK(r.pods[2].allocation == "GPU-hami-workshop-0-0,NVIDIA,4000,0:;");
  REQUIRE_FALSE(r.events.empty());
  CHECK(r.events[2].message ==
        "find fit node(hami-workshop-0), 0 nodes not fit, 1 nodes fit(hami-workshop-0:7.21)");
}

TEST_CASE("golden: the A6000 lab refuses 45000 MiB beside two 8000 MiB slices", "[sim][golden]") {
  auto r = run("scenarios/lab-a6000-oversubscribe.yaml");
  CHECK(r.summary["placements"] == 2);
  CHECK(r.summary["refusals_by_reason"] == nlohmann::ordered_json{{"CardInsufficientMemory", 1}});
  CHECK(r.pods[2].reason == "CardInsufficientMemory");
}

TEST_CASE("golden: the A40 lab puts 30% and 60% on one card, 20% on the other", "[sim][golden]") {
  auto r = run("scenarios/lab-a40-cores.yaml");
  CHECK(r.summary["placements"] == 3);
  REQUIRE_FALSE(r.pods[0].allocation.empty());
  const std::string first_card = r.pods[0].allocation.substr(0, r.pods[0].allocation.find(','));
  CHECK(r.pods[1].allocation.rfind(first_card, 0) == 0);
  CHECK(r.pods[2].allocation.rfind(first_card, 0) != 0);
  CHECK(r.summary["final_alloc_cores_pct"].get<double>() == Approx(55));
}

// Golden summaries: any change to placement, the generator or the metrics
// shows up here. Update the numbers only for a change you meant and explain.
TEST_CASE("golden: the inference fleet places every pod, peaking at 85.99% of its GPUs", "[sim][golden]") {
  auto r = run("scenarios/inference-fleet.yaml");
  const auto& s = r.summary;
  CHECK(s["pods"] == 3000);
  CHECK(s["placements"] == 3000);
  CHECK(s["failed"] == 0);
  CHECK(s["peak_alloc_gpu_pct"].get<double>() == Approx(85.9890625));
  // Pods come and go: the end is empty and arrived demand grows without
  // bound, so the summary reads allocation over time instead of the final
  // state (0 %) and the arrived-demand curve (2435 % arrived).
  CHECK(s["run_kind"] == "departures");
  CHECK_FALSE(s.contains("final_alloc_gpu_pct"));
  CHECK_FALSE(s.contains("arrived_gpu_pct"));
  CHECK_FALSE(s.contains("alloc_ratio_at_130_pct"));
  CHECK(s["alloc_gpu_pct_time_weighted"].get<double>() == Approx(54.7501957034));
  CHECK(s["simulated_time"] == "45.6 h");
  CHECK(s["typical_pod_shapes"] == 4);
  CHECK(s["pending_seconds"]["p99"].get<double>() == 0);
  CHECK(s["pending_seconds"]["max"].get<double>() == Approx(2.5224129441));
  REQUIRE_FALSE(r.card_use.empty());
  CHECK(r.card_use.back().used.slots >= 0);
}

TEST_CASE("golden: the capacity-planning fleet is saturated: 1% of pods wait over 347 s", "[sim][golden]") {
  auto r = run("scenarios/capacity-planning.yaml");
  const auto& s = r.summary;
  CHECK(s["pods"] == 5000);
  CHECK(s["placements"] == 5000);
  CHECK(s["peak_alloc_gpu_pct"].get<double>() == Approx(97.8854166667));
  CHECK(s["pending_seconds"]["p95"].get<double>() == 0);
  CHECK(s["pending_seconds"]["p99"].get<double>() == Approx(347.0294103057));
  CHECK(s["pending_seconds"]["max"].get<double>() == Approx(3356.9039859190));
  CHECK(s["typical_pod_shapes"] == 2);
}

TEST_CASE("golden: the openb default replay with HAMi binpack, seed 42", "[sim][golden][openb]") {
  auto r = run("scenarios/openb-default.yaml");
  const auto& s = r.summary;
  // The study's workload: the 8,152 trace pods once, then draws up to 130 %;
  // typical pods (CPU-only shapes included) counted over the trace.
  CHECK(s["pods"] == 10770);
  CHECK(s["placements"] == 8261);
  CHECK(s["alloc_ratio_at_130_pct"].get<double>() == Approx(94.19));
  CHECK(s["final_frag_gpu_pct"].get<double>() == Approx(5.770356433612363));
  CHECK(s["typical_pod_shapes"] == 35);
  CHECK(s["refusals_by_reason"] ==
        nlohmann::ordered_json{{"CardInsufficientMemory", 700}, {"Insufficient cpu", 1809}});
}

TEST_CASE("bad scenario files name file, line and field", "[sim][errors]") {
  auto expect = [](const std::string& text, int line, const std::string& field) {
    try {
      parse_scenario(text, "bad.yaml", ".");
      FAIL("accepted: " << text);
    } catch (const core::InputError& e) {
      CHECK(e.file() == "bad.yaml");
      CHECK(e.line() == line);
      CHECK(e.field() == field);
    }
  };
  const std::string fleet = "fleet:\n- template: {name: n, model: T4, card_memory_mib: 16000}\n";
  expect(fleet + "templates:\n  a: {gpu: 1}\npods:\n- {at: 0, template: b}\n", 6, "pods[0].template");
  expect(fleet + "templates:\n  a: {gpu: x}\npods:\n- {at: 0, template: a}\n", 4, "templates.a.gpu");
  expect(fleet + "templates:\n  a: {gpu: 1, gpumem: -5}\npods:\n- {at: 0, template: a}\n", 4,
         "templates.a.gpumem");
  expect("fleet:\n- template: {name: n, model: T4, card_memory_mib: 0}\npods: []\n", 2,
         "fleet[0].template.card_memory_mib");
  expect(fleet + "policy: nope\npods: []\n", 3, "policy");
  expect(fleet + "colour: blue\n", 3, "colour");
  expect(fleet + "templates:\n  a: {gpu: 1}\ngenerator: {pods: 10, rate_per_s: -1, mix: [{template: a}]}\n",
         5, "generator.rate_per_s");
  expect(fleet + "templates:\n  a: {gpu: 1}\n", 1, "pods");
  // issue 10: numbers and names that used to pass in silence
  const std::string one = "templates:\n  a: {gpu: 1}\npods:\n- {at: 0, template: a}\n";
  expect(fleet + "seed: -1\n" + one, 3, "seed");
  expect(fleet + "gpu_policy: bogus\n" + one, 3, "gpu_policy");
  expect(fleet + "gpu_policy: 'spread,foo'\n" + one, 3, "gpu_policy");
  expect(fleet + "templates:\n  a: {gpu: 1}\npods:\n- {at: .inf, template: a}\n", 6, "pods[0].at");
  expect(fleet +
             "templates:\n  a: {gpu: 1}\ngenerator: {pods: 10, duration: lognormal, sigma: -1, mix: "
             "[{template: a}]}\n",
         5, "generator.sigma");
  expect(fleet + "templates:\n  a: {gpu: 1}\ngenerator: {pods: 10, mix: [{template: a, weight: 0}]}\n", 5,
         "generator.mix");
  expect("fleet:\n- template: {name: n, model: T4, card_memory_mib: 16000}\n  count: 100000000000\n" + one, 3,
         "fleet[0].count");
  expect("fleet:\n- template: {name: 'a,b', model: T4, card_memory_mib: 16000}\n" + one, 2,
         "fleet[0].template.name");
  expect(fleet + "name: x\nname: y\n" + one, 4, "name");  // duplicate key
  // A list or mapping as a key threw yaml-cpp's exception past every handler (fuzz_scenario).
  expect(fleet + "? [a, b]\n: 1\n" + one, 3, "");
  expect(fleet + "templates:\n  ? {x: 1}\n  : {gpu: 1}\n" + "pods: []\n", 4, "templates");
  expect(fleet + "templates:\n  a: {gpu: 1, resources: {? [x]: 1}}\npods: []\n", 4, "templates.a.resources");
  try {
    parse_scenario("{}", "empty.yaml", ".");
    FAIL("accepted {}");
  } catch (const core::InputError& e) {
    CHECK(e.field() == "fleet");  // was yaml-cpp's "invalid node; first invalid key"
  }
}

// A what-if on a HAMi fleet (memory-and-cores requests, departures): FGD
// over HAMi's two dimensions places every pod on arrival, where HAMi binpack
// makes one wait 2.5 s and HAMi spread makes 5 % wait over 2 minutes. (On
// capacity-planning.yaml, a saturated fleet, binpack waits less than FGD:
// docs/reproduction.md.)
TEST_CASE("what-if: 2-D FGD beats HAMi binpack and spread on the inference fleet", "[sim][policy][fgd]") {
  Scenario s = load_scenario(path("scenarios/inference-fleet.yaml"));
  auto with = [&](const std::string& policy) {
    RunOptions o;
    o.policy = policy;
    o.seed = s.seed;
    o.queue = s.queue;
    o.card_use = false;
    return simulate(s, o).summary;
  };
  const auto fgd = with("fgd"), binpack = with("hami-binpack"), spread = with("hami-spread");
  CHECK(fgd["placements"] == 3000);
  CHECK(fgd["pending_seconds"]["max"].get<double>() == 0);
  CHECK(binpack["pending_seconds"]["max"].get<double>() == Approx(2.5).margin(0.05));
  CHECK(spread["pending_seconds"]["p95"].get<double>() == Approx(136.9).margin(0.05));
  // The same work (memory and cores held over time) on no more card capacity:
  // FGD pairs memory-heavy with core-heavy slices, so the cards' binding
  // dimension fills less.
  CHECK(fgd["alloc_memory_pct_time_weighted"].get<double>() ==
        Approx(binpack["alloc_memory_pct_time_weighted"].get<double>()));
  CHECK(fgd["alloc_cores_pct_time_weighted"].get<double>() ==
        Approx(binpack["alloc_cores_pct_time_weighted"].get<double>()));
  CHECK(fgd["alloc_gpu_pct_time_weighted"].get<double>() <=
        binpack["alloc_gpu_pct_time_weighted"].get<double>());
}

// A scenario fleet in MIG mode, worked by hand: the H100 SXM5 80GB's
// registration is generated as HAMi v2.10's device plugin writes it (the
// chart's allowlist names 1g.10gb 9984 MiB 13 %, 2g.20gb 20096 MiB 25 %,
// 3g.40gb 40448 MiB 46 %, 7g.80gb; count 7), and pods are placed as
// tests/core/data/mig.yaml's cases do: the smallest profile holding the
// memory, 1g./3g. from the highest free placement, others from the lowest.
TEST_CASE(
    "golden: the H100 MIG scenario places 3g high, 2g low, two 1g in one pod, and a 1g waits for slices",
    "[sim][golden][mig]") {
  auto r = run("scenarios/h100-mig.yaml");
  const std::string card = "GPU-h100-mig-0-0";
  REQUIRE(r.pods.size() == 4);
  // 40000 MiB: 3g.40gb (40448 >= 40000), placed high: slices 4-7.
  CHECK(r.pods[0].allocation == card + ",NVIDIA,40448,46:;");
  CHECK(
      r.pods[0].mig_allocations ==
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-h100-mig-0-0","profile":"3g.40gb","placement":{"start":4,"size":4}}])");
  // 15000 MiB: 1g.10gb is too small, 2g.20gb placed low: slices 0-1.
  CHECK(r.pods[1].allocation == card + ",NVIDIA,20096,25:;");
  CHECK(
      r.pods[1].mig_allocations ==
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-h100-mig-0-0","profile":"2g.20gb","placement":{"start":0,"size":2}}])");
  // gpu: 2 on a node of one MIG card: two 1g.10gb on it (HAMi PR #2724),
  // the highest free 1-slice placements: 3, then 2.
  CHECK(r.pods[2].allocation == card + ",NVIDIA,9984,13:" + card + ",NVIDIA,9984,13:;");
  CHECK(
      r.pods[2].mig_allocations ==
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-h100-mig-0-0","profile":"1g.10gb","placement":{"start":3,"size":1}},)"
      R"({"containerIndex":0,"deviceIndex":1,"gpuUUID":"GPU-h100-mig-0-0","profile":"1g.10gb","placement":{"start":2,"size":1}}])");
  // 1000 MiB at t=30: memory (81559 - 80512 = 1047 MiB free) and cores
  // (97 of 100) pass, but no 1g placement is free: CardMigTopologyInfeasible.
  // When the 3g leaves at t=100, it takes the highest free slice, 6.
  CHECK(r.pods[3].reason == "CardMigTopologyInfeasible");
  CHECK(r.pods[3].start == Approx(100));
  CHECK(r.pods[3].allocation == card + ",NVIDIA,9984,13:;");
  CHECK(
      r.pods[3].mig_allocations ==
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-h100-mig-0-0","profile":"1g.10gb","placement":{"start":6,"size":1}}])");
  // Placed in the end: no refusal counted, but HAMi's event at t=30 names the reason.
  CHECK(r.summary["refusals_by_reason"] == nlohmann::ordered_json::object());
  const auto failed = std::find_if(r.events.begin(), r.events.end(),
                                   [](const EventRecord& e) { return e.reason == "FilteringFailed"; });
  REQUIRE(failed != r.events.end());
  CHECK(failed->time == Approx(30));
  CHECK(failed->message == "1 nodes CardMigTopologyInfeasible(h100-mig-0)");
}

TEST_CASE("scenario fleets: a MIG template's registration and its bad input", "[sim][scenario][mig]") {
  const std::string head = "pods: [{at: 0, template: t}]\ntemplates: {t: {gpu: 1, gpumem: 1000}}\n";
  SECTION("the chart allowlist names an H100-SXM5-80GB's profiles; count 7, devcore 100") {
    Scenario s = parse_scenario(head +
                                    "fleet:\n- template: {name: h, model: H100-SXM5-80GB, cards: 2, "
                                    "card_memory_mib: 81559, mode: mig}\n",
                                "mig.yaml", ".");
    REQUIRE(s.fleet.size() == 1);
    const auto& d = s.fleet.node(0).devices.at(1);
    CHECK(d.mode == "mig");
    CHECK(d.slots == 7);
    CHECK(d.cores == 100);
    CHECK(d.memory_mib == 81559);
    CHECK(d.type == "NVIDIA-H100-SXM5-80GB");
    REQUIRE(d.mig_profiles.size() == 4);
    CHECK(d.mig_profiles[0] ==
          core::MigProfile{"1g.10gb", 9984, 13, 1, {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}});
    CHECK(d.mig_profiles[2] == core::MigProfile{"3g.40gb", 40448, 46, 3, {{0, 4}, {4, 4}}});
    CHECK(d.mig_profiles[3] == core::MigProfile{"7g.80gb", 81152, 100, 7, {{0, 8}}});
  }
  SECTION("explicit NVML facts; the allowlist picks the names (here the chart's A30 row)") {
    Scenario s = parse_scenario(head + R"(fleet:
- template:
    name: a30
    model: A30
    card_memory_mib: 24576
    mode: mig
    mig_instance_profiles:
    - {slices: 1, memory_mib: 5952, multiprocessors: 14, instances: 4, placements: [{start: 0, size: 1}, {start: 1, size: 1}, {start: 2, size: 1}, {start: 3, size: 1}]}
    - {slices: 2, memory_mib: 11968, multiprocessors: 28, instances: 2, placements: [{start: 0, size: 2}, {start: 2, size: 2}]}
    - {slices: 4, memory_mib: 24192, multiprocessors: 56, instances: 1, placements: [{start: 0, size: 4}]}
)",
                                "mig.yaml", ".");
    const auto& d = s.fleet.node(0).devices.at(0);
    CHECK(d.slots == 4);
    REQUIRE(d.mig_profiles.size() == 3);
    // core = ceil(multiprocessors x 100 / 56): 25, 50, 100.
    CHECK(d.mig_profiles[0] == core::MigProfile{"1g.6gb", 5952, 25, 1, {{0, 1}, {1, 1}, {2, 1}, {3, 1}}});
    CHECK(d.mig_profiles[1] == core::MigProfile{"2g.12gb", 11968, 50, 2, {{0, 2}, {2, 2}}});
    CHECK(d.mig_profiles[2] == core::MigProfile{"4g.24gb", 24192, 100, 4, {{0, 4}}});
  }
  auto fails = [&](const std::string& fleet, const std::string& field, const std::string& says) {
    try {
      parse_scenario(head + fleet, "mig.yaml", ".");
      FAIL("no error");
    } catch (const core::InputError& e) {
      CHECK(e.field() == field);
      CHECK_THAT(e.detail(), Catch::Matchers::Contains(says));
    }
  };
  SECTION("bad input names the field") {
    fails("fleet:\n- template: {name: h, model: Tesla T4, card_memory_mib: 15360, mode: mig}\n",
          "fleet[0].template.model", "knows the MIG instance profiles of no card named 'Tesla T4'");
    // NVML's own name for the SXM5 card is in no chart allowlist row.
    fails("fleet:\n- template: {name: h, model: NVIDIA H100 80GB HBM3, card_memory_mib: 81559, mode: mig}\n",
          "fleet[0].template.mode", "would register no card of this node");
    fails(
        "fleet:\n- template: {name: h, model: H100-SXM5-80GB, card_memory_mib: 81559, mode: mig, slots: 7}\n",
        "fleet[0].template.slots", "not read for a MIG-mode card");
    fails("fleet:\n- template: {name: h, model: H100-SXM5-80GB, card_memory_mib: 40000, mode: mig}\n",
          "fleet[0].template.card_memory_mib", "below NVML's 3-slice instance of 40448 MiB");
    fails("fleet:\n- template: {name: h, model: H100-SXM5-80GB, card_memory_mib: 81559, mode: mps}\n",
          "fleet[0].template.mode", "use hami-core or mig");
    fails(
        "fleet:\n- template: {name: h, model: A30, card_memory_mib: 24576, mode: mig, mig_instance_profiles: "
        "[{slices: 2, memory_mib: 11968, multiprocessors: 28, instances: 2, placements: [{start: 0, size: "
        "2}, "
        "{start: 1, size: 2}]}]}\n",
        "fleet[0].template.mig_instance_profiles[0].placements[1]", "overlaps placements[0]");
    fails(
        "fleet:\n- template: {name: h, model: A30, card_memory_mib: 24576, mode: mig, mig_instance_profiles: "
        "[{slices: 2, memory_mib: 11968, multiprocessors: 28, instances: 2, placements: [{start: 7, size: "
        "2}]}]}\n",
        "fleet[0].template.mig_instance_profiles[0].placements[0]", "not within the card's 8 memory slices");
    fails("fleet:\n- template: {name: h, model: T4, card_memory_mib: 15360, mig_instance_profiles: []}\n",
          "fleet[0].template.mig_instance_profiles", "read only with mode: mig");
  }
}
