// DRA's objects read from a dump (examples/dra/cluster.yaml) through the one
// reader, then allocated: values checked against the file by hand.
#include "gpuslice/core/dialects/dra/read.hpp"

#include <catch2/catch.hpp>

#include "gpuslice/core/dialects/dra/allocator.hpp"
#include "gpuslice/core/dialects/dra/hami_dra.hpp"
#include "gpuslice/core/errors.hpp"

using namespace gpuslice::core;
using namespace gpuslice::core::dra;

namespace {

const std::string kExample = std::string(GPUSLICE_SOURCE_DIR) + "/examples/dra/cluster.yaml";
constexpr int64_t kMi = int64_t(1) << 20;

NodeInfo node_named(const std::string& name) { return NodeInfo{name, {{"kubernetes.io/hostname", name}}}; }

std::string read_error(const std::string& yaml) {
  try {
    read_dra_dump(codec::KubeText::from_string(yaml, "dump.yaml"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("dra read: the example dump's objects") {
  const DraDump dump = read_dra_dump(codec::KubeText::from_file(kExample));
  CHECK(dump.nodes.size() == 2);
  CHECK(dump.pods.size() == 2);
  REQUIRE(dump.objects.slices.size() == 3);
  REQUIRE(dump.objects.classes.size() == 2);
  CHECK(dump.objects.classes[1].extended_resource_name == "nvidia.com/mig-1g.10gb");
  const ResourceSlice& hami = dump.objects.slices[0];
  CHECK(hami.driver == "hami-core-gpu.project-hami.io");
  CHECK(hami.node_name == "gpu-node-a");
  REQUIRE(hami.devices.size() == 2);
  const dra::Device& gpu0 = hami.devices[0];
  CHECK(gpu0.allow_multiple_allocations);
  CHECK(gpu0.attribute("hami-core-gpu.project-hami.io", "type")->value.string_value == "hami-gpu");
  CHECK(gpu0.attribute("hami-core-gpu.project-hami.io", "driverVersion")->value.version.text() ==
        "550.144.3");
  const Capacity* memory = gpu0.capacity_named("memory");
  REQUIRE(memory);
  CHECK(memory->value_milli == 81920 * kMi * 1000);
  CHECK(memory->request_policy->valid_range->step_milli == kMi * 1000);
  const ResourceSlice& counters = dump.objects.slices[1];
  REQUIRE(counters.shared_counters.size() == 1);
  CHECK(counters.shared_counters[0].counters[0].value_milli == 8000);
  CHECK(dump.objects.slices[2].devices[2].consumes_counters[0].counters[0].value_milli == 1000);
  REQUIRE(dump.objects.claims.size() == 1);
  const ResourceClaim& claim = dump.objects.claims[0];
  CHECK(claim.spec.requests[0].exactly->capacity ==
        CapacityRequests{{"cores", 50000}, {"memory", 10240 * kMi * 1000}});
  REQUIRE(claim.allocation);
  CHECK(claim.allocation->node_name == "gpu-node-a");
  CHECK(claim.allocation->results[0].shared);
  CHECK(claim.allocation->results[0].device == "hami-gpu-0");
  REQUIRE(dump.objects.templates.size() == 1);
  CHECK(dump.objects.templates[0].spec.requests[0].first_available.size() == 2);
  REQUIRE(dump.pod_claims[1].size() == 1);
  CHECK(dump.pod_claims[1][0].template_name == "one-mig");
}

TEST_CASE("dra read: the example dump allocated as the structured allocator would") {
  const DraDump dump = read_dra_dump(codec::KubeText::from_file(kExample));
  CelCache cache;
  const StructuredAllocator allocator(dump.objects.classes, cache);
  AllocatedState state;
  state.add(*dump.objects.claims[0].allocation);
  // hami-gpu-0 holds 50 cores and 10Gi: a claim asking 60 cores goes to hami-gpu-1.
  ClaimSpec sixty = dump.objects.claims[0].spec;
  sixty.requests[0].exactly->capacity = {{"cores", 60000}, {"memory", 1024 * kMi * 1000}};
  const auto node_a = node_named("gpu-node-a");
  const auto on_a = allocator.allocate(gather_pools(dump.objects.slices, node_a), {&sixty}, state, node_a);
  REQUIRE(on_a);
  CHECK((*on_a)[0].results[0].device == "hami-gpu-1");
  // 40 cores fit beside the 50 on hami-gpu-0 (first fit).
  ClaimSpec forty = sixty;
  forty.requests[0].exactly->capacity = {{"cores", 40000}, {"memory", 1024 * kMi * 1000}};
  CHECK((*allocator.allocate(gather_pools(dump.objects.slices, node_a), {&forty}, state, node_a))[0]
            .results[0]
            .device == "hami-gpu-0");
  // No cores asked: the policy's default (100) is consumed, so not beside the 50.
  ClaimSpec memory_only = sixty;
  memory_only.requests[0].exactly->capacity = {{"memory", 1024 * kMi * 1000}};
  CHECK((*allocator.allocate(gather_pools(dump.objects.slices, node_a), {&memory_only}, state, node_a))[0]
            .results[0]
            .device == "hami-gpu-1");
  // The pending pod's template on gpu-node-b: the first subrequest (a 3g) fits.
  const auto node_b = node_named("gpu-node-b");
  const auto on_b = allocator.allocate(gather_pools(dump.objects.slices, node_b),
                                       {&dump.objects.templates[0].spec}, AllocatedState{}, node_b);
  REQUIRE(on_b);
  CHECK((*on_b)[0].results[0].request == "mig/big");
  CHECK((*on_b)[0].results[0].device == "gpu-0-mig-3g.40gb-0");
  // gpu-node-a has no MIG class devices.
  CHECK_FALSE(allocator.allocate(gather_pools(dump.objects.slices, node_a), {&dump.objects.templates[0].spec},
                                 state, node_a));
}

TEST_CASE("dra read: malformed objects are refused naming file, line and field") {
  const std::string head =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: s\nspec:\n  driver: d\n"
      "  nodeName: n\n  pool:\n    name: p\n    resourceSliceCount: 1\n  devices:\n  - name: gpu-0\n";
  const std::string two_types =
      read_error(head + "    attributes:\n      model:\n        string: A\n        int: 1\n");
  CHECK(two_types.find("dump.yaml:15") != std::string::npos);
  CHECK(two_types.find("spec.devices[0].attributes.model") != std::string::npos);
  const std::string bad_quantity = read_error(head + "    capacity:\n      memory:\n        value: lots\n");
  CHECK(bad_quantity.find("dump.yaml:15") != std::string::npos);
  CHECK(bad_quantity.find("spec.devices[0].capacity.memory.value") != std::string::npos);
  const std::string no_pool = read_error(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: s\nspec:\n  driver: d\n");
  CHECK(no_pool.find("spec.pool") != std::string::npos);
  const std::string claim = read_error(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: c\nspec:\n  devices:\n"
      "    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: x\n        allocationMode: "
      "Some\n");
  CHECK(claim.find("dump.yaml:11") != std::string::npos);
  CHECK(claim.find("spec.devices.requests[0].exactly.allocationMode") != std::string::npos);
}

TEST_CASE("dra read: a class's extendedResourceName turns a plain request into a claim") {
  const DraDump dump = read_dra_dump(codec::KubeText::from_file(kExample));
  const auto claim = extended_resource_claim("nvidia.com/mig-1g.10gb", 1, dump.objects.classes);
  REQUIRE(claim);
  CHECK(claim->requests[0].exactly->device_class == "mig.nvidia.com");
  // No class names nvidia.com/gpu: a device plugin serves it (or HAMi-DRA's webhook rewrote it).
  CHECK_FALSE(extended_resource_claim("nvidia.com/gpu", 1, dump.objects.classes));
  // Allocated on gpu-node-b: the first MIG device in slice order.
  CelCache cache;
  const auto node_b = node_named("gpu-node-b");
  const auto allocation =
      StructuredAllocator(dump.objects.classes, cache)
          .allocate(gather_pools(dump.objects.slices, node_b), {&*claim}, AllocatedState{}, node_b);
  REQUIRE(allocation);
  CHECK((*allocation)[0].results[0].device == "gpu-0-mig-3g.40gb-0");
}
