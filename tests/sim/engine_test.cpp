#include "gpuslice/sim/engine.hpp"

#include <catch2/catch.hpp>

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
