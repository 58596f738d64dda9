#include "gpuslice/core/topology.hpp"

#include <catch2/catch.hpp>

using namespace gpuslice::core;

TEST_CASE("link weights as HAMi's device plugin scores them", "[topology]") {
  CHECK(link_weight(LinkKind::CrossCPU) == 10);
  CHECK(link_weight(LinkKind::SameCPU) == 20);
  CHECK(link_weight(LinkKind::HostBridge) == 30);
  CHECK(link_weight(LinkKind::MultiSwitch) == 40);
  CHECK(link_weight(LinkKind::SingleSwitch) == 50);
  CHECK(link_weight(LinkKind::SameBoard) == 60);
  CHECK(nvlink_weight(4) == 400);
}

TEST_CASE("best subset and worst single card over the card graph", "[topology]") {
  Node n;
  for (int i = 0; i < 4; ++i) n.devices.push_back(Device{});
  n.topology = {{0, 100, 10, 10}, {100, 0, 10, 10}, {10, 10, 0, 300}, {10, 10, 300, 0}};
  const std::vector<int> all{0, 1, 2, 3};
  CHECK(choose_by_topology(n, all, 2) == std::vector<int>{2, 3});
  CHECK(choose_by_topology(n, all, 3) == std::vector<int>{0, 2, 3});  // 10+10+300 ties 1,2,3; first wins
  CHECK(choose_by_topology(n, all, 4) == all);
  // Totals: card 0: 120, 1: 120, 2: 320, 3: 320 -> the first strict minimum.
  CHECK(choose_by_topology(n, all, 1) == std::vector<int>{0});
  CHECK(choose_by_topology(n, std::vector<int>{3, 2, 1}, 1) == std::vector<int>{1});
  CHECK(choose_by_topology(n, std::vector<int>{1}, 2).empty());
}
