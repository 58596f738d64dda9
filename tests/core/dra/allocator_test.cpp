// The structured allocator, case by case, with the answer worked out by hand
// from its rules (k8s.io/dynamic-resource-allocation/structured): pools by
// (driver, name), slices by name, devices in order, requests in order,
// backtracking, the first full solution.
#include "gpuslice/core/dialects/dra/allocator.hpp"

#include <catch2/catch.hpp>

#include "device_fixtures.hpp"

using namespace gpuslice::core;
using namespace gpuslice::core::dra;
using namespace gpuslice::core::dra::test;

namespace {

const std::string kDriver = "gpu.example.com";
const NodeInfo kNode{"node-a", {{"kubernetes.io/hostname", "node-a"}}};

ResourceSlice slice(std::string name, std::string pool, std::vector<Device> devices) {
  ResourceSlice s;
  s.name = std::move(name);
  s.driver = kDriver;
  s.pool = std::move(pool);
  s.node_name = "node-a";
  s.devices = std::move(devices);
  return s;
}

Device gpu(const std::string& name, const std::string& model, int64_t numa) {
  return make_device(name, kDriver, {{"model", string_value(model)}, {"numa", int_value(numa)}});
}

std::vector<DeviceClass> classes() {
  return {DeviceClass{"gpu", {"device.driver == 'gpu.example.com'"}, ""},
          DeviceClass{"mig", {"device.attributes['gpu.example.com'].type == 'mig'"}, ""}};
}

ExactRequest exactly(std::string device_class, int64_t count, std::vector<std::string> selectors = {}) {
  ExactRequest r;
  r.device_class = std::move(device_class);
  r.count = count;
  r.selectors = std::move(selectors);
  return r;
}

DeviceRequest request(std::string name, ExactRequest spec) {
  DeviceRequest r;
  r.name = std::move(name);
  r.exactly = std::move(spec);
  return r;
}

// "request=device" for each result of each claim, in order.
std::vector<std::string> picks(const std::optional<std::vector<Allocation>>& allocations) {
  std::vector<std::string> out;
  if (!allocations) return out;
  for (const auto& a : *allocations)
    for (const auto& r : a.results) out.push_back(r.request + "=" + r.device);
  return out;
}

struct Fixture {
  std::vector<ResourceSlice> slices;
  std::vector<DeviceClass> device_classes = classes();
  CelCache cache;
  AllocatedState state;

  std::optional<std::vector<Allocation>> allocate(const std::vector<const ClaimSpec*>& claims) {
    const auto pools = gather_pools(slices, kNode);
    return StructuredAllocator(device_classes, cache).allocate(pools, claims, state, kNode);
  }
};

}  // namespace

TEST_CASE("dra allocator: first fit in pool, slice and device order") {
  Fixture f;
  // Pools sort by name (pool-b after pool-a), slices by name within a pool.
  f.slices = {slice("s-2", "pool-b", {gpu("gpu-9", "T4", 0)}),
              slice("s-1", "pool-a", {gpu("gpu-1", "T4", 0)}),
              slice("s-0", "pool-a", {gpu("gpu-0", "T4", 0)})};
  f.slices[1].resource_slice_count = 2;
  f.slices[2].resource_slice_count = 2;
  ClaimSpec claim;
  claim.requests = {request("gpu", exactly("gpu", 1))};
  CHECK(picks(f.allocate({&claim})) == std::vector<std::string>{"gpu=gpu-0"});
  // gpu-0 held by another claim: the next in order.
  f.state.devices.insert("gpu.example.com/pool-a/gpu-0");
  CHECK(picks(f.allocate({&claim})) == std::vector<std::string>{"gpu=gpu-1"});
  // Two claims of one pod share nothing: each device once.
  ClaimSpec second = claim;
  CHECK(picks(f.allocate({&claim, &second})) == std::vector<std::string>{"gpu=gpu-1", "gpu=gpu-9"});
}

TEST_CASE("dra allocator: an incomplete pool is skipped") {
  Fixture f;
  f.slices = {slice("s-0", "pool-a", {gpu("gpu-0", "T4", 0)})};
  f.slices[0].resource_slice_count = 2;  // the second slice has not been published
  ClaimSpec claim;
  claim.requests = {request("gpu", exactly("gpu", 1))};
  CHECK_FALSE(f.allocate({&claim}).has_value());
}

