#include "gpuslice/sim/simulator.hpp"

#include <catch2/catch.hpp>

#include "gpuslice/sim/fleet.hpp"
#include "gpuslice/sim/generator.hpp"

using namespace gpuslice;
using namespace gpuslice::sim;

namespace {
core::Cluster one_card(int64_t mib = 16000, int32_t slots = 10) {
  return build_fleet({{NodeTemplate{"n", "Tesla T4", 1, mib, slots, 100, 0, 0}, 1, {}}});
}
PodSpec pod(const std::string& name, double at, double duration, int64_t mib, int32_t cores = 0) {
  PodSpec p;
  p.request.name = name;
  core::ContainerRequest c;
  c.count = 1;
  c.memory_mib = mib;
  c.cores = cores;
  p.request.containers.push_back(c);
  p.arrival = at;
  p.duration = duration;
  p.gpu_milli = 10 * cores;
  return p;
}
const PodRecord& record(const RunResult& r, const std::string& name) {
  for (const auto& p : r.pods)
    if (p.name == name) return p;
  FAIL("no pod " << name);
  return r.pods.front();
}
}  // namespace

TEST_CASE("a departure frees capacity and the waiting pod is placed then", "[sim]") {
  Workload w{pod("a", 0, 100, 12000), pod("b", 10, 50, 8000)};
  auto r = simulate(one_card(), w, {});
  const auto& b = record(r, "b");
  CHECK(record(r, "a").end == 100);
  CHECK(b.start == 100);  // waited for a to leave
  CHECK(b.end == 150);
  CHECK(b.status == "completed");
  CHECK(r.summary["placements"] == 2);
  CHECK(r.summary["failed"] == 0);
  CHECK(r.summary["pending_seconds"]["max"].get<double>() == Approx(90));
}

TEST_CASE("FIFO blocks at the head of the line - skip-ahead lets small pods pass", "[sim]") {
  Workload w{pod("big-running", 0, 100, 10000), pod("big-waiting", 1, 10, 10000), pod("small", 2, 10, 1000)};
  RunOptions fifo;
  auto a = simulate(one_card(), w, fifo);
  CHECK(record(a, "small").start == 100);  // behind big-waiting
  RunOptions skip;
  skip.queue = QueueDiscipline::SkipAhead;
  auto b = simulate(one_card(), w, skip);
  CHECK(record(b, "small").start == 2);
  CHECK(record(b, "big-waiting").start == 100);
}

TEST_CASE("without departures a pod that does not fit is refused with HAMi's reason", "[sim]") {
  Workload w{pod("a", 0, kForever, 12000), pod("b", 1, kForever, 8000)};
  auto r = simulate(one_card(), w, {});
  CHECK(record(r, "b").status == "refused");
  CHECK(record(r, "b").reason == "CardInsufficientMemory");
  CHECK(r.summary["refusals_by_reason"]["CardInsufficientMemory"] == 1);
  bool failed_event = false;
  for (const auto& e : r.events)
    if (e.pod == "b" && e.message == "1 nodes CardInsufficientMemory(n-0)") failed_event = true;
  CHECK(failed_event);
}

TEST_CASE("runs are deterministic for a seed and differ across seeds", "[sim]") {
  GeneratorSpec g;
  g.pods = 400;
  g.rate_per_s = 0.5;
  g.mean_s = 300;
  core::PodRequest small;
  core::ContainerRequest c;
  c.count = 1;
  c.memory_mib = 3000;
  c.cores = 20;
  small.containers.push_back(c);
  g.mix = {{"small", 3, small, {}, true}};
  core::PodRequest whole = small;
  whole.containers[0].memory_mib = 0;
  whole.containers[0].memory_percent = 100;
  whole.containers[0].cores = 100;
  g.mix.push_back({"whole", 1, whole, {}, true});
  auto fleet = build_fleet({{NodeTemplate{"n", "Tesla T4", 2, 16000, 10, 100, 0, 0}, 4, {}}});
  RunOptions o;
  auto run = [&](uint64_t seed) {
    o.seed = seed;
    return simulate(fleet, generate(g, seed, 16000), o);
  };
  auto a = run(7), b = run(7), c2 = run(8);
  REQUIRE(a.pods.size() == b.pods.size());
  for (size_t i = 0; i < a.pods.size(); ++i) {
    CHECK(a.pods[i].start == b.pods[i].start);
    CHECK(a.pods[i].node == b.pods[i].node);
    CHECK(a.pods[i].allocation == b.pods[i].allocation);
  }
  CHECK(a.summary["pending_seconds"] == b.summary["pending_seconds"]);
  CHECK(a.summary["pending_seconds"] != c2.summary["pending_seconds"]);
}

TEST_CASE("binpack fills one card before the next - spread takes the emptiest node", "[sim][policy]") {
  auto fleet = build_fleet({{NodeTemplate{"n", "Tesla T4", 1, 16000, 10, 100, 0, 0}, 2, {}}});
  Workload w{pod("a", 0, kForever, 1000), pod("b", 1, kForever, 1000)};
  RunOptions binpack;
  auto r1 = simulate(fleet, w, binpack);
  CHECK(record(r1, "a").node == "n-0");
  CHECK(record(r1, "b").node == "n-0");
  RunOptions spread;
  spread.policy = "hami-spread";
  auto r2 = simulate(fleet, w, spread);
  CHECK(record(r2, "a").node == "n-0");
  CHECK(record(r2, "b").node == "n-1");
}

