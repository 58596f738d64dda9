// Running pods' MIG reservations read back, as HAMi v2.10.0's
// getNodesUsage does (pkg/scheduler/mig_allocation_test.go), through the
// whole path of `gpuslice place --existing`: the node's registration, the
// running pods' two annotations, then the next pod's placement.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "gpuslice/core/dialects/hami/mig_allocations.hpp"
#include "gpuslice/core/place.hpp"

using namespace gpuslice::core;

namespace {

// One node, card GPU-a in MIG mode (mig_allocation_test.go's fixture: count
// 7, devmem 40960, devcore 100) with a 1g.5gb profile at `placements`.
std::string node_with(const std::string& placements, const std::string& mode = "mig") {
  return fmt::format(R"(apiVersion: v1
kind: Node
metadata:
  name: node1
  annotations:
    hami.io/node-nvidia-register: '[{{"id":"GPU-a","count":7,"devmem":40960,"devcore":100,"type":"NVIDIA-A100-SXM4-40GB","mode":"{}","migProfiles":[{{"name":"1g.5gb","memoryMB":5120,"core":14,"sliceCount":1,"placements":{}}}],"health":true}}]'
)",
                     mode, placements);
}

std::string running_pod(const std::string& allocated, const std::string& mig) {
  std::string text = fmt::format(R"(apiVersion: v1
kind: Pod
metadata:
  name: pod-1
  namespace: default
  annotations:
    hami.io/vgpu-node: node1
    hami.io/vgpu-devices-allocated: "{}"
)",
                                 allocated);
  if (!mig.empty()) text += fmt::format("    hami.io/vgpu-mig-allocations: '{}'\n", mig);
  text += R"(spec:
  nodeName: node1
  containers:
  - name: c
    resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 4000}}
status: {phase: Running}
)";
  return text;
}

const std::string kNext = R"(apiVersion: v1
kind: Pod
metadata: {name: next, namespace: default}
spec:
  containers:
  - name: c
    resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 4000}}
)";

PlaceOutcome place_next(const std::string& node, const std::string& existing) {
  PlaceRequest r;
  r.nodes = {node, "nodes.yaml"};
  r.pod = {kNext, "pod.yaml"};
  r.existing = TextInput{existing, "existing.yaml"};
  return place(r);
}

std::string refusal(const PlaceOutcome& o) {
  REQUIRE(!o.decision.placed());
  REQUIRE(o.decision.failed.size() == 1);
  return o.decision.failed.begin()->second.format();
}

const std::string kSevenSlices =
    R"([{"start":0,"size":1},{"start":1,"size":1},{"start":2,"size":1},{"start":3,"size":1},{"start":4,"size":1},{"start":5,"size":1},{"start":6,"size":1}])";

}  // namespace

TEST_CASE("TestGetNodesUsageRestoresMigAllocationByProfileAndPlacement: a reservation holds its slice",
          "[mig][readback]") {
  const auto o = place_next(
      node_with(R"([{"start":6,"size":1}])"),
      running_pod(
          "GPU-a,NVIDIA,5120,14:;",
          R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":6,"size":1},"migUUID":"MIG-a","gpuInstanceID":7,"computeInstanceID":0}])"));
  CHECK(refusal(o) == "1/1 CardMigTopologyInfeasible");
  CHECK(o.warnings.empty());
}

TEST_CASE("TestGetNodesUsageFailsClosedWithoutMigAllocation: a MIG card's pod without reservation closes it",
          "[mig][readback]") {
  const auto o = place_next(node_with(kSevenSlices), running_pod("GPU-a,NVIDIA,5120,14:;", ""));
  CHECK(refusal(o) == "1/1 CardNotHealth");
  REQUIRE(o.warnings.size() == 1);
  CHECK_THAT(o.warnings[0], Catch::Contains("existing.yaml:") &&
                                Catch::Contains("hami.io/vgpu-mig-allocations") &&
                                Catch::Contains("1 card(s) closed"));
}

TEST_CASE("an undecodable reservation is read as none, so the card fails closed (HAMi swallows the error)",
          "[mig][readback]") {
  const auto o = place_next(
      node_with(kSevenSlices),
      running_pod(
          "GPU-a,NVIDIA,5120,14:;",
          R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":6,"size":1},"migUUID":"MIG-a"}])"));
  CHECK(refusal(o) == "1/1 CardNotHealth");
  REQUIRE(o.warnings.size() == 1);
  CHECK_THAT(o.warnings[0], Catch::Contains("MIG allocation 0 has partial runtime identity"));
}

TEST_CASE(
    "TestGetNodesUsageRestoresUnconsumedMigReservations: two reservations for one grant hold both slices",
    "[mig][readback]") {
  const auto o = place_next(
      node_with(R"([{"start":5,"size":1},{"start":6,"size":1}])"),
      running_pod(
          "GPU-a,NVIDIA,5120,14:;",
          R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":6,"size":1}},{"containerIndex":0,"deviceIndex":1,"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":5,"size":1}}])"));
  CHECK(refusal(o) == "1/1 CardMigTopologyInfeasible");  // healthy, both slices taken
  CHECK(o.warnings.empty());
}

TEST_CASE(
    "reservations naming a card the node lacks close its MIG cards, and one on a hami-core card closes that "
    "card",
    "[mig][readback]") {
  const std::string elsewhere =
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-z","profile":"1g.5gb","placement":{"start":6,"size":1}}])";
  CHECK(refusal(place_next(node_with(kSevenSlices), running_pod("GPU-a,NVIDIA,5120,14:;", elsewhere))) ==
        "1/1 CardNotHealth");
  const std::string on_a =
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":6,"size":1}}])";
  CHECK(refusal(place_next(node_with(kSevenSlices, "hami-core"),
                           running_pod("GPU-a,NVIDIA,5120,14:;", on_a))) == "1/1 CardNotHealth");
}

TEST_CASE("place writes both annotations, and what it writes reads back as held", "[mig][readback]") {
  PlaceRequest r;
  r.nodes = {node_with(kSevenSlices), "nodes.yaml"};
  r.pod = {kNext, "pod.yaml"};
  const auto first = place(r);
  REQUIRE(first.decision.placed());
  CHECK(first.allocation_annotation == "GPU-a,NVIDIA,5120,14:;");
  const std::vector<std::pair<std::string, std::string>> want = {
      {"hami.io/vgpu-devices-allocated", "GPU-a,NVIDIA,5120,14:;"},
      {"hami.io/vgpu-mig-allocations",
       R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":6,"size":1}}])"}};
  CHECK(first.annotations == want);
  // The same pod running: the next one takes slice 5.
  const auto second = place_next(node_with(kSevenSlices), running_pod(want[0].second, want[1].second));
  REQUIRE(second.decision.placed());
  CHECK(
      second.annotations.at(1).second ==
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":5,"size":1}}])");
  CHECK(second.warnings.empty());
}
