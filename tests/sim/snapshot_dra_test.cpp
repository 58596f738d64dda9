// A DRA dump as the simulator's fleet (examples/dra/hami-dra-cluster.yaml):
// cards from HAMi-DRA's ResourceSlices, a running pod's allocated claim as
// its grant, pending pods' claims and templates as requests, and the run
// under `--policy dra`. Expected values worked by hand in the file's header
// and docs/dialects.md ("A DRA dump as a fleet").
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/scenario.hpp"
#include "gpuslice/sim/simulator.hpp"
#include "gpuslice/sim/snapshot.hpp"

using namespace gpuslice;
using namespace gpuslice::sim;

namespace {
const std::string kExample = std::string(GPUSLICE_SOURCE_DIR) + "/examples/dra/hami-dra-cluster.yaml";
const std::string kDriver = "hami-core-gpu.project-hami.io";
}  // namespace

TEST_CASE("DRA snapshot: slices give cards, an allocated claim holds, claims ask", "[sim][snapshot][dra]") {
  const ClusterSnapshot s = load_snapshot(kExample);
  REQUIRE(s.nodes.size() == 2);
  REQUIRE(s.nodes[0].devices.size() == 2);
  CHECK(s.nodes[0].devices[1].uuid == kDriver + "/node-a/hami-gpu-1");
  CHECK(s.nodes[0].devices[1].memory_mib == 81920);
  CHECK(s.nodes[0].devices[1].cores == 100);
  CHECK(s.nodes[0].devices[1].type == "NVIDIA A100-SXM4-80GB");
  REQUIRE(s.nodes[1].devices.size() == 1);
  CHECK(s.nodes[1].devices[0].memory_mib == 40960);
  // train-0's claim: 10Gi and 50 cores of node-a's first card.
  REQUIRE(s.running_gpu_pods == 1);
  REQUIRE(s.starting.size() == 1);
  const auto& grants = s.starting[0].allocation.containers;
  REQUIRE(grants.size() == 1);
  REQUIRE(grants[0].size() == 1);
  CHECK(grants[0][0].device == 0);
  CHECK(grants[0][0].memory_mib == 10240);
  CHECK(grants[0][0].cores == 50);
  // The queue in creation order; model-0's selector is not modelled: left out, named.
  REQUIRE(s.queue.size() == 3);
  CHECK(s.queue[0].request.name == "wide-0");
  CHECK(s.queue[0].request.containers[0].count == 1);
  CHECK(s.queue[0].request.containers[0].memory_mib == 71680);
  CHECK(s.queue[0].request.containers[0].cores == 60);
  CHECK(s.queue[1].request.name == "half-0");
  CHECK(s.queue[2].request.name == "small-0");
  REQUIRE(s.malformed.size() == 1);
  CHECK(s.malformed[0].name == "default/model-0");
  CHECK(s.malformed[0].field == "spec.resourceClaims");
  CHECK(s.malformed[0].detail.find("selector") != std::string::npos);
}

TEST_CASE("DRA snapshot run: first fit per node, the claim's allocation recorded", "[sim][snapshot][dra]") {
  SnapshotRunSpec spec;
  spec.snapshot = kExample;
  const Scenario scenario = snapshot_scenario(spec);
  RunOptions o;
  o.policy = "dra";
  o.queue = scenario.queue;
  const RunResult r = simulate(scenario, o);
  std::map<std::string, const PodRecord*> by_name;
  for (const auto& p : r.pods)
    if (!p.starting) by_name[p.name] = &p;
  REQUIRE(by_name.size() == 3);
  // wide-0 needs 2 CPUs (node-b has 1) and 60 cores (node-a's first card has 50 left): the second card.
  const PodRecord& wide = *by_name.at("default/wide-0");
  CHECK(wide.node == "node-a");
  CHECK(wide.claim_allocation ==
        "{\"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":\"" + kDriver +
            "\",\"pool\":\"node-a\",\"device\":\"hami-gpu-1\",\"consumedCapacity\":{\"cores\":\"60\","
            "\"memory\":\"71680Mi\"}}]},\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":"
            "\"metadata.name\",\"operator\":\"In\",\"values\":[\"node-a\"]}]}]}}");
  // half-0's 50 cores fill the first card's other half: first fit takes it.
  const PodRecord& half = *by_name.at("default/half-0");
  CHECK(half.node == "node-a");
  CHECK(half.claim_allocation.find("\"device\":\"hami-gpu-0\"") != std::string::npos);
  // small-0: the first card has no cores left, the second 10240 MiB (20Gi asked): node-b.
  const PodRecord& small = *by_name.at("default/small-0");
  CHECK(small.node == "node-b");
  CHECK(small.claim_allocation.find("\"pool\":\"node-b\",\"device\":\"hami-gpu-0\"") != std::string::npos);
}