TEST_CASE("the allocation curve by arrived demand has 131 points", "[sim][metrics]") {
  Workload w;
  for (int i = 0; i < 14; ++i) w.push_back(pod("p" + std::to_string(i), i, kForever, 1000, 10));
  auto r = simulate(one_card(16000, 20), w, {});
  const auto& curve = r.summary["alloc_ratio_by_arrived_pct"];
  REQUIRE(curve.size() == 131);
  // Read as the study's analysis reads it: the mean over records (one
  // before the first pod, one after each) whose arrived share rounds to x,
  // else to x - 1 or x + 1, else nothing.
  CHECK(curve[0].get<double>() == Approx(0));  // the record before any pod
  CHECK(curve[10].get<double>() == Approx(10));
  CHECK(curve[11].get<double>() == Approx(10));  // no record at 11: those at 10 (and 12: none)
  CHECK(curve[5].is_null());                     // none at 4, 5 or 6
  CHECK(curve[100].get<double>() == Approx(100));
  CHECK(curve[130].get<double>() == Approx(100));  // pods past 100% are refused
  CHECK(r.summary["failed"] == 4);
  CHECK(r.summary["refusals_by_reason"]["CardInsufficientCore"] == 4);
}

TEST_CASE("FIFO refuses a pod no card could ever hold instead of queueing it", "[sim][input]") {
  // 45000 MiB on a 16000 MiB card: before, it waited forever and blocked the five small pods.
  Workload w{pod("whole", 0, 100, 16000), pod("huge", 1, 10, 45000)};
  for (int i = 0; i < 5; ++i) w.push_back(pod("small-" + std::to_string(i), 2, 10, 1000));
  auto r = simulate(one_card(), w, {});
  const auto& huge = record(r, "huge");
  CHECK(huge.status == "refused");
  CHECK(huge.reason == "CardInsufficientMemory");
  for (int i = 0; i < 5; ++i) {
    const auto& s = record(r, "small-" + std::to_string(i));
    CHECK(s.status == "completed");
    CHECK(s.start == 100);
  }
  CHECK(r.summary["pending_at_end"] == 0);
  CHECK(r.summary["refused"] == 1);
  // The refusal says it in numbers.
  bool said = false;
  for (const auto& e : r.events)
    if (e.pod == "huge" && e.reason == "NeverFits")
      said = e.message.find("needs 45000 MiB") != std::string::npos &&
             e.message.find("has 16000 MiB and 100% cores free") != std::string::npos;
  CHECK(said);
}

TEST_CASE("pods still waiting at the end count in the pending figures and have a reason", "[sim][input]") {
  // "held" never leaves; "blocked" waits for a card that never frees; "behind" waits behind it (FIFO).
  Workload w{pod("held", 0, kForever, 16000), pod("blocked", 1, 10, 16000), pod("behind", 3, 10, 1000)};
  auto r = simulate(one_card(), w, {});
  CHECK(record(r, "blocked").status == "pending");
  CHECK_FALSE(record(r, "blocked").reason.empty());
  CHECK(record(r, "behind").status == "pending");
  CHECK(record(r, "behind").reason == "WaitingInQueue");
  CHECK(r.summary["pending_at_end"] == 2);
  // The run ends at t=3: "blocked" has waited 2 s so far (before, only "held"'s 0 s counted).
  CHECK(r.summary["pending_seconds"]["max"].get<double>() == Approx(2));
  for (const auto& p : r.pods)
    if (p.status != "running" && p.status != "completed") CHECK_FALSE(p.reason.empty());
}

TEST_CASE("GPU allocation is measured on the cards a pod holds, never past their capacity", "[sim]") {
  // One 16000 MiB card. The pods' own gpu_milli (an estimate made before
  // placement) says 100 + 100 + 900 = 1100: more than the card. On the card
  // they hold 12000 + 2000 MiB (87.5 %) and 10 + 10 + 0 % cores: the card's
  // binding dimension, memory, is 87.5 % used.
  Workload w{pod("a", 0, 100, 12000, 10), pod("b", 1, 100, 2000, 10), pod("c", 2, 100, 0, 0)};
  w[2].gpu_milli = 900;
  const auto r = simulate(one_card(), w, {});
  CHECK(r.summary["peak_alloc_gpu_pct"].get<double>() == Approx(87.5));
  for (const auto& row : r.timeline) CHECK(row.alloc_gpu_pct <= 100.0);
}

TEST_CASE("an openb trace's allocation adds up the trace's own milli-GPU figures, as the study does",
          "[sim]") {
  // 333 milli of a card: HAMi's grant is floor(333/10) = 33 % of cores and
  // memory, but the study's ratio counts 333.
  Workload w{pod("a", 0, kForever, 0, 33)};
  w[0].request.containers[0].memory_percent = 33;
  w[0].gpu_milli = 333;
  w[0].milli_from_trace = true;
  const auto r = simulate(one_card(), w, {});
  CHECK(r.timeline.back().alloc_gpu_pct == Approx(33.3));
}
