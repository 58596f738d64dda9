// Koordinator's and KAI's conformance cases as data (tests/core/data/
// koordinator.yaml, kai.yaml): a fleet in the dialect's own objects,
// running pods, a pod, and what that scheduler decides.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace gpuslice::testing {

struct DialectCaseFile {
  std::string path;
  std::string policy;  // the file's default policy
  std::vector<YAML::Node> cases;
};

DialectCaseFile load_dialect_cases(const std::string& file_name);
// Places one case through core::place and checks every expectation it states.
void run_dialect_case(const DialectCaseFile& file, const YAML::Node& c);

}  // namespace gpuslice::testing
