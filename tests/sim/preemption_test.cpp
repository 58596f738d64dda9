// Priorities and preemption in the simulator, against runs worked out by
// hand from kube-scheduler's rules (DefaultPreemption: lower priority only,
// reprieve most important first; PrioritySort's queue) and HAMi's fit.
#include <catch2/catch.hpp>

#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/scenario.hpp"
#include "gpuslice/sim/simulator.hpp"

using namespace gpuslice;
using namespace gpuslice::sim;

namespace {
std::string path(const std::string& rel) { return std::string(GPUSLICE_SOURCE_DIR) + "/" + rel; }

RunResult run(const Scenario& s, Preemption mode) {
  RunOptions o;
  o.policy = s.policy;
  o.gpu_policy = s.gpu_policy;
  o.seed = s.seed;
  o.queue = s.queue;
  o.preemption = mode;
  return simulate(s, o);
}

const PodRecord& pod(const RunResult& r, const std::string& name) {
  for (const auto& p : r.pods)
    if (p.name == name) return p;
  FAIL("no pod " << name);
  return r.pods.front();
}

std::vector<const EventRecord*> preempted(const RunResult& r) {
  std::vector<const EventRecord*> out;
  for (const auto& e : r.events)
    if (e.reason == "Preempted") out.push_back(&e);
  return out;
}

// The bundled example with one template line changed.
Scenario wrong_victim(const std::string& from = "", const std::string& to = "") {
  std::string text = core::codec::read_text_file(path("scenarios/preemption-wrong-victim.yaml"));
  if (!from.empty()) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  return parse_scenario(text, "preemption-wrong-victim.yaml", path("scenarios"));
}
}  // namespace

TEST_CASE("preemption: HAMi's fit evicts the pod whose card holds the preemptor", "[sim][preemption]") {
  // Reprieve in start order: big-batch-0 back (the other card is empty: fits),
  // small-batch-1 back (that card 2000 of 16000 MiB, one slot: fits),
  // small-batch-2 back (that card's slots full, the first card 4000 MiB
  // free): no fit, a victim; small-batch-3 back: still fits. One victim.
  const RunResult r = run(wrong_victim(), Preemption::HamiAware);
  CHECK(r.summary["preemptions"] == 1);
  const auto events = preempted(r);
  REQUIRE(events.size() == 1);
  CHECK(events[0]->pod == "small-batch-2");
  CHECK(events[0]->type == "Normal");
  CHECK(events[0]->message == "Preempted by a pod on node " + pod(r, "big-batch-0").node);
  CHECK(events[0]->related == "default/inference-4");
  CHECK(events[0]->time == 10);
  CHECK(pod(r, "inference-4").start == 10);
  CHECK(pod(r, "small-batch-2").preempted == 1);
  // Made again by its controller, it waits for the serving pod to leave.
  CHECK(pod(r, "small-batch-2").start == 610);
  CHECK(pod(r, "small-batch-2").status == "completed");
  // It had run 8 s on a fifth of a... 2000 of 16000 MiB: its GPU share.
  const double share = static_cast<double>(pod(r, "small-batch-2").gpu_milli) / 1000.0;
  CHECK(r.summary["gpu_hours_lost_to_preemption"].get<double>() == Approx(8 * share / 3600));
  const auto& by_class = r.summary["pending_seconds_by_priority_class"];
  CHECK(by_class["serving"]["max"] == 0);
  CHECK(by_class["batch"]["max"] == 600);  // small-batch-2, queued again at 10 s
}

