// Bad input the codecs used to accept in silence (issue 10): every case here
// was accepted, or crashed, before; each must now be an error naming the
// field, or be read as HAMi reads it.
#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/dialects/hami/registration.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/policy.hpp"

using namespace gpuslice::core;
using Catch::Matchers::Contains;

namespace {
std::string pod_with_limits(const std::string& limits) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n"
         "      limits: {" +
         limits + "}\n";
}
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const CodecError& e) {
    return e.what();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("GPU policy strings are checked once: unknown names, empty chains", "[codec][policy][input]") {
  for (const char* bad : {"spread,foo", "foo,spread", ",", "", "bogus", "binpack, spraed"}) {
    INFO(bad);
    CHECK_FALSE(gpu_policy_problem(bad).empty());
    CHECK_THROWS_AS(check_gpu_policy(bad), std::invalid_argument);
  }
  for (const char* good :
       {"spread", "binpack", "numa", "mutex", "topology-aware", "numa, binpack", "spread,"})
    CHECK(gpu_policy_problem(good).empty());
  // The registry refuses a run whose GPU policy is bogus, whatever the front end.
  PolicyArgs args;
  args.gpu_policy = "bogus";
  CHECK_THROWS_WITH(make_policy("hami", args), Contains("unknown GPU policy 'bogus'"));
  CHECK_THAT(policy_name_problem("nope"), Contains("unknown policy 'nope'"));
  CHECK(policy_name_problem("hami-binpack").empty());
  // The annotation form reports through the same check.
  const std::string pod =
      "kind: Pod\nmetadata:\n  name: p\n  annotations: {hami.io/gpu-scheduler-policy: 'spread,foo'}\n"
      "spec: {containers: [{name: c}]}\n";
  CHECK_THAT(error_of([&] { codec::parse_pods(pod, "p.yaml"); }), Contains("unknown GPU policy 'foo'"));
}

TEST_CASE("gpumem is read as HAMi reads it, and misread quantities are refused with the unit",
          "[codec][manifest][input]") {
  auto mem = [](const std::string& v) {
    return codec::parse_pods(pod_with_limits("nvidia.com/gpu: 1, nvidia.com/gpumem: " + v), "p.yaml")
        .at(0)
        .request.containers.at(0)
        .memory_mib;
  };
  CHECK(mem("4000") == 4000);
  CHECK(mem("'4k'") == 4000);  // Quantity.AsInt64 reads 4k as 4000
  CHECK(mem("4e3") == 4000);
  // 4000m: AsInt64 fails and HAMi falls back to the whole card; refused, saying gpumem's unit.
  CHECK_THAT(error_of([&] { mem("4000m"); }), Contains("gpumem counts MiB"));
  CHECK_THAT(error_of([&] { mem("4000m"); }), Contains("p.yaml:"));
  CHECK_THAT(error_of([&] { mem("4Gi"); }), Contains("4294967296 MiB"));
  CHECK_THAT(error_of([&] { mem("-4000"); }), Contains("negative"));
  CHECK_THAT(error_of([&] { mem("4000.0"); }), Contains("gpumem counts MiB"));
}

TEST_CASE("a typo in a HAMi resource name is refused naming the field", "[codec][manifest][input]") {
  const auto what =
      error_of([] { codec::parse_pods(pod_with_limits("nvidia.com/gpumemory: 4000"), "p.yaml"); });
  CHECK_THAT(what, Contains("spec.containers[0].resources.limits.nvidia.com/gpumemory"));
  CHECK_THAT(what, Contains("unknown resource"));
  // Other device plugins' resources (time-slicing's renamed one) are not HAMi's business.
  CHECK_NOTHROW(codec::parse_pods(pod_with_limits("nvidia.com/gpu.shared: 1"), "p.yaml"));
}

TEST_CASE("duplicate YAML keys are refused with both lines", "[codec][yaml][input]") {
  const std::string node = "kind: Node\nmetadata:\n  name: n\n  name: m\n";
  const auto what = error_of([&] { codec::parse_nodes(node, "n.yaml"); });
  CHECK_THAT(what, Contains("n.yaml:4: name: duplicate key (first at line 3)"));
  const std::string pod = pod_with_limits("nvidia.com/gpu: 1, nvidia.com/gpu: 2");
  CHECK_THAT(error_of([&] { codec::parse_pods(pod, "p.yaml"); }), Contains("duplicate key"));
}

TEST_CASE("an alias bomb is refused, not expanded", "[codec][yaml][input]") {
  std::string text = "a: &a [x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'k'; ++c) {
    const std::string ref = std::string("*") + prev;
    text += std::string(1, c) + ": &" + c + " [" + ref;
    for (int i = 0; i < 7; ++i) text += ", " + ref;
    text += "]\n";
    prev = c;
  }
  CHECK_THAT(error_of([&] { codec::parse_nodes(text, "bomb.yaml"); }), Contains("too many nodes"));
}

