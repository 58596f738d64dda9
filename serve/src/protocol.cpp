#include "gpuslice/serve/protocol.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <optional>

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

// simdjson, not nlohmann, reads ExtenderArgs: with nodeCacheCapable
// kube-scheduler names every node, and at 10,000 nodes nlohmann's DOM took
// 3.3 ms a request against simdjson's 0.16 ms (bench/serve). The pod and
// any Node objects are small and go on to nlohmann, which the rest reads.
namespace {

// A member by Go's rule (exact name first, then any case); a JSON null
// counts as absent, as Go leaves the field unset.
std::optional<simdjson::dom::element> member(simdjson::dom::object object, std::string_view name) {
  simdjson::dom::element found;
  bool have = object.at_key(name).get(found) == simdjson::SUCCESS;
  if (!have)
    for (auto [key, value] : object)
      if (same_ignoring_case(key, name)) {
        found = value;
        have = true;
        break;
      }
  if (!have || found.is_null()) return std::nullopt;
  return found;
}

nlohmann::json to_nlohmann(const simdjson::dom::element& e) {
  return nlohmann::json::parse(simdjson::to_string(e));
}

}  // namespace

namespace {

ExtenderArgs decode_extender_args(const char* data, size_t size, bool padded) {
  thread_local simdjson::dom::parser parser;  // keeps its buffers between requests of a thread
  simdjson::dom::element root;
  if (parser.parse(data, size, /*realloc_if_needed=*/!padded).get(root) != simdjson::SUCCESS)
    throw ProtocolError("ExtenderArgs: body is not valid JSON");
  simdjson::dom::object top;
  if (root.get_object().get(top) != simdjson::SUCCESS)
    throw ProtocolError("ExtenderArgs: body is not a JSON object");
  ExtenderArgs args;
  const auto pod = member(top, "Pod");
  if (!pod || !pod->is_object()) throw ProtocolError("ExtenderArgs: Pod is missing or not an object");
  args.pod = to_nlohmann(*pod);
  const auto names = member(top, "NodeNames");
  const auto nodes = member(top, "Nodes");
  // Names as given: kube-scheduler names each node once, and the decision
  // state counts a repeated name once (it looks every name up anyway).
  auto add = [&](simdjson::dom::element name, auto&& where) {
    std::string_view s;
    if (name.get_string().get(s) != simdjson::SUCCESS)
      throw ProtocolError(fmt::format("ExtenderArgs: {} is not a string", where()));
    args.node_names.emplace_back(s);
  };
  if (names) {
    simdjson::dom::array list;
    if (names->get_array().get(list) != simdjson::SUCCESS)
      throw ProtocolError("ExtenderArgs: NodeNames is not an array");
    args.node_names.reserve(list.size());
    size_t i = 0;
    for (simdjson::dom::element name : list) {
      add(name, [i] { return fmt::format("NodeNames[{}]", i); });
      ++i;
    }
  } else if (nodes) {
    simdjson::dom::object list;
    if (nodes->get_object().get(list) != simdjson::SUCCESS)
      throw ProtocolError("ExtenderArgs: Nodes is not a NodeList object");
    args.node_items = nlohmann::json::array();
    if (const auto items = member(list, "items")) {
      simdjson::dom::array array;
      if (items->get_array().get(array) != simdjson::SUCCESS)
        throw ProtocolError("ExtenderArgs: Nodes.items is not an array");
      size_t i = 0;
      for (simdjson::dom::element item : array) {
        auto where = [i] { return fmt::format("Nodes.items[{}].metadata.name", i); };
        simdjson::dom::object object, meta;
        std::optional<simdjson::dom::element> name;
        if (item.get_object().get(object) == simdjson::SUCCESS)
          if (const auto m = member(object, "metadata"); m && m->get_object().get(meta) == simdjson::SUCCESS)
            name = member(meta, "name");
        if (!name) throw ProtocolError(fmt::format("ExtenderArgs: {} is missing", where()));
        add(*name, where);
        args.node_items.push_back(to_nlohmann(item));
        ++i;
      }
    }
    args.nodes_form = true;
  } else {
    throw ProtocolError("ExtenderArgs: neither NodeNames nor Nodes is given");
  }
  return args;
}

}  // namespace

ExtenderArgs decode_extender_args(std::string_view body) {
  return decode_extender_args(body.data(), body.size(), false);
}

// A body read into a string usually has room to spare past its end:
// simdjson reads it in place instead of copying it into a padded buffer.
ExtenderArgs decode_extender_args(const std::string& body) {
  return decode_extender_args(body.data(), body.size(),
                              body.capacity() - body.size() >= simdjson::SIMDJSON_PADDING);
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
