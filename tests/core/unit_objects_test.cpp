// The generic extension points a dialect with Kubernetes objects and a
// holding of its own uses (issue 38): declared kinds and the unit's box,
// the reading of nodes alone, the unit each policy belongs to, and the
// binding a run records beside the allocation. DRA is the unit using them.
#include <catch2/catch.hpp>

#include "gpuslice/core/codec/kube_reader.hpp"
#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/placed_pods.hpp"
#include "gpuslice/core/policy.hpp"

using namespace gpuslice::core;

namespace {

const std::string kDraCluster =
    std::string(GPUSLICE_TEST_DATA) + "/../../../examples/dra/hami-dra-cluster.yaml";

struct Read {
  std::vector<codec::NodeDocument> nodes;
  size_t taken = 0, offered = 0;  // objects besides Nodes and Pods
};

// The dump read as the snapshot reads it (one pass, objects to NodeObjects).
Read read_into(dialects::NodeObjects& objects) {
  Read r;
  codec::read_kube_objects(codec::KubeText::from_file(kDraCluster),
                           [&](codec::KubeObject&& object, const codec::ReadContext& context) {
                             if (const auto* node = std::get_if<codec::NodeObject>(&object)) {
                               r.nodes.push_back(codec::node_document(*node, context));
                             } else if (!std::holds_alternative<codec::PodObject>(object)) {
                               ++r.offered;
                               if (objects.take(object, context)) ++r.taken;
                             }
                           });
  return r;
}

}  // namespace

TEST_CASE("DRA declares the four resource.k8s.io kinds, any version, and only those", "[dialect][dra]") {
  const size_t dra = 3;  // registry position: hami, koordinator, kai, dra
  for (std::string_view kind : {"ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate"}) {
    CHECK(dialects::keeper_of("resource.k8s.io", kind) == dra);
    CHECK(dialects::keeper_of(dialects::api_group("resource.k8s.io/v1beta1"), kind) == dra);
  }
  CHECK_FALSE(dialects::keeper_of("resource.k8s.io", "Pod"));
  CHECK_FALSE(dialects::keeper_of("v1", "ResourceSlice"));                  // the core group has none
  CHECK_FALSE(dialects::keeper_of("scheduling.koordinator.sh", "Device"));  // decoded by the reader itself
  CHECK(dialects::api_group("resource.k8s.io/v1") == "resource.k8s.io");
  CHECK(dialects::api_group("v1") == "v1");  // as the reader tells kinds: the whole apiVersion
}

// examples/dra/hami-dra-cluster.yaml: 1 DeviceClass, 2 ResourceSlices (node-a
// two devices, node-b one), 3 ResourceClaims, 2 templates.
TEST_CASE("a reading with pods keeps DRA's objects in its box and gives its nodes cards", "[dialect][dra]") {
  dialects::NodeObjects objects;
  Read r = read_into(objects);
  CHECK(r.offered == 8);
  CHECK(r.taken == 8);
  CHECK(objects.of<dialects::UnitObjects>(Dialect::Dra) != nullptr);
  CHECK(objects.of<dialects::UnitObjects>(Dialect::Hami) == nullptr);  // keeps no kind of its own
  std::vector<std::string> warnings;
  dialects::register_nodes(r.nodes, objects, kDraCluster, warnings);
  REQUIRE(r.nodes.size() == 2);
  CHECK(r.nodes[0].node.cards_from == Dialect::Dra);
  CHECK(r.nodes[0].node.devices.size() == 2);
  CHECK(r.nodes[1].node.cards_from == Dialect::Dra);
  CHECK(r.nodes[1].node.devices.size() == 1);
}

TEST_CASE("a reading of nodes alone keeps none of a unit's objects its pods hold through", "[dialect][dra]") {
  CHECK(dialects::unit(Dialect::Dra).holds_through_objects());
  CHECK_FALSE(dialects::unit(Dialect::Koordinator).holds_through_objects());
  dialects::NodeObjects objects(dialects::NodeObjects::Reading::NodesOnly);
  Read r = read_into(objects);
  CHECK(r.offered == 8);
  CHECK(r.taken == 0);
  CHECK(objects.of<dialects::UnitObjects>(Dialect::Dra) == nullptr);
  std::vector<std::string> warnings;
  dialects::register_nodes(r.nodes, objects, kDraCluster, warnings);
  for (const auto& n : r.nodes) CHECK(n.node.devices.empty());
}

TEST_CASE("a policy belongs to the unit that registered it, the study's to none", "[dialect]") {
  CHECK(dialects::policy_unit("dra") == &dialects::unit(Dialect::Dra));
  CHECK(dialects::policy_unit("hami-binpack") == &dialects::unit(Dialect::Hami));
  CHECK(dialects::policy_unit("kai-spread") == &dialects::unit(Dialect::Kai));
  CHECK(dialects::policy_unit("koordinator-most") == &dialects::unit(Dialect::Koordinator));
  CHECK(dialects::policy_unit("fgd") == nullptr);
  CHECK(dialects::policy_unit("no-such-policy") == nullptr);
  CHECK(dialects::unit(Dialect::Kai).policies_are() == "kai's policy");
  CHECK(dialects::unit(Dialect::Dra).policies_are() == "Kubernetes' DRA allocation");
}

// Only a policy placing another dialect's requests records its unit's
// binding: dra (DRA's, placing HAMi's requests) writes claim_allocation.
TEST_CASE("a run records its unit's binding only for a policy placing another dialect's requests",
          "[dialect][dra]") {
  CHECK(dialects::binding_recorded_by("dra") == &dialects::unit(Dialect::Dra));
  for (const std::string& p : policy_names())
    if (p != "dra") CHECK(dialects::binding_recorded_by(p) == nullptr);
  CHECK(dialects::binding_recorded_by("nope") == nullptr);
}

TEST_CASE("the generic holding role holds like any grants", "[dialect]") {
  PlacedPod p;
  p.role = PlacedRole::UnitHeld;
  p.node = 1;
  p.allocation.containers = {{DeviceGrant{0, 1000, 10, kRatioFromMemory, 0}}};
  CHECK(p.holds());
  CHECK(PlacedRole::Dra == PlacedRole::UnitHeld);
  const auto h = holding_of(p, HostResources{500, 1024});
  REQUIRE(h);
  CHECK(h->allocation.containers[0][0].memory_mib == 1000);
}
