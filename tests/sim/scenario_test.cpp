#include "gpuslice/sim/scenario.hpp"

#include <catch2/catch.hpp>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/simulator.hpp"

using namespace gpuslice;
using namespace gpuslice::sim;

namespace {
std::string path(const std::string& rel) { return std::string(GPUSLICE_SOURCE_DIR) + "/" + rel; }
RunResult run(const std::string& rel) {
  Scenario s = load_scenario(path(rel));
  RunOptions o;
  o.policy = s.policy;
  o.gpu_policy = s.gpu_policy;
  o.seed = s.seed;
  o.queue = s.queue;
  return simulate(s, o);
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
