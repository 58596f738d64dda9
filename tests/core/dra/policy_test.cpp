// `--policy dra`: kube-scheduler's default-profile score and the DRA filter
// over a node's GPUs as HAMi-DRA devices, with values worked by hand.
#include "gpuslice/core/dialects/dra/policy.hpp"

#include <catch2/catch.hpp>

#include "gpuslice/core/dialects/dra/hami_dra.hpp"

using namespace gpuslice::core;
using namespace gpuslice::core::dra;

namespace {

Node two_card_node() {
  Node n;
  n.name = "node-a";
  n.capacity = HostResources{64000, 524288};
  for (int i = 0; i < 2; ++i)
    n.devices.push_back(gpuslice::core::healthy_card("GPU-" + std::to_string(i), i, "NVIDIA-A10", 10, 16384));
  return n;
}

PodRequest gpu_pod(int64_t memory_mib, int32_t cores) {
  PodRequest p;
  ContainerRequest c;
  c.name = "cuda";
  c.count = 1;
  c.memory_mib = memory_mib;
  c.cores = cores;
  p.containers.push_back(c);
  p.host = HostResources{4000, 16384};
  return p;
}

}  // namespace

TEST_CASE("dra policy: kube-scheduler's default-profile score") {
  // LeastAllocated: cpu (64000-4000)*100/64000 = 93, memory (524288-16384)*100/524288 = 96, mean 94;
  // BalancedAllocation: fractions 0.0625 and 0.03125, deviation 0.015625: 98. Sum 192.
  CHECK(default_profile_score(HostResources{64000, 524288}, HostResources{0, 0},
                              HostResources{4000, 16384}) == 192);
  // A pod asking nothing counts as 100m and 200Mi (GetNonzeroRequests):
  // least (99 + 99) / 2 = 99; fractions 0.0015625 and 0.00038147: deviation 0.00059: 99. Sum 198.
  CHECK(default_profile_score(HostResources{64000, 524288}, HostResources{0, 0}, HostResources{0, 0}) == 198);
}

TEST_CASE("dra policy: the webhook's claim of a HAMi container") {
  ContainerRequest c;
  c.count = 2;
  c.memory_mib = 10240;
  c.cores = 50;
  const auto claim = hami_dra_claim(c, 16384);
  REQUIRE(claim);
  const auto& r = *claim->requests[0].exactly;
  CHECK(r.device_class == "hami-core-gpu.project-hami.io");
  CHECK(r.count == 2);
  CHECK(r.capacity == CapacityRequests{{"memory", int64_t(10240) * 1048576 * 1000}, {"cores", 50000}});
  c.memory_mib = 0;
  c.memory_percent = 25;  // a quarter of a 16Gi card
  CHECK(hami_dra_claim(c, 16384)->requests[0].exactly->capacity[0].second == int64_t(4096) * 1048576 * 1000);
  c.count = 0;
  CHECK_FALSE(hami_dra_claim(c, 16384));
}

TEST_CASE("dra policy: first fit on the node's GPUs with what they hold") {
  const Node node = two_card_node();
  std::vector<DeviceUsage> usage(2);
  usage[0].slots = 1;
  usage[0].memory_mib = 8192;
  usage[0].cores = 50;
  const NodeView view{0, &node, usage, HostResources{}, 0, 0};
  DraPolicy policy;
  // 4Gi and 30 cores fit beside 8Gi and 50 on card 0: the first fit.
  auto r = policy.fit(view, gpu_pod(4096, 30));
  REQUIRE(r.fits);
  REQUIRE(r.allocation.containers[0].size() == 1);
  CHECK(r.allocation.containers[0][0].device == 0);
  CHECK(r.allocation.containers[0][0].memory_mib == 4096);
  CHECK(r.allocation.containers[0][0].cores == 30);
  // 60 cores do not (50 + 60 > 100): card 1.
  r = policy.fit(view, gpu_pod(4096, 60));
  REQUIRE(r.fits);
  CHECK(r.allocation.containers[0][0].device == 1);
  // No cores asked: the default (all 100) is consumed, so card 1, holding 100.
  r = policy.fit(view, gpu_pod(4096, 0));
  REQUIRE(r.fits);
  CHECK(r.allocation.containers[0][0].device == 1);
  CHECK(r.allocation.containers[0][0].cores == 100);
  // More memory than any card has left: refused.
  usage[1].memory_mib = 16000;
  usage[1].slots = 1;
  CHECK_FALSE(policy.fit(NodeView{0, &node, usage, HostResources{}, 0, 0}, gpu_pod(9000, 10)).fits);
}