TEST_CASE("DRA snapshot run: other policies record no claim allocation", "[sim][snapshot][dra]") {
  SnapshotRunSpec spec;
  spec.snapshot = kExample;
  const Scenario scenario = snapshot_scenario(spec);
  RunOptions o;
  o.policy = "hami-binpack";
  o.queue = scenario.queue;
  const RunResult r = simulate(scenario, o);
  for (const auto& p : r.pods) CHECK(p.claim_allocation.empty());
}

namespace {
std::string example_text() {
  std::ifstream in(kExample);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

// DRA is the last dialect unit (core/src/dialects/registry.cpp): a node that
// another registration gave cards keeps them, and its slices are not read.
TEST_CASE("DRA snapshot: a node with a Koordinator Device keeps the Device's cards", "[sim][snapshot][dra]") {
  const std::string text = example_text() + R"(- apiVersion: scheduling.koordinator.sh/v1alpha1
  kind: Device
  metadata:
    name: node-b
  spec:
    devices:
    - type: gpu
      id: GPU-k0
      minor: 0
      health: true
      resources: {koordinator.sh/gpu-core: "100", koordinator.sh/gpu-memory: 16Gi, koordinator.sh/gpu-memory-ratio: "100"}
)";
  const ClusterSnapshot s = parse_snapshot(text, "mixed.yaml");
  REQUIRE(s.nodes.size() == 2);
  CHECK(s.nodes[0].cards_from == core::Dialect::Dra);
  REQUIRE(s.nodes[0].devices.size() == 2);
  CHECK(s.nodes[0].devices[0].uuid == kDriver + "/node-a/hami-gpu-0");
  CHECK(s.nodes[1].cards_from == core::Dialect::Koordinator);
  REQUIRE(s.nodes[1].devices.size() == 1);
  CHECK(s.nodes[1].devices[0].uuid == "GPU-k0");
  CHECK(s.nodes[1].devices[0].memory_mib == 16384);
}

// spec.resourceClaims is read with the pod (PodDocument::claims): a pending
// pod whose references break the API's rule is left out, named, as any
// pending pod whose own fields cannot be read; the rest of the dump runs.
TEST_CASE("DRA snapshot: a pending pod naming a claim and a template at once is left out",
          "[sim][snapshot][dra]") {
  const std::string text = example_text() + R"(- apiVersion: v1
  kind: Pod
  metadata:
    name: both-0
    namespace: default
  spec:
    containers:
    - name: main
      resources:
        claims:
        - name: gpu
    resourceClaims:
    - name: gpu
      resourceClaimName: half-0-gpu
      resourceClaimTemplateName: wide
  status:
    phase: Pending
)";
  const ClusterSnapshot s = parse_snapshot(text, "both.yaml");
  REQUIRE(s.malformed.size() == 2);
  std::map<std::string, const MalformedPod*> by_name;
  for (const auto& m : s.malformed) by_name[m.name] = &m;
  REQUIRE(by_name.count("default/both-0") == 1);
  CHECK(by_name.at("default/both-0")->field == "spec.resourceClaims[0]");
  CHECK(by_name.at("default/both-0")->detail ==
        "needs exactly one of resourceClaimName and resourceClaimTemplateName");
  CHECK(by_name.count("default/model-0") == 1);
  CHECK(s.queue.size() == 3);  // wide-0, half-0, small-0 as before
  CHECK(s.running_gpu_pods == 1);
}
