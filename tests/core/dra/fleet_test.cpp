// A DRA dump as a fleet (dra/fleet.hpp): device keys, claims said in the
// request model or named as not modelled, and what an allocation holds.
#include "gpuslice/core/dialects/dra/fleet.hpp"

#include <catch2/catch.hpp>

#include "gpuslice/core/dialects/dra/hami_dra.hpp"

using namespace gpuslice::core;
using namespace gpuslice::core::dra;

namespace {

ClaimSpec one_request(const std::string& device_class, CapacityRequests capacity, int64_t count = 1) {
  ExactRequest e;
  e.device_class = device_class;
  e.count = count;
  e.capacity = std::move(capacity);
  DeviceRequest r;
  r.name = "gpu";
  r.exactly = std::move(e);
  ClaimSpec spec;
  spec.requests.push_back(std::move(r));
  return spec;
}

constexpr int64_t kMiMilli = (int64_t(1) << 20) * 1000;

}  // namespace

TEST_CASE("DRA fleet: a device key splits at its first and last slash", "[dra][fleet]") {
  const auto k = split_device_key("hami-core-gpu.project-hami.io/rack/a/hami-gpu-3");
  REQUIRE(k);
  CHECK(k->driver == "hami-core-gpu.project-hami.io");
  CHECK(k->pool == "rack/a");
  CHECK(k->device == "hami-gpu-3");
  CHECK_FALSE(split_device_key("GPU-5f8e0f4c"));
  CHECK_FALSE(split_device_key("driver/device"));
}

TEST_CASE("DRA fleet: a webhook claim is one ask, memory rounded up to MiB", "[dra][fleet]") {
  // 1.5 MiB asks 2 MiB: HAMi-DRA's memory policy rounds up to its 1Mi step.
  const ClaimSpec spec = one_request(kHamiDraClass, {{"memory", kMiMilli * 3 / 2}, {"cores", 30000}}, 2);
  PodRequest pod;
  pod.containers.resize(1);
  REQUIRE(request_from_claims({ResolvedClaim{"default/c", &spec, nullptr, 1}}, pod).empty());
  CHECK(pod.containers[0].count == 2);
  CHECK(pod.containers[0].memory_mib == 2);
  CHECK(pod.containers[0].cores == 30);
}

TEST_CASE("DRA fleet: another class or capacity is named, not modelled", "[dra][fleet]") {
  const ClaimSpec other = one_request("gpu.nvidia.com", {});
  PodRequest pod;
  CHECK(request_from_claims({ResolvedClaim{"default/c", &other, nullptr, 1}}, pod) ==
        "claim 'default/c' request 'gpu': class 'gpu.nvidia.com' is not HAMi-DRA's "
        "(hami-core-gpu.project-hami.io)");
  const ClaimSpec slices = one_request(kHamiDraClass, {{"memorySlices", 1000}});
  CHECK(request_from_claims({ResolvedClaim{"default/c", &slices, nullptr, 1}}, pod) ==
        "claim 'default/c' request 'gpu': capacity 'memorySlices' is not HAMi-DRA's (memory, cores)");
  CHECK(pod.containers.empty());  // nothing read onto the pod
}

TEST_CASE("DRA fleet: an allocation holds its consumed capacity, a whole card when not shared",
          "[dra][fleet]") {
  Node node;
  node.name = "node-a";
  for (int i = 0; i < 2; ++i) {
    gpuslice::core::Device d;
    d.uuid = device_key(kHamiDraDriver, "node-a", "hami-gpu-" + std::to_string(i));
    d.memory_mib = 81920;
    d.cores = 100;
    node.devices.push_back(d);
  }
  const ClaimSpec spec = one_request(kHamiDraClass, {{"memory", 10240 * kMiMilli}}, 2);
  Allocation a;
  a.results.push_back(DeviceResult{"gpu",
                                   kHamiDraDriver,
                                   "node-a",
                                   "hami-gpu-1",
                                   true,
                                   {{"memory", 10240 * kMiMilli}, {"cores", 100000}},
                                   false});
  a.results.push_back(DeviceResult{"gpu", kHamiDraDriver, "node-a", "hami-gpu-0", false, {}, false});
  PodRequest pod;
  PodAllocation held;
  REQUIRE(held_from_allocations({ResolvedClaim{"default/c", &spec, &a, 1}}, node, pod, held).empty());
  REQUIRE(held.containers.size() == 1);
  REQUIRE(held.containers[0].size() == 2);
  CHECK(held.containers[0][0].device == 1);
  CHECK(held.containers[0][0].memory_mib == 10240);
  CHECK(held.containers[0][0].cores == 100);
  CHECK(held.containers[0][1].device == 0);  // no shareID: the whole card
  CHECK(held.containers[0][1].memory_mib == 81920);
  CHECK(held.containers[0][1].cores == 100);
  // The pod's ask, its spec not read onto it: what its devices hold, as many as it holds.
  CHECK(pod.containers[0].count == 2);
  // A device the node does not have is named.
  Allocation elsewhere;
  elsewhere.results.push_back(DeviceResult{"gpu", kHamiDraDriver, "node-b", "hami-gpu-0", true, {}, false});
  PodRequest other;
  PodAllocation none;
  CHECK(held_from_allocations({ResolvedClaim{"default/d", &spec, &elsewhere, 1}}, node, other, none) ==
        "claim 'default/d' holds device 'hami-core-gpu.project-hami.io/node-b/hami-gpu-0', which node "
        "'node-a' does not have as a HAMi-DRA GPU");
}
