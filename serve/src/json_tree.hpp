// The API's JSON objects as yaml-cpp trees, for the core's manifest codec:
// converting the tree costs a fraction of dumping it and scanning the text.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>

namespace gpuslice::serve {

// Strings, numbers and booleans become scalars (numbers as JSON writes
// them), null a null node; objects and arrays keep their order. Deeper
// than 256 levels (no Kubernetes object is) throws core::InputError naming
// `source`: the conversion recurses.
YAML::Node yaml_tree(const nlohmann::json& value, const std::string& source);

}  // namespace gpuslice::serve