TEST_CASE("preemption: counting slots evicts a pod whose removal frees no card that holds it",
          "[sim][preemption]") {
  // kube-scheduler's slot count: all four removed, the pod fits; reprieve
  // big-batch-0, small-batch-1, small-batch-2 (three slots: fits) and
  // small-batch-3 (four: no room), so small-batch-3 is the victim. Its slot
  // sits beside big-batch-0's 12000 MiB: HAMi's fit still refuses the pod,
  // small-batch-3 is made again and returns to that slot at once, and the
  // serving pod waits for big-batch-0 to leave at 3600 s.
  const RunResult r = run(wrong_victim(), Preemption::Kube);
  CHECK(r.summary["preemptions"] == 1);
  const auto events = preempted(r);
  REQUIRE(events.size() == 1);
  CHECK(events[0]->pod == "small-batch-3");
  CHECK(pod(r, "small-batch-3").start == 10);
  CHECK(pod(r, "inference-4").start == 3600);
  CHECK(r.summary["pending_seconds_by_priority_class"]["serving"]["max"] == 3590);
}

TEST_CASE("preemption: off, Never and equal priorities preempt nobody", "[sim][preemption]") {
  SECTION("off") {
    const RunResult r = run(wrong_victim(), Preemption::Off);
    CHECK(r.summary["preemptions"] == 0);
    CHECK(pod(r, "inference-4").start == 3600);
  }
  SECTION("preemptionPolicy Never on the class") {
    const RunResult r =
        run(wrong_victim("serving: {value: 1000}", "serving: {value: 1000, preemption_policy: Never}"),
            Preemption::HamiAware);
    CHECK(r.summary["preemptions"] == 0);
    CHECK(pod(r, "inference-4").start == 3600);
  }
  SECTION("the same priority as every running pod") {
    const RunResult r =
        run(wrong_victim("priority_class: serving", "priority_class: batch"), Preemption::HamiAware);
    CHECK(r.summary["preemptions"] == 0);
    CHECK(pod(r, "inference-4").start == 3600);
    CHECK_FALSE(r.summary.contains("pending_seconds_by_priority_class"));  // one class: nothing to tell apart
  }
}

TEST_CASE("preemption: a bare pod preempted ends - the queue is by priority", "[sim][preemption]") {
  SECTION("bare victim") {
    const RunResult r = run(wrong_victim("small-batch: {gpu: 1, gpumem: 2000}",
                                         "small-batch: {gpu: 1, gpumem: 2000, controller: false}"),
                            Preemption::HamiAware);
    CHECK(pod(r, "small-batch-2").status == "preempted");
    CHECK(pod(r, "small-batch-2").end == 10);
    CHECK(pod(r, "small-batch-2").start == 2);
  }
  SECTION("a waiting serving pod goes before a batch pod queued earlier") {
    // Preemption off: small-batch-5 (at 5 s) and inference-4 (at 10 s) both
    // wait; at 3600 s big-batch-0 leaves and the serving pod, first by
    // priority, takes the freed card.
    const RunResult r = run(
        wrong_victim(
            "- {at: 10, duration: 600, template: inference}",
            "- {at: 5, duration: 600, template: big-batch}\n- {at: 10, duration: 600, template: inference}"),
        Preemption::Off);
    CHECK(pod(r, "inference-5").start == 3600);
    CHECK(pod(r, "big-batch-4").start > 3600);
  }
}

TEST_CASE("preemption: priority classes are checked as the API server checks them", "[sim][preemption]") {
  CHECK_THROWS_WITH(
      wrong_victim("priority_class: serving", "priority_class: gold"),
      Catch::Contains("templates.inference.priority_class") && Catch::Contains("no PriorityClass 'gold'"));
  CHECK_THROWS_WITH(wrong_victim("priority_class: serving", "priority_class: serving, priority: 5"),
                    Catch::Contains("give priority or priority_class, not both"));
  CHECK_THROWS_WITH(wrong_victim("serving: {value: 1000}", "serving: {value: 1000, global_default: true}"),
                    Catch::Contains("already the global default"));
  CHECK_THROWS_WITH(wrong_victim("serving: {value: 1000}", "serving: {value: 2000000000}"),
                    Catch::Contains("priority_classes.serving.value"));
  CHECK_THROWS_WITH(
      wrong_victim("serving: {value: 1000}", "serving: {value: 1000, preemption_policy: Sometimes}"),
      Catch::Contains("use Never or PreemptLowerPriority"));
}