TEST_CASE("dra allocator: backtracking to meet matchAttribute") {
  Fixture f;
  f.slices = {
      slice("s-0", "pool-a", {gpu("gpu-0", "T4", 0), gpu("gpu-1", "A100", 1), gpu("gpu-2", "T4", 1)})};
  ClaimSpec claim;
  claim.requests = {
      request("any", exactly("gpu", 1)),
      request("big", exactly("gpu", 1, {"device.attributes['gpu.example.com'].model == 'A100'"}))};
  claim.constraints = {DeviceConstraint{{}, "gpu.example.com/numa", ""}};
  // any=gpu-0 (numa 0) leaves only gpu-1 (numa 1) for big: the constraint fails;
  // any=gpu-1 takes the only A100; any=gpu-2 (numa 1) and big=gpu-1 (numa 1) is the first full solution.
  CHECK(picks(f.allocate({&claim})) == std::vector<std::string>{"any=gpu-2", "big=gpu-1"});
}

TEST_CASE("dra allocator: distinctAttribute across two devices") {
  Fixture f;
  f.slices = {slice("s-0", "pool-a", {gpu("gpu-0", "T4", 0), gpu("gpu-1", "T4", 0), gpu("gpu-2", "T4", 1)})};
  ClaimSpec claim;
  claim.requests = {request("pair", exactly("gpu", 2))};
  claim.constraints = {DeviceConstraint{{"pair"}, "", "gpu.example.com/numa"}};
  // gpu-1 repeats gpu-0's numa: skipped.
  CHECK(picks(f.allocate({&claim})) == std::vector<std::string>{"pair=gpu-0", "pair=gpu-2"});
  // Three devices of one request are taken in device order (the search for the
  // next device starts after the last one): gpu-0, gpu-2 leaves nothing after
  // gpu-2, gpu-1, gpu-2 the same; there is no solution.
  claim.requests = {request("pair", exactly("gpu", 3))};
  CHECK_FALSE(f.allocate({&claim}).has_value());
}

TEST_CASE("dra allocator: firstAvailable takes the first subrequest that fits") {
  Fixture f;
  f.slices = {slice("s-0", "pool-a", {gpu("gpu-0", "T4", 0), gpu("gpu-1", "A100", 1)})};
  DeviceRequest r;
  r.name = "acc";
  r.first_available = {
      SubRequest{"two-a100", exactly("gpu", 2, {"device.attributes['gpu.example.com'].model == 'A100'"})},
      SubRequest{"one-t4", exactly("gpu", 1, {"device.attributes['gpu.example.com'].model == 'T4'"})}};
  ClaimSpec claim;
  claim.requests = {r};
  CHECK(picks(f.allocate({&claim})) == std::vector<std::string>{"acc/one-t4=gpu-0"});
}

TEST_CASE("dra allocator: an unsatisfiable selector finds nothing, a failing one is an error") {
  Fixture f;
  f.slices = {slice("s-0", "pool-a", {gpu("gpu-0", "T4", 0), gpu("gpu-1", "A100", 1)})};
  ClaimSpec claim;
  claim.requests = {
      request("gpu", exactly("gpu", 1, {"device.attributes['gpu.example.com'].model == 'H100'"}))};
  CHECK_FALSE(f.allocate({&claim}).has_value());
  // A CEL runtime error stops the allocation (selectorsMatch returns the error).
  claim.requests = {request("gpu", exactly("gpu", 1, {"device.attributes['gpu.example.com'].missing == 1"}))};
  CHECK_THROWS_AS(f.allocate({&claim}), AllocationError);
  claim.requests = {request("gpu", exactly("no-such-class", 1))};
  CHECK_THROWS_AS(f.allocate({&claim}), AllocationError);
}

