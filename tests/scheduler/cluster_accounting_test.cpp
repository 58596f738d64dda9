#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

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
  // max(init peak 1 slot/9000/50, app 2 slots/3000/20); each grant also
  // holds the memory ratio Koordinator would fill in, trunc(MiB/16000 x 100):
  // init 37 and 56 (peak 56), app 6 + 12.
  CHECK(u[0] == DeviceUsage{2, 9000, 50, 56});
  CHECK(u[1] == DeviceUsage{1, 500, 0, 3});
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
  CHECK(c.usage(0)[0] == DeviceUsage{1, 4000, 10, 25});
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

TEST_CASE("each node knows its latest change in the log, through trimming and clearing", "[cluster]") {
  Cluster c;
  for (int i = 0; i < 3; ++i) {
    Node n = two_card_node();
    n.name = "n" + std::to_string(i);
    c.add_node(n);
  }
  CHECK(c.changed_at(0) == 0);
  PodAllocation a;
  a.containers = {{{0, 1, 0}}};
  // Far past the log's trimming point (4096 entries): positions stay absolute.
  for (int k = 0; k < 5000; ++k) {
    const size_t id = static_cast<size_t>(k % 2);
    c.charge(id, a, {});
    CHECK(c.changed_at(id) == c.change_count());
    c.release(id, a, {});
  }
  CHECK(c.first_change() > 0);
  const uint64_t at = c.changed_at(1);
  CHECK(c.changed_node(at - 1) == 1);  // the latest entry of node 1 is its own
  CHECK(c.changed_at(2) == 0);         // never changed
  // A reader that saw position p visits exactly the nodes changed since.
  const size_t p = c.change_count();
  c.charge(2, a, {});
  CHECK(c.changed_at(2) > p);
  CHECK_FALSE(c.changed_at(0) > p);
  c.clear_usage();
  for (size_t id = 0; id < c.size(); ++id) CHECK(c.changed_at(id) == 0);
}

TEST_CASE("a reordered fleet keeps its nodes and shapes in the new order", "[cluster]") {
  Cluster c;
  Node small = two_card_node();
  small.name = "small";
  small.devices.pop_back();
  Node big = two_card_node();
  big.name = "big";
  Node big2 = two_card_node();
  big2.name = "big2";
  c.add_node(small);
  c.add_node(big);
  c.add_node(big2);
  const std::vector<size_t> order{2, 0, 1};
  const Cluster r = c.reordered(order);
  REQUIRE(r.size() == 3);
  for (size_t i = 0; i < order.size(); ++i) {
    CHECK(r.node(i).name == c.node(order[i]).name);
    CHECK(r.shape(i) == c.shape(order[i]));
    CHECK(r.find(c.node(order[i]).name) == std::optional<size_t>(i));
  }
  CHECK(r.shape(0) == r.shape(2));  // big2 and big are built alike
  CHECK(r.shape(0) != r.shape(1));
  CHECK(r.epoch() != c.epoch());
  const std::vector<size_t> repeated{0, 0, 1};
  CHECK_THROWS_AS(c.reordered(repeated), std::invalid_argument);
  const std::vector<size_t> short_order{0, 1};
  CHECK_THROWS_AS(c.reordered(short_order), std::invalid_argument);
}
