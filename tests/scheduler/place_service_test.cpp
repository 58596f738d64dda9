// gpuslice place's service on the bundled examples (the seed lab manifests).
#include <catch2/catch.hpp>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/place.hpp"
#include "source_file.hpp"

using namespace gpuslice::core;

namespace {
TextInput file(const std::string& rel) { return testing::source_file(rel); }
}  // namespace

TEST_CASE("third 4000 MiB slice on the lab T4 fits with HAMi's event text", "[place][seed]") {
  PlaceRequest req;
  req.nodes = file("examples/place/t4-node.yaml");
  req.pod = file("examples/place/gpumem-pod-a.yaml");
  req.existing = file("examples/place/two-placed.yaml");
  auto out = place(req);
  REQUIRE(out.decision.placed());
  auto j = to_json(out);
  CHECK(j["node"] == "hami-workshop");
  CHECK(j["allocation"] == "GPU-859b872c-0ba2-97b0-10b4-8b7185c55039,NVIDIA,4000,0:;");
  REQUIRE(j["events"].size() == 1);
  CHECK(j["events"][0]["reason"] == "FilteringSucceed");
  CHECK(j["events"][0]["message"] ==
        "find fit node(hami-workshop), 0 nodes not fit, 1 nodes fit(hami-workshop:7.21)");
}

TEST_CASE("bad input names file, line and field", "[place][errors]") {
  PlaceRequest req;
  req.nodes = {
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations:\n"
      "    hami.io/node-nvidia-register: 'GPU-0,ten,1000,100,T4,0,true:'\n",
      "nodes.yaml"};
  req.pod = file("examples/place/gpumem-pod-a.yaml");
  try {
    place(req);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "nodes.yaml");
    CHECK(e.line() == 6);
    CHECK(e.field() == "metadata.annotations.hami.io/node-nvidia-register");
    CHECK_THAT(e.what(), Catch::Contains("count"));
  }
  req.nodes = file("examples/place/t4-node.yaml");
  req.pod = {
      "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    resources:\n      limits:\n"
      "        nvidia.com/gpumem: \"1.5\"\n",
      "pod.yaml"};
  try {
    place(req);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.line() == 8);
    CHECK(e.field() == "spec.containers[0].resources.nvidia.com/gpumem");
  }
}
