#include "json_tree.hpp"

#include "gpuslice/core/errors.hpp"

namespace gpuslice::serve {

namespace {

constexpr int kMaxDepth = 256;

YAML::Node convert(const nlohmann::json& value, const std::string& source, int depth) {
  if (depth > kMaxDepth)
    throw core::InputError(source, 0, "", "nested deeper than 256 levels; no Kubernetes object is");
  switch (value.type()) {
    case nlohmann::json::value_t::object: {
      YAML::Node map(YAML::NodeType::Map);
      for (auto it = value.begin(); it != value.end(); ++it)
        map.force_insert(it.key(), convert(it.value(), source, depth + 1));
      return map;
    }
    case nlohmann::json::value_t::array: {
      YAML::Node seq(YAML::NodeType::Sequence);
      for (const auto& item : value) seq.push_back(convert(item, source, depth + 1));
      return seq;
    }
    case nlohmann::json::value_t::string:
      return YAML::Node(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      return YAML::Node(YAML::NodeType::Null);
    default:  // numbers and booleans, as JSON writes them
      return YAML::Node(value.dump());
  }
}

}  // namespace

YAML::Node yaml_tree(const nlohmann::json& value, const std::string& source) {
  return convert(value, source, 0);
}

}  // namespace gpuslice::serve
