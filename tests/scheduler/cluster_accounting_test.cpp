#include <catch2/catch.hpp>

#include "gpuslice/core/cluster.hpp"

using namespace gpuslice::core;

namespace {
Node two_card_node() {
  Node n;
  n.name = "n";
  for (int i = 0; i < 2; ++i) {
    Device d;
    d.uuid = "GPU-" + std::to_string(i);
    d.index = i;
    d.slots = 10;
    d.memory_mib = 16000;
    d.cores = 100;
    d.healthy = true;
    n.devices.push_back(d);
  }
  n.capacity = {8000, 16000};
  return n;
}
}  // namespace

TEST_CASE("init containers charge their peak, app containers their sum", "[cluster]") {
  Cluster c;
  c.add_node(two_card_node());
  PodAllocation a;
  a.init_count = 2;
  a.containers = {{{0, 6000, 50}}, {{0, 9000, 20}}, {{0, 1000, 10}}, {{0, 2000, 10}, {1, 500, 0}}, {}};
  c.charge(0, a, {1000, 2000});
  auto u = c.usage(0);
  CHECK(u[0] == DeviceUsage{2, 9000, 50});  // max(init peak 1 slot/9000/50, app 2 slots/3000/20)
  CHECK(u[1] == DeviceUsage{1, 500, 0});
  CHECK(c.host_used(0) == HostResources{1000, 2000});
  c.release(0, a, {1000, 2000});
  CHECK(c.usage(0)[0] == DeviceUsage{});
  CHECK(c.usage(0)[1] == DeviceUsage{});
}

TEST_CASE("releasing what is not held is refused and changes nothing", "[cluster]") {
  Cluster c;
  c.add_node(two_card_node());
  PodAllocation a;
  a.containers = {{{0, 4000, 10}}};
  c.charge(0, a, {});
  PodAllocation more;
  more.containers = {{{0, 8000, 10}}};
  CHECK_THROWS_AS(c.release(0, more, {}), std::logic_error);
  CHECK(c.usage(0)[0] == DeviceUsage{1, 4000, 10});
  PodAllocation bad_card;
  bad_card.containers = {{{7, 1, 0}}};
  CHECK_THROWS_AS(c.charge(0, bad_card, {}), std::logic_error);
}

TEST_CASE("every change is logged and a copy starts a new history", "[cluster]") {
  Cluster c;
  c.add_node(two_card_node());
  const auto before = c.change_count();
  PodAllocation a;
  a.containers = {{{1, 100, 0}}};
  c.charge(0, a, {});
  REQUIRE(c.change_count() == before + 1);
  CHECK(c.changed_node(before) == 0);
  Cluster copy = c;
  CHECK(copy.epoch() != c.epoch());
  CHECK_THROWS_AS(c.add_node(two_card_node()), std::invalid_argument);  // duplicate name
}
