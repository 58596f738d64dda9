// The dialects as units: the registry's order and lookups, each unit's
// policies and traits, and what a placed pod holds (one function for
// place, serve and the simulator's snapshots).
#include <catch2/catch.hpp>

#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/placed_pods.hpp"
#include "gpuslice/core/policy.hpp"

using namespace gpuslice::core;

// DRA joined as the fourth unit (issue 38), last: its cards are only for
// nodes no other registration gave any.
TEST_CASE("the registry lists HAMi, Koordinator, KAI and DRA in the order readers ask them", "[dialect]") {
  std::vector<std::string_view> names;
  for (const dialects::DialectUnit* u : dialects::all()) names.push_back(u->name());
  CHECK(names == std::vector<std::string_view>{"hami", "koordinator", "kai", "dra"});
  CHECK(dialects::unit(Dialect::Dra).name() == "dra");
  CHECK(dialect_name(Dialect::Dra) == "dra");
  CHECK(dialects::unit(Dialect::Kai).name() == "kai");
  CHECK(dialects::unit(Dialect::Koordinator).id() == Dialect::Koordinator);
  REQUIRE(dialects::find("hami") != nullptr);
  CHECK(dialects::find("hami")->id() == Dialect::Hami);
  CHECK(dialects::find("volcano") == nullptr);
  CHECK(dialect_name(Dialect::Koordinator) == "koordinator");
  CHECK(dialect_name(Dialect::Hami) == "hami");
}

TEST_CASE("each dialect's policies say that dialect", "[dialect]") {
  for (const auto& [policy, dialect] : std::vector<std::pair<std::string, Dialect>>{
           {"hami", Dialect::Hami},
           {"hami-spread", Dialect::Hami},
           {"fgd", Dialect::Hami},  // the study's read HAMi's requests
           {"koordinator", Dialect::Koordinator},
           {"koordinator-most-fixed", Dialect::Koordinator},
           {"kai-binpack", Dialect::Kai},
           {"kai-spread", Dialect::Kai}}) {
    INFO(policy);
    CHECK(make_policy(policy)->dialect() == dialect);
  }
}

TEST_CASE("only HAMi's cards count slots, speak HAMi's quotas and are served", "[dialect]") {
  CHECK(dialects::unit(Dialect::Hami).counts_slots());
  CHECK_FALSE(dialects::unit(Dialect::Koordinator).counts_slots());
  CHECK_FALSE(dialects::unit(Dialect::Kai).counts_slots());
  CHECK(dialects::unit(Dialect::Hami).hami_quotas());
  CHECK_FALSE(dialects::unit(Dialect::Kai).hami_quotas());
  CHECK(dialects::unit(Dialect::Hami).serve_problem().empty());
  CHECK_FALSE(dialects::unit(Dialect::Koordinator).serve_problem().empty());
  CHECK_FALSE(dialects::unit(Dialect::Kai).serve_problem().empty());
}

TEST_CASE("what a placed pod holds: its grants with its host, its host alone, or nothing", "[dialect]") {
  const HostResources host{2000, 4096};
  PodAllocation grants;
  grants.containers = {{DeviceGrant{1, 3000, 30, kRatioFromMemory, 0}}};
  PlacedPod p;
  p.node = 3;
  p.allocation = grants;
  for (PlacedRole role : {PlacedRole::Hami, PlacedRole::Koordinator, PlacedRole::Kai, PlacedRole::Dra}) {
    p.role = role;
    const auto h = holding_of(p, host);
    REQUIRE(h);
    CHECK(h->node == 3);
    CHECK(h->host == host);
    REQUIRE(h->allocation.containers.size() == 1);
    CHECK(h->allocation.containers[0][0].memory_mib == 3000);
  }
  // Bound without grants, and KAI's reservation pod: CPU and memory only.
  for (PlacedRole role : {PlacedRole::BoundOnly, PlacedRole::KaiReservation}) {
    p.role = role;
    const auto h = holding_of(p, host);
    REQUIRE(h);
    CHECK(h->node == 3);
    CHECK(h->host == host);
    CHECK(h->allocation.empty());
  }
  for (PlacedRole role :
       {PlacedRole::Terminated, PlacedRole::Unplaced, PlacedRole::UnknownNode, PlacedRole::SameUid}) {
    p.role = role;
    CHECK_FALSE(holding_of(p, host));
  }
}

// `dra` places HAMi's requests and writes HAMi's annotations under `place`
// (its dialect() is HAMi's); the DRA unit brings it and reads the fleet.
TEST_CASE("the DRA unit brings the dra policy, whose dialect stays HAMi's", "[dialect][dra]") {
  CHECK(make_policy("dra")->dialect() == Dialect::Hami);
  const dialects::DialectUnit& dra = dialects::unit(Dialect::Dra);
  CHECK(dra.registers_by() == "HAMi-DRA's ResourceSlices");
  CHECK_FALSE(dra.counts_slots());  // a shared device takes any number of claims
  CHECK_FALSE(dra.hami_quotas());
  CHECK_FALSE(dra.serve_problem().empty());
}

// place reads no claim, so a DRA pod's devices would count as free there:
// its nodes take no cards from the slices (the snapshot reader gives them).
TEST_CASE("place's node reading leaves DRA's ResourceSlices out", "[dialect][dra]") {
  const std::string path = std::string(GPUSLICE_TEST_DATA) + "/../../../examples/dra/hami-dra-cluster.yaml";
  const auto nodes = codec::parse_nodes(codec::read_text_file(path), path);
  REQUIRE(nodes.size() == 2);
  for (const auto& n : nodes) {
    CHECK(n.node.devices.empty());
    CHECK(n.node.cards_from == Dialect::Hami);
  }
}
