// Malformed YAML must end in an InputError, never a hang: yaml-cpp 0.7's
// LoadAll loops forever on these (see codec/yaml_documents.hpp).
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/errors.hpp"

using namespace gpuslice::core;

TEST_CASE("a lone comma is a YAML syntax error naming the file, not a hang", "[codec][manifest]") {
  try {
    codec::parse_nodes(",\n", "nodes.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("nodes.yaml:") == 0);
    CHECK(what.find("YAML syntax error") != std::string::npos);
  }
}

TEST_CASE("the fuzzer's runaway manifest is refused", "[codec][manifest]") {
  std::ifstream f(std::string(GPUSLICE_TEST_DATA) + "/malformed/yaml-cpp-runaway.yaml");
  REQUIRE(f);
  std::stringstream text;
  text << f.rdbuf();
  CHECK_THROWS_AS(codec::parse_pods(text.str(), "pod.yaml"), InputError);
  CHECK_THROWS_AS(codec::parse_nodes(text.str(), "nodes.yaml"), InputError);
}

TEST_CASE("well-formed multi-document streams still load every document", "[codec][manifest]") {
  const std::string two = R"(apiVersion: v1
kind: Pod
metadata: {name: a}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec: {containers: [{name: c}]}
---
)";
  CHECK(codec::parse_pods(two, "pods.yaml").size() == 2);
}
