// pod_fits answers what fit_pod(...).fits answers, without building the
// reasons or the cards: preemption asks it for every set of victims. Hand
// cases first (one where counting cards alone would be wrong), then a
// differential check against the full fit on randomised nodes and pods.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "gpuslice/core/fit.hpp"

using namespace gpuslice::core;

namespace {

Node two_card_node() {
  Node n;
  n.name = "n";
  for (int i = 0; i < 2; ++i)
    n.devices.push_back(healthy_card("n-" + std::to_string(i), i, "NVIDIA-Tesla T4", 10, 10000));
  n.capacity = {8000, 32768};
  return n;
}

ContainerRequest mib_on_cards(int count, int64_t mib) {
  ContainerRequest c;
  c.count = count;
  c.memory_mib = mib;
  return c;
}

NodeView view_of(const Node& node, const std::vector<DeviceUsage>& usage, HostResources host = {}) {
  NodeView v;
  v.node = &node;
  v.usage = usage;
  v.host_used = host;
  return v;
}

bool full_fit(const NodeView& v, const PodRequest& pod, const GpuPolicy& gpu) {
  FitScratch scratch;
  return fit_pod(v, pod, gpu, scratch).fits;
}

bool fast_fit(const NodeView& v, const PodRequest& pod, const GpuPolicy& gpu) {
  FitScratch scratch;
  return pod_fits(v, pod, gpu, scratch);
}

}  // namespace

TEST_CASE("pod_fits counts the cards with room for one container", "[core][fit][preemption]") {
  const Node node = two_card_node();
  // Card 0 holds 7000 of 10000 MiB, card 1 is free.
  const std::vector<DeviceUsage> usage{{1, 7000, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0}};
  const GpuPolicy gpu = GpuPolicy::parse("binpack");
  PodRequest pod;
  pod.host = {1000, 1024};
  pod.containers = {mib_on_cards(1, 5000)};
  CHECK(fast_fit(view_of(node, usage), pod, gpu));  // card 1
  pod.containers = {mib_on_cards(2, 5000)};
  CHECK_FALSE(fast_fit(view_of(node, usage), pod, gpu));  // card 0 has 3000 MiB left
  pod.containers = {mib_on_cards(2, 3000)};
  CHECK(fast_fit(view_of(node, usage), pod, gpu));  // 3000 MiB is exactly what card 0 has left
  // The host decides first: 7500 + 1000 mCPU of 8000.
  CHECK_FALSE(fast_fit(view_of(node, usage, {7500, 0}), pod, gpu));
  // An init container's cards are free again for the app container: each
  // needs one card of 8000 MiB, card 1 serves both in turn.
  pod.init_containers = {mib_on_cards(1, 8000)};
  pod.containers = {mib_on_cards(1, 8000)};
  CHECK(fast_fit(view_of(node, usage), pod, gpu));
  CHECK(full_fit(view_of(node, usage), pod, gpu));
}

TEST_CASE("pod_fits leaves app containers that see each other's cards to the full fit",
          "[core][fit][preemption]") {
  const Node node = two_card_node();
  const std::vector<DeviceUsage> usage{{1, 7000, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0}};
  const GpuPolicy gpu = GpuPolicy::parse("binpack");
  PodRequest pod;
  pod.host = {1000, 1024};
  // Each container alone fits card 1 (6000 of its 10000 MiB), but the
  // second sees the first's 6000 there and card 0 has 3000: no fit.
  pod.containers = {mib_on_cards(1, 6000), mib_on_cards(1, 6000)};
  CHECK_FALSE(full_fit(view_of(node, usage), pod, gpu));
  CHECK_FALSE(fast_fit(view_of(node, usage), pod, gpu));
}

