// Conformance cases as data (tests/core/data/*.yaml, format in README.md):
// a fleet, usage already on it, a pod, and what HAMi decides.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "gpuslice/core/model.hpp"

namespace gpuslice::testing {

struct CaseFile {
  std::string path;
  std::vector<YAML::Node> cases;
};

CaseFile load_cases(const std::string& file_name);
// Runs one case and checks every expectation it states (Catch2 assertions).
void run_case(const YAML::Node& c);

// A case's node (name, cards) and its pod shorthand as a Pod manifest, for
// front ends that take manifests (the extender's equivalence test).
core::Node build_node(const YAML::Node& spec);
std::string pod_manifest(const YAML::Node& pod);

}  // namespace gpuslice::testing
