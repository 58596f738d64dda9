// `kubectl get nodes,pods -A -o yaml` (and -o json) output, given as both the
// nodes and the placed pods, read as HAMi's scheduler reads its caches
// (pkg/scheduler/scheduler.go): ordinary pods (coredns, the device plugin)
// are not HAMi's, a Succeeded pod holds nothing (IsPodInTerminatedState), a
// grant on a card no longer registered counts nothing.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/place.hpp"
#include "source_file.hpp"

using namespace gpuslice::core;
using Catch::Matchers::Contains;

namespace {
TextInput file(const std::string& rel) { return testing::source_file(rel); }
}  // namespace

TEST_CASE("a kubectl dump works as both --nodes and --existing", "[place][kubectl]") {
  for (const char* dump : {"tests/cli/data/kubectl-cluster.yaml", "tests/cli/data/kubectl-cluster.json"}) {
    INFO(dump);
    PlaceRequest req;
    req.nodes = file(dump);
    req.existing = file(dump);
    req.pod = file("tests/cli/data/kubectl-pod-9000.yaml");
    const auto out = place(req);
    REQUIRE(out.cluster.size() == 2);  // control-1 (no GPU) and gpu-t4-1
    // 15360 MiB, 4000 held by notebook-alice; the Succeeded pod's 10000 MiB is
    // free again and the retired card's 3000 MiB are on no registered card.
    REQUIRE(out.decision.placed());
    CHECK(out.cluster.node(*out.decision.node).name == "gpu-t4-1");
    const auto use = out.cluster.usage(*out.cluster.find("gpu-t4-1"));
    CHECK(use[0].memory_mib == 4000);
    CHECK(use[0].slots == 1);
    CHECK(use[0].cores == 30);
    // coredns is not HAMi's, but kube-scheduler counts its requests on control-1.
    const auto& control = out.cluster.host_used(*out.cluster.find("control-1"));
    CHECK(control.cpu_milli == 100);
    CHECK(control.memory_mib == 70);
    REQUIRE(out.warnings.size() == 1);
    CHECK_THAT(out.warnings[0], Contains("GPU-0a1b2c3d-retired-card"));
    CHECK_THAT(out.warnings[0], Contains("lab/old-notebook-carol"));
  }
}

TEST_CASE("the same pod listed twice is refused naming it", "[place][kubectl]") {
  const TextInput dump = file("tests/cli/data/kubectl-cluster.yaml");
  PlaceRequest req;
  req.nodes = dump;
  req.existing =
      TextInput{dump.text + "---\n" + file("tests/cli/data/placed-alice-again.yaml").text, "twice.yaml"};
  req.pod = file("tests/cli/data/kubectl-pod-9000.yaml");
  try {
    place(req);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(std::string(e.what()), Contains("pod 'lab/notebook-alice' is listed twice"));
  }
}

TEST_CASE("a refusal says how far the best card is", "[place][input]") {
  PlaceRequest req;
  req.nodes = file("examples/place/t4-node.yaml");
  req.pod = file("examples/place/oversized-pod.yaml");
  const auto out = place(req);
  REQUIRE_FALSE(out.decision.placed());
  CHECK_THAT(out.shortfall, Contains("the best card"));
  CHECK_THAT(out.shortfall, Contains("15360 MiB"));
  CHECK_THAT(to_text(out), Contains(out.shortfall));
}

TEST_CASE("invalid --gpu-policy values are refused, not run as spread", "[place][input]") {
  for (const char* bad : {"spread,foo", "foo,spread", ","}) {
    INFO(bad);
    PlaceRequest req;
    req.nodes = file("examples/place/t4-node.yaml");
    req.pod = file("examples/place/gpumem-pod-a.yaml");
    req.gpu_policy = bad;
    CHECK_THROWS_AS(place(req), InputError);
  }
}

TEST_CASE("place numbers cards by position when the registration gives no index", "[place][input]") {
  PlaceRequest req;
  req.nodes = {R"(kind: Node
metadata:
  name: two-cards
  annotations:
    hami.io/node-nvidia-register: '[{"id":"GPU-a","count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","health":true},{"id":"GPU-b","count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","health":true}]'
)",
               "nodes.yaml"};
  req.pod = {
      "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: app\n    resources:\n"
      "      limits: {nvidia.com/gpu: 2, nvidia.com/gpumem: 1000}\n",
      "pod.yaml"};
  const std::string text = to_text(place(req));
  CHECK_THAT(text, Contains("card 0 GPU-a"));
  CHECK_THAT(text, Contains("card 1 GPU-b"));  // was "card 0" for both
}

TEST_CASE("a multi-card refusal says how many cards one node offers at most", "[place][input]") {
  // Two nodes of two 16 GiB cards each: four cards with room in the fleet,
  // but never four on one node.
  std::string nodes;
  for (const char* name : {"pair-a", "pair-b"})
    nodes += fmt::format(
        "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: {0}\n  annotations:\n"
        "    hami.io/node-nvidia-register: "
        "'[{{\"id\":\"GPU-{0}-0\",\"count\":4,\"devmem\":16384,\"devcore\":100,"
        "\"type\":\"NVIDIA-Tesla T4\",\"health\":true}},{{\"id\":\"GPU-{0}-1\",\"count\":4,\"devmem\":16384,"
        "\"devcore\":100,\"type\":\"NVIDIA-Tesla T4\",\"health\":true}}]'\n",
        name);
  PlaceRequest req;
  req.nodes = {nodes, "pairs.yaml"};
  req.pod = {
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: four\nspec:\n  containers:\n  - name: app\n"
      "    resources:\n      limits:\n        nvidia.com/gpu: 4\n        nvidia.com/gpumem: 8000\n",
      "four.yaml"};
  const auto out = place(req);
  REQUIRE_FALSE(out.decision.placed());
  CHECK_THAT(out.shortfall, Contains("no node has 4 cards with room for it (at most 2, on node pair-a)"));
}