TEST_CASE("dra allocator: consumed capacity rounded by the request policy") {
  const int64_t Gi = int64_t(1) << 30;
  Capacity memory{qualify("memory", kDriver), 10 * Gi * 1000, RequestPolicy{}};
  memory.request_policy->default_milli = Gi * 1000;
  memory.request_policy->valid_range = CapacityRange{Gi * 1000, 10 * Gi * 1000, Gi * 1000};
  // 1.5Gi rounds up to min + 1 step = 2Gi; below min takes min; absent takes the default.
  CHECK(consumed_capacity(Gi * 1500, memory) == 2 * Gi * 1000);
  CHECK(consumed_capacity(1000, memory) == Gi * 1000);
  CHECK(consumed_capacity(std::nullopt, memory) == Gi * 1000);
  Capacity slots{qualify("slots", kDriver), 8000, RequestPolicy{}};
  slots.request_policy->valid_values_milli = {1000, 4000, 8000};
  CHECK(consumed_capacity(3000, slots) == 4000);  // the first valid value not below it
  CHECK(consumed_capacity(9000, slots) == 9000);  // above every value: kept (and then refused as a violation)

  Fixture f;
  Device shared = make_device("gpu-0", kDriver, {{"model", string_value("A100")}});
  shared.allow_multiple_allocations = true;
  shared.capacity = {memory};
  f.slices = {slice("s-0", "pool-a", {shared})};
  ClaimSpec small;
  small.requests = {request("gpu", exactly("gpu", 1))};
  small.requests[0].exactly->capacity = {{"memory", Gi * 1500}};
  const auto first = f.allocate({&small});
  REQUIRE(first);
  REQUIRE((*first)[0].results.size() == 1);
  CHECK((*first)[0].results[0].shared);
  CHECK((*first)[0].results[0].consumed_capacity == CapacityRequests{{"memory", 2 * Gi * 1000}});
  f.state.add((*first)[0]);
  // 2Gi held: 8Gi fits (10Gi), 9Gi does not; the device is shared, never "in use".
  ClaimSpec big = small;
  big.requests[0].exactly->capacity = {{"memory", 8 * Gi * 1000}};
  CHECK(picks(f.allocate({&big})) == std::vector<std::string>{"gpu=gpu-0"});
  big.requests[0].exactly->capacity = {{"memory", 9 * Gi * 1000}};
  CHECK_FALSE(f.allocate({&big}).has_value());
  // A capacity the device does not have: the device is skipped.
  big.requests[0].exactly->capacity = {{"cores", 10000}};
  CHECK_FALSE(f.allocate({&big}).has_value());
}

TEST_CASE("dra allocator: a MIG partition whose counters are exhausted") {
  Fixture f;
  auto partition = [](const std::string& name, int64_t slices) {
    Device d = make_device(name, kDriver, {{"type", string_value("mig")}});
    d.consumes_counters = {CounterConsumption{"gpu-0-counters", {Counter{"memorySlices", slices * 1000}}}};
    return d;
  };
  ResourceSlice counters = slice("s-counters", "pool-a", {});
  counters.shared_counters = {CounterSet{"gpu-0-counters", {Counter{"memorySlices", 8000}}}};
  ResourceSlice parts = slice("s-devices", "pool-a",
                              {partition("mig-4g-0", 4), partition("mig-4g-1", 4), partition("mig-2g-0", 2)});
  counters.resource_slice_count = parts.resource_slice_count = 2;
  f.slices = {counters, parts};
  ClaimSpec two;
  two.requests = {request("mig", exactly("mig", 2))};
  CHECK(picks(f.allocate({&two})) == std::vector<std::string>{"mig=mig-4g-0", "mig=mig-4g-1"});
  // Three partitions need 10 of 8 slices: no combination fits.
  ClaimSpec three;
  three.requests = {request("mig", exactly("mig", 3))};
  CHECK_FALSE(f.allocate({&three}).has_value());
  // Both 4g partitions allocated: mig-2g-0 is free but its counters are exhausted.
  f.state.devices = {"gpu.example.com/pool-a/mig-4g-0", "gpu.example.com/pool-a/mig-4g-1"};
  ClaimSpec one;
  one.requests = {request("mig", exactly("mig", 1))};
  CHECK_FALSE(f.allocate({&one}).has_value());
  // One of them freed: the 2g partition fits (4 + 2 of 8).
  f.state.devices = {"gpu.example.com/pool-a/mig-4g-0"};
  CHECK(picks(f.allocate({&one})) == std::vector<std::string>{"mig=mig-4g-1"});
}

TEST_CASE("dra allocator: allocationMode All takes every matching device") {
  Fixture f;
  f.slices = {
      slice("s-0", "pool-a", {gpu("gpu-0", "T4", 0), gpu("gpu-1", "A100", 1), gpu("gpu-2", "T4", 1)})};
  ExactRequest all = exactly("gpu", 0, {"device.attributes['gpu.example.com'].model == 'T4'"});
  all.mode = AllocationMode::All;
  ClaimSpec claim;
  claim.requests = {request("t4s", all)};
  CHECK(picks(f.allocate({&claim})) == std::vector<std::string>{"t4s=gpu-0", "t4s=gpu-2"});
  // One of them held elsewhere: All cannot be met.
  f.state.devices.insert("gpu.example.com/pool-a/gpu-2");
  CHECK_FALSE(f.allocate({&claim}).has_value());
}