TEST_CASE("registrations without id or type, or listing nothing, are refused",
          "[codec][registration][input]") {
  CHECK_THAT(error_of([] { codec::decode_registration(R"([{"id":"","type":"NVIDIA-T4","count":1}])"); }),
             Contains("non-empty id"));
  CHECK_THAT(error_of([] { codec::decode_registration(R"([{"id":"GPU-a","type":"","count":1}])"); }),
             Contains("non-empty type"));
  CHECK_THAT(error_of([] { codec::decode_registration(R"([{"type":"NVIDIA-T4","count":1}])"); }),
             Contains("non-empty id"));
  CHECK_THAT(error_of([] { codec::decode_registration(R"([{"id":"GPU-a","count":1}])"); }),
             Contains("non-empty type"));
  CHECK_THAT(error_of([] { codec::decode_registration(":::"); }), Contains("lists no device"));
  CHECK_THAT(error_of([] { codec::decode_registration(",10,15360,100,NVIDIA-T4,0,true:"); }),
             Contains("non-empty id"));
  CHECK_THAT(error_of([] { codec::decode_registration(R"([{"id":"GPU,a","type":"NVIDIA-T4"}])"); }),
             Contains("separators"));
  // HAMi's own encoding of an unhealthy card has no "health" (omitempty): still read, as unhealthy.
  const auto devs = codec::decode_registration(R"([{"id":"GPU-a","type":"NVIDIA-T4","count":1}])");
  REQUIRE(devs.size() == 1);
  CHECK_FALSE(devs[0].healthy);
}

TEST_CASE("allocation entries have exactly four fields", "[codec][allocation][input]") {
  CHECK_THROWS_AS(codec::decode_allocation_text("GPU-a,NVIDIA,100,0,extra:;"), CodecError);
  CHECK(codec::decode_allocation_text("GPU-a,NVIDIA,100,0:;").at(0).size() == 1);
}

TEST_CASE("nodes: negative allocatable and names with separators are refused", "[codec][manifest][input]") {
  CHECK_THAT(error_of([] {
               codec::parse_nodes("kind: Node\nmetadata: {name: n}\nstatus:\n  allocatable: {cpu: '-4'}\n",
                                  "n.yaml");
             }),
             Contains("status.allocatable.cpu: must not be negative"));
  CHECK_THAT(error_of([] { codec::parse_nodes("kind: Node\nmetadata: {name: 'a,b'}\n", "n.yaml"); }),
             Contains("metadata.name"));
}

TEST_CASE("a pod's status.phase is read, and Succeeded/Failed are terminated", "[codec][manifest][input]") {
  auto phase_of = [](const std::string& phase) {
    return codec::parse_pods(
               "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\nstatus: {phase: " + phase +
                   "}\n",
               "p.yaml")
        .at(0);
  };
  CHECK(phase_of("Succeeded").terminated());
  CHECK(phase_of("Failed").terminated());
  CHECK_FALSE(phase_of("Running").terminated());
  CHECK_FALSE(phase_of("Pending").terminated());
}

TEST_CASE("a MIG grant counts on its card, as HAMi strips the instance suffix",
          "[codec][allocation][input]") {
  Node node;
  node.name = "n";
  Device d;
  d.uuid = "GPU-a";
  node.devices.push_back(d);
  const auto alloc =
      codec::resolve_allocation(codec::decode_allocation_text("GPU-a[1g.10gb-0],NVIDIA,100,0:;"), node, 0);
  REQUIRE(alloc.containers.at(0).size() == 1);
  CHECK(alloc.containers[0][0].device == 0);
}