TEST_CASE("pod_fits agrees with fit_pod on randomised nodes and pods", "[core][fit][preemption]") {
  std::mt19937 rng(20261128);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const std::vector<std::string> policies{"binpack", "spread",       "mutex",
                                          "numa",    "binpack,numa", "spread,numa"};
  const std::vector<std::string> types{"NVIDIA-Tesla T4", "NVIDIA A100-SXM4-80GB", "NVIDIA-Tesla V100"};
  int fits = 0, refused = 0, single_container = 0, with_mig = 0;
  for (int round = 0; round < 20000; ++round) {
    Node node;
    node.name = "node";
    const int cards = 1 + pick(8);
    for (int d = 0; d < cards; ++d) {
      const int64_t mem = std::vector<int64_t>{15360, 32768, 81920}[static_cast<size_t>(pick(3))];
      Device dev = healthy_card("uuid-" + std::to_string(d), d, types[static_cast<size_t>(pick(3))],
                                1 + pick(10), mem, pick(10) == 0 ? 0 : 100);
      dev.numa = pick(2);
      if (pick(12) == 0) dev.healthy = false;
      if (pick(12) == 0) dev.vendor = "Cambricon";
      if (pick(8) == 0) {
        // An A100 in MIG mode (HAMi's a100MigProfiles): instances of 1, 2
        // or 4 memory slices.
        dev.mode = "mig";
        dev.slots = 7;
        dev.memory_mib = 40960;
        dev.mig_profiles = {
            {"1g.5gb", 5120, 14, 1, {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}},
            {"2g.10gb", 10240, 28, 2, {{0, 2}, {2, 2}, {4, 2}}},
            {"3g.20gb", 20480, 42, 3, {{0, 4}, {4, 4}}},
        };
      }
      node.devices.push_back(dev);
    }
    if (pick(10) == 0) node.cordoned_uuids.push_back("uuid-" + std::to_string(pick(cards)));
    node.capacity = {pick(3) == 0 ? 0 : 16000, pick(3) == 0 ? 0 : 65536};
    std::vector<DeviceUsage> usage(static_cast<size_t>(cards));
    for (int d = 0; d < cards; ++d) {
      const Device& dev = node.devices[static_cast<size_t>(d)];
      DeviceUsage& u = usage[static_cast<size_t>(d)];
      if (pick(3) == 0) continue;  // a free card
      u.slots = pick(dev.slots + 1);
      u.memory_mib = u.slots == 0 ? 0 : dev.memory_mib * pick(101) / 100;
      u.cores = u.slots == 0 || dev.cores == 0 ? 0 : pick(dev.cores + 1);
      if (pick(20) == 0) u.closed_by = 1;
      if (dev.is_mig())
        for (int slice = 0; slice < 7; ++slice)
          if (pick(3) == 0) u.mig_slices |= uint64_t{1} << (8 * slice);
    }
    const HostResources host_used{pick(17000), pick(70000)};

    PodRequest pod;
    pod.host = {pick(4000), pick(8192)};
    auto container = [&] {
      ContainerRequest c;
      c.count = pick(8) == 0 ? 0 : 1 + (pick(4) == 0 ? pick(4) : 0);
      switch (pick(3)) {
        case 0:
          c.memory_mib = 500 + pick(20000);
          break;
        case 1:
          c.memory_percent = 1 + pick(100);
          break;
        default:
          break;  // no memory asked
      }
      c.cores = pick(3) == 0 ? 100 : pick(60);
      if (pick(15) == 0) c.vendor = "Cambricon";
      return c;
    };
    pod.containers.push_back(container());
    if (pick(6) == 0) pod.containers.push_back(container());
    if (pick(6) == 0) pod.init_containers.push_back(container());
    if (pick(8) == 0) pod.selectors.use_types = {"T4"};
    if (pick(8) == 0) pod.selectors.nouse_types = {"a100"};
    if (pick(10) == 0) pod.selectors.use_uuids = {"uuid-" + std::to_string(pick(cards)), "uuid-0"};
    if (pick(10) == 0) pod.selectors.nouse_uuids = {"uuid-" + std::to_string(pick(cards))};
    pod.selectors.numa_bind = pick(8) == 0;
    const GpuPolicy gpu =
        GpuPolicy::parse(policies[static_cast<size_t>(pick(static_cast<int>(policies.size())))]);

    const NodeView view = view_of(node, usage, host_used);
    const bool expected = full_fit(view, pod, gpu);
    INFO("round " << round);
    REQUIRE(fast_fit(view, pod, gpu) == expected);
    (expected ? fits : refused) += 1;
    single_container += pod.containers.size() == 1 && !pod.selectors.numa_bind;
    with_mig +=
        std::any_of(node.devices.begin(), node.devices.end(), [](const Device& d) { return d.is_mig(); });
  }
  // Not a vacuous check: both answers, mostly on the counting path.
  CHECK(fits > 2000);
  CHECK(refused > 2000);
  CHECK(single_container > 10000);
  CHECK(with_mig > 5000);
}
