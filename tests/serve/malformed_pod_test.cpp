// A pod whose request cannot be read (issue 36 point 4): HAMi leaves that one
// pod Pending and schedules the rest. serve answers that pod's filter with
// an error naming the field and changes nothing else; such a pod in the feed
// is left out (a line on stderr) and the rest is served.
#include <catch2/catch.hpp>

#include "serve_fixture.hpp"

using namespace gpuslice::serve;
using namespace gpuslice::serve::testing;

namespace {

nlohmann::json pod_json(const std::string& name, const std::string& uid, const std::string& gpumem,
                        const std::string& node = "") {
  nlohmann::json p = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", uid}}},
      {"spec",
       {{"containers",
         {{{"name", "main"},
           {"resources",
            {{"limits",
              {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem", gpumem}, {"nvidia.com/gpucores", "30"}}}}}}}}}},
      {"status", {{"phase", node.empty() ? "Pending" : "Running"}}}};
  if (!node.empty()) p["spec"]["nodeName"] = node;
  return p;
}

ExtenderArgs filter_args(const nlohmann::json& pod) {
  ExtenderArgs a;
  a.pod = pod;
  a.node_names = {"control-1", "gpu-t4-1"};
  return a;
}

}  // namespace

TEST_CASE("a malformed pod's filter answers an error naming the field and changes nothing",
          "[serve][state][malformed]") {
  Fixture f;
  const int64_t base = f.memory_used(kT4);
  const size_t events = f.writer.events().size();
  FilterOutcome outcome{};
  const auto bad = f.state->filter(filter_args(pod_json("broken-0", "b0", "lots")), &outcome);
  CHECK(outcome == FilterOutcome::Error);
  CHECK_THAT(bad.error, Catch::Contains("nvidia.com/gpumem"));
  CHECK_FALSE(bad.nodes);
  CHECK(bad.failed.empty());
  // Nothing reserved, held, patched or recorded.
  CHECK(f.state->reservation_count() == 0);
  CHECK(f.memory_used(kT4) == base);
  CHECK(f.writer.pod_annotations("default", "broken-0").empty());
  CHECK(f.writer.events().size() == events);
  // The next pod is answered as if the malformed one had never come.
  Fixture clean;
  FilterOutcome with{}, without{};
  const auto after = f.state->filter(filter_args(pod_json("good-0", "g0", "3000")), &with);
  const auto alone = clean.state->filter(filter_args(pod_json("good-0", "g0", "3000")), &without);
  CHECK(with == FilterOutcome::Placed);
  CHECK(with == without);
  REQUIRE(after.nodes);
  REQUIRE(alone.nodes);
  CHECK(*after.nodes == *alone.nodes);
  CHECK(f.writer.pod_annotations("default", "good-0") == clean.writer.pod_annotations("default", "good-0"));
  CHECK(f.memory_used(kT4) == clean.memory_used(kT4));
}

TEST_CASE("a malformed pod in the feed is left out and the rest is served", "[serve][state][malformed]") {
  Fixture f;
  const auto nodes = nlohmann::json::parse(repo_file("tests/cli/data/kubectl-cluster.json"))["items"];
  std::vector<nlohmann::json> node_objects, pod_objects;
  for (const auto& o : nodes) (o["kind"] == "Node" ? node_objects : pod_objects).push_back(o);
  // A pending pod with a malformed request and one bound pod holding 4000 MiB of the T4.
  pod_objects.push_back(pod_json("broken-1", "b1", "lots"));
  auto bound = pod_json("holder-1", "h1", "4000", "gpu-t4-1");
  bound["metadata"]["annotations"] = {
      {"hami.io/vgpu-devices-allocated", std::string(kT4) + ",NVIDIA,4000,30:;"},
      {"hami.io/vgpu-node", "gpu-t4-1"},
      {"hami.io/bind-phase", "success"}};
  pod_objects.push_back(bound);
  Fixture reference;
  std::vector<nlohmann::json> without_broken(pod_objects.begin(), pod_objects.end());
  without_broken.erase(without_broken.end() - 2);
  reference.state->replace_all(node_objects, without_broken);
  f.state->replace_all(node_objects, pod_objects);
  CHECK(f.state->ready());
  // The bound pod is counted (4000 MiB more than the dump alone); the
  // malformed one holds nothing.
  Fixture dump_only;
  dump_only.state->replace_all(node_objects,
                               std::vector<nlohmann::json>(pod_objects.begin(), pod_objects.end() - 2));
  CHECK(reference.memory_used(kT4) == dump_only.memory_used(kT4) + 4000);
  CHECK(f.memory_used(kT4) == reference.memory_used(kT4));
  FilterOutcome outcome{};
  const auto r = f.state->filter(filter_args(pod_json("good-1", "g1", "3000")), &outcome);
  CHECK(outcome == FilterOutcome::Placed);
  REQUIRE(r.nodes);
  CHECK(*r.nodes == std::vector<std::string>{"gpu-t4-1"});
}
