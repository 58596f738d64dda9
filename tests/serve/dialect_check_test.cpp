// serve and the dialects: what it cannot read or write is refused before it
// starts (exit 2 on the CLI), or named on stderr, never answered silently.
#include "gpuslice/serve/dialect_check.hpp"

#include <catch2/catch.hpp>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/serve/memory_cluster.hpp"

using namespace gpuslice;
using Catch::Matchers::Contains;

namespace {
std::string example(const char* name) {
  return std::string(GPUSLICE_SOURCE_DIR) + "/examples/snapshot/" + name;
}

std::string refusal(const std::string& policy, const serve::NodesByDialect* nodes,
                    const std::string& source) {
  try {
    serve::check_servable(policy, nodes, source);
  } catch (const core::InputError& e) {
    return e.what();
  }
  return {};
}
}  // namespace

TEST_CASE("serve refuses a KAI or Koordinator policy, naming what it cannot do", "[serve][dialect]") {
  const std::string kai = refusal("kai-binpack", nullptr, "");
  CHECK_THAT(kai, Contains("--policy"));
  CHECK_THAT(kai, Contains("kai-binpack is kai's policy, which serve cannot serve"));
  CHECK_THAT(kai, Contains("KAI's GPU labels, GPU groups and reservation pods"));
  CHECK_THAT(refusal("kai-spread", nullptr, ""), Contains("kai-spread is kai's policy"));
  const std::string koord = refusal("koordinator-most", nullptr, "");
  CHECK_THAT(koord, Contains("koordinator-most is koordinator's policy, which serve cannot serve"));
  CHECK_THAT(koord, Contains("scheduling.koordinator.sh/device-allocated is not written"));
  CHECK_THAT(refusal("sideways", nullptr, ""), Contains("unknown policy 'sideways'"));
  CHECK_THAT(refusal("dra", nullptr, ""),
             Contains("dra is Kubernetes' DRA allocation, which serve cannot serve"));
}

TEST_CASE("serve takes HAMi's policies and the study's, which read HAMi's requests", "[serve][dialect]") {
  for (const char* policy : {"hami", "hami-binpack", "hami-spread", "fgd", "bestfit"})
    CHECK(serve::check_servable(policy, nullptr, "").empty());
}

TEST_CASE("a KAI snapshot's two GPU nodes register through KAI's labels: serve refuses it",
          "[serve][dialect]") {
  const serve::SnapshotFeed feed(example("kai-cluster.yaml"));
  // kai-1 (4 x T4) and kai-2 (2 x A10) carry nvidia.com/gpu.memory, no HAMi registration.
  REQUIRE(feed.gpu_nodes() == serve::NodesByDialect{{core::Dialect::Kai, 2}});
  const std::string why = refusal("hami", &feed.gpu_nodes(), "kai-cluster.yaml");
  CHECK_THAT(why, Contains("kai-cluster.yaml"));
  CHECK_THAT(why, Contains("no GPU node serve can read: 2 nodes through KAI's GPU labels"));
}

TEST_CASE("a Koordinator snapshot's two GPU nodes register through Devices: serve refuses it",
          "[serve][dialect]") {
  const serve::SnapshotFeed feed(example("koordinator-cluster.yaml"));
  // koord-a and koord-b get their cards from the Device objects of their names.
  REQUIRE(feed.gpu_nodes() == serve::NodesByDialect{{core::Dialect::Koordinator, 2}});
  CHECK_THAT(refusal("fgd", &feed.gpu_nodes(), "koordinator-cluster.yaml"),
             Contains("no GPU node serve can read: 2 nodes through Koordinator's Device objects"));
}

// HAMi-DRA's ResourceSlices give node-a two cards and node-b one (the DRA
// unit registers them); serve reads no slice and no claim, so it refuses.
TEST_CASE("a DRA snapshot's two GPU nodes register through ResourceSlices: serve refuses it",
          "[serve][dialect][dra]") {
  const std::string dump = std::string(GPUSLICE_SOURCE_DIR) + "/examples/dra/hami-dra-cluster.yaml";
  const serve::SnapshotFeed feed(dump);
  REQUIRE(feed.gpu_nodes() == serve::NodesByDialect{{core::Dialect::Dra, 2}});
  const std::string why = refusal("hami", &feed.gpu_nodes(), "hami-dra-cluster.yaml");
  CHECK_THAT(why, Contains("hami-dra-cluster.yaml"));
  CHECK_THAT(why, Contains("no GPU node serve can read: 2 nodes through HAMi-DRA's ResourceSlices"));
  CHECK_THAT(why, Contains("DynamicResources plugin allocates ResourceClaims"));
}

TEST_CASE("a HAMi snapshot is served without a word", "[serve][dialect]") {
  const serve::SnapshotFeed feed(std::string(GPUSLICE_SOURCE_DIR) + "/tests/cli/data/kubectl-cluster.yaml");
  REQUIRE(feed.gpu_nodes().size() == 1);
  CHECK(feed.gpu_nodes().count(core::Dialect::Hami) == 1);
  CHECK(serve::check_servable("hami", &feed.gpu_nodes(), "kubectl-cluster.yaml").empty());
}

TEST_CASE("a mixed fleet is served, the other dialect's nodes named", "[serve][dialect]") {
  const serve::NodesByDialect nodes{{core::Dialect::Hami, 3}, {core::Dialect::Kai, 1}};
  const auto warnings = serve::check_servable("hami", &nodes, "mixed.yaml");
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Contains("mixed.yaml: 1 node registers its GPUs through KAI's GPU labels"));
  CHECK_THAT(warnings[0], Contains("node unregistered"));
}

TEST_CASE("a live node KAI's labels register is named, HAMi's is not", "[serve][dialect]") {
  CHECK_THAT(serve::unserved_node_note("kai-1", core::Dialect::Kai),
             Contains("node kai-1 registers its GPUs through KAI's GPU labels"));
  CHECK(serve::unserved_node_note("gpu-t4-1", core::Dialect::Hami).empty());
}
