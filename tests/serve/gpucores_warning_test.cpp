// nvidia.com/gpucores above 100 (issue 36 point 3): HAMi v2.10's Fit clamps
// Coresreq to 100 and logs "core limit can't exceed 100"; the allocation it
// writes then holds 100 cores. serve answers the same and says so on stderr
// once per pod, however often the scheduler retries its filter.
#include <catch2/catch.hpp>
#include <iostream>
#include <sstream>

#include "serve_fixture.hpp"

using namespace gpuslice::serve;
using namespace gpuslice::serve::testing;

namespace {

nlohmann::json cores_pod(const std::string& name, const std::string& cores) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", name + "-uid"}}},
          {"spec",
           {{"containers",
             {{{"name", "main"},
               {"resources",
                {{"limits",
                  {{"nvidia.com/gpu", "1"},
                   {"nvidia.com/gpumem", "3000"},
                   {"nvidia.com/gpucores", cores}}}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

ExtenderArgs filter_args(const nlohmann::json& pod) {
  ExtenderArgs a;
  a.pod = pod;
  a.node_names = {"t4-0", "t4-1"};
  return a;
}

// std::cerr's text while `run` runs.
template <typename Run>
std::string stderr_of(Run run) {
  std::ostringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  run();
  std::cerr.rdbuf(old);
  return captured.str();
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a filter of gpucores 150 answers as gpucores 100 and warns once per pod",
          "[serve][state][gpucores]") {
  // t4-0's card is shared already, t4-1's is unused: a whole card's cores fit t4-1 only.
  Fixture over("tests/cli/data/gpucores-snapshot.yaml"), whole("tests/cli/data/gpucores-snapshot.yaml");
  FilterOutcome over_outcome{}, whole_outcome{};
  ExtenderFilterResult over_result, whole_result;
  const std::string said = stderr_of([&] {
    over_result = over.state->filter(filter_args(cores_pod("greedy", "150")), &over_outcome);
    // The scheduler retries a pod's filter: no second line.
    over.state->filter(filter_args(cores_pod("greedy", "150")));
  });
  const std::string said_whole = stderr_of(
      [&] { whole_result = whole.state->filter(filter_args(cores_pod("greedy", "100")), &whole_outcome); });
  CHECK(over_outcome == FilterOutcome::Placed);
  CHECK(over_outcome == whole_outcome);
  REQUIRE(over_result.nodes);
  REQUIRE(whole_result.nodes);
  CHECK(*over_result.nodes == *whole_result.nodes);
  CHECK(*over_result.nodes == std::vector<std::string>{"t4-1"});
  CHECK(over_result.failed == whole_result.failed);
  // HAMi writes the clamped request: 100 cores of the card.
  CHECK(over.writer.pod_annotations("default", "greedy") ==
        whole.writer.pod_annotations("default", "greedy"));
  CHECK(over.writer.pod_annotations("default", "greedy").at("hami.io/vgpu-devices-allocated") ==
        "GPU-t4-1,NVIDIA,3000,100:;");
  CHECK(count_of(said, "gpucores") == 1);
  CHECK_THAT(said, Catch::Contains("gpuslice serve: warning: ExtenderArgs.Pod: pod default/greedy: "
                                   "spec.containers[0].resources.nvidia.com/gpucores 150 is above 100; HAMi "
                                   "treats it as 100 (the whole card's cores: the card exclusively)"));
  CHECK(count_of(said_whole, "gpucores") == 0);
}
