#include "gpuslice/sim/engine.hpp"

#include <catch2/catch.hpp>
#include <queue>
#include <random>
#include <vector>

using namespace gpuslice::sim;

TEST_CASE("events run by time, departures before arrivals at one instant, then FIFO", "[sim][engine]") {
  Engine e;
  e.schedule(5, EventKind::Arrival, 1);
  e.schedule(2, EventKind::Arrival, 2);
  e.schedule(5, EventKind::Departure, 3);
  e.schedule(5, EventKind::Arrival, 4);
  e.schedule(2, EventKind::Arrival, 5);
  std::vector<uint32_t> order;
  while (!e.empty()) order.push_back(e.next().pod);
  CHECK(order == std::vector<uint32_t>{2, 5, 3, 1, 4});
  CHECK(e.now() == 5);
  CHECK_THROWS_AS(e.schedule(1, EventKind::Arrival, 9), std::logic_error);
}

TEST_CASE("events scheduled in order, out of order and while running keep the one order", "[sim][engine]") {
  // Against a plain priority queue under the documented order: in-order
  // runs (a trace's arrivals), late departures and events scheduled
  // between next() calls, past the list's compaction point.
  std::mt19937_64 rng(11);
  Engine engine;
  std::priority_queue<Event, std::vector<Event>, EventLater> plain;
  uint64_t seq = 0;
  auto schedule = [&](double time, EventKind kind, uint32_t pod) {
    engine.schedule(time, kind, pod);
    plain.push(Event{time, kind, seq++, pod});
  };
  for (uint32_t i = 0; i < 6000; ++i) schedule(static_cast<double>(i / 3), EventKind::Arrival, i);
  uint32_t pod = 6000;
  while (!plain.empty()) {
    REQUIRE(engine.pending() == plain.size());
    const Event want = plain.top();
    plain.pop();
    const Event got = engine.next();
    REQUIRE(got.pod == want.pod);
    REQUIRE(got.time == want.time);
    REQUIRE(got.kind == want.kind);
    if (pod < 20000 && rng() % 2 == 0) {
      const double later = engine.now() + static_cast<double>(rng() % 50);
      schedule(later, rng() % 2 ? EventKind::Departure : EventKind::Arrival, pod++);
    }
  }
  CHECK(engine.empty());
}
