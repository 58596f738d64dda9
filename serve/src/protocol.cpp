#include "gpuslice/serve/protocol.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <unordered_set>

namespace gpuslice::serve {

namespace {

bool same_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

nlohmann::json parse_object(std::string_view body, const char* what) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw ProtocolError(fmt::format("{}: body is not valid JSON", what));
  if (!j.is_object()) throw ProtocolError(fmt::format("{}: body is not a JSON object", what));
  return j;
}

std::string string_field(const nlohmann::json& object, std::string_view name, const char* what,
                         bool required) {
  const nlohmann::json* v = field(object, name);
  if (!v || v->is_null()) {
    if (required) throw ProtocolError(fmt::format("{}: {} is missing", what, name));
    return {};
  }
  if (!v->is_string()) throw ProtocolError(fmt::format("{}: {} is not a string", what, name));
  return v->get<std::string>();
}

}  // namespace

const nlohmann::json* field(const nlohmann::json& object, std::string_view name) {
  if (!object.is_object()) return nullptr;
  if (auto it = object.find(name); it != object.end()) return &*it;
  for (auto it = object.begin(); it != object.end(); ++it)
    if (same_ignoring_case(it.key(), name)) return &*it;
  return nullptr;
}

ExtenderArgs decode_extender_args(std::string_view body) {
  constexpr const char* what = "ExtenderArgs";
  nlohmann::json j = parse_object(body, what);
  ExtenderArgs args;
  const nlohmann::json* pod = field(j, "Pod");
  if (!pod || !pod->is_object()) throw ProtocolError("ExtenderArgs: Pod is missing or not an object");
  args.pod = *pod;
  const nlohmann::json* names = field(j, "NodeNames");
  const nlohmann::json* nodes = field(j, "Nodes");
  std::unordered_set<std::string> seen;
  auto add = [&](const nlohmann::json& name, const std::string& where) {
    if (!name.is_string()) throw ProtocolError(fmt::format("ExtenderArgs: {} is not a string", where));
    std::string s = name.get<std::string>();
    if (seen.insert(s).second) args.node_names.push_back(std::move(s));
  };
  if (names && !names->is_null()) {
    if (!names->is_array()) throw ProtocolError("ExtenderArgs: NodeNames is not an array");
    args.node_names.reserve(names->size());
    for (size_t i = 0; i < names->size(); ++i) add((*names)[i], fmt::format("NodeNames[{}]", i));
  } else if (nodes && !nodes->is_null()) {
    if (!nodes->is_object()) throw ProtocolError("ExtenderArgs: Nodes is not a NodeList object");
    const nlohmann::json* items = field(*nodes, "items");
    if (items && !items->is_null()) {
      if (!items->is_array()) throw ProtocolError("ExtenderArgs: Nodes.items is not an array");
      for (size_t i = 0; i < items->size(); ++i) {
        const std::string where = fmt::format("Nodes.items[{}].metadata.name", i);
        const nlohmann::json* meta = field((*items)[i], "metadata");
        const nlohmann::json* name = meta ? field(*meta, "name") : nullptr;
        if (!name) throw ProtocolError(fmt::format("ExtenderArgs: {} is missing", where));
        add(*name, where);
      }
      args.node_items = *items;
    } else {
      args.node_items = nlohmann::json::array();
    }
    args.nodes_form = true;
  } else {
    throw ProtocolError("ExtenderArgs: neither NodeNames nor Nodes is given");
  }
  return args;
}

ExtenderBindingArgs decode_binding_args(std::string_view body) {
  constexpr const char* what = "ExtenderBindingArgs";
  nlohmann::json j = parse_object(body, what);
  ExtenderBindingArgs a;
  a.pod_name = string_field(j, "PodName", what, true);
  a.pod_namespace = string_field(j, "PodNamespace", what, false);
  if (a.pod_namespace.empty()) a.pod_namespace = "default";
  a.pod_uid = string_field(j, "PodUID", what, false);
  a.node = string_field(j, "Node", what, true);
  if (a.pod_name.empty()) throw ProtocolError("ExtenderBindingArgs: PodName is empty");
  if (a.node.empty()) throw ProtocolError("ExtenderBindingArgs: Node is empty");
  return a;
}

std::string encode_filter_result(const ExtenderFilterResult& r, const ExtenderArgs& args) {
  nlohmann::json j = nlohmann::json::object();
  j["Nodes"] = nullptr;
  j["NodeNames"] = nullptr;
  if (r.nodes) {
    if (args.nodes_form) {
      nlohmann::json items = nlohmann::json::array();
      for (const auto& name : *r.nodes)
        for (const auto& item : args.node_items) {
          const nlohmann::json* meta = field(item, "metadata");
          const nlohmann::json* n = meta ? field(*meta, "name") : nullptr;
          if (n && n->is_string() && n->get_ref<const std::string&>() == name) {
            items.push_back(item);
            break;
          }
        }
      j["Nodes"] = {{"metadata", nlohmann::json::object()}, {"items", std::move(items)}};
    } else {
      j["NodeNames"] = *r.nodes;
    }
  }
  j["FailedNodes"] = r.failed.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.failed);
  j["FailedAndUnresolvableNodes"] =
      r.failed_unresolvable.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.failed_unresolvable);
  j["Error"] = r.error;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string encode_binding_result(const std::string& error) {
  return nlohmann::json{{"Error", error}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gpuslice::serve
