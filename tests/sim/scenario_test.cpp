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
  CHECK(r.pods[0].allocation == r.pods[0].allocation);
  const std::string first_card = r.pods[0].allocation.substr(0, r.pods[0].allocation.find(','));
  CHECK(r.pods[1].allocation.rfind(first_card, 0) == 0);
  CHECK(r.pods[2].allocation.rfind(first_card, 0) != 0);
  CHECK(r.summary["final_alloc_cores_pct"].get<double>() == Approx(55));
}

TEST_CASE("bundled scenarios load and run", "[sim][scenarios]") {
  for (const char* s : {"scenarios/inference-fleet.yaml", "scenarios/capacity-planning.yaml"}) {
    auto r = run(s);
    CHECK(r.summary["placements"].get<size_t>() > 0);
    CHECK(r.summary["pods"].get<size_t>() ==
          r.summary["placements"].get<size_t>() + r.summary["failed"].get<size_t>());
  }
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
}
