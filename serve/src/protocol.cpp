#include "gpuslice/serve/protocol.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "go_fields.hpp"

namespace gpuslice::serve {

namespace {

using go_fields::same_ignoring_case;  // Go reads field names in any case

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

using go_fields::member;

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
  args.pod_json = simdjson::to_string(*pod);
  args.pod = nlohmann::json::parse(args.pod_json);
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

namespace {

// A JSON string, escaped as nlohmann writes it (invalid UTF-8 replaced).
void write_string(std::string& out, std::string_view s) {
  out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Names and reasons are plain ASCII almost always: those are written as
// they are, anything else through nlohmann's escaping. A table, not four
// compares a byte: every name of a 10,000-node refusal passes through here.
constexpr std::array<bool, 256> kPlainByte = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c) t[static_cast<size_t>(c)] = c != '"' && c != '\\';
  return t;
}();

bool is_plain(std::string_view s) {
  bool plain = true;
  for (char c : s) plain &= kPlainByte[static_cast<unsigned char>(c)];
  return plain;
}

void write_plain_or_escaped(std::string& out, std::string_view s) {
  if (!is_plain(s)) return write_string(out, s);
  out += '"';
  out += s;
  out += '"';
}

void write_map(std::string& out, const FailedNodes& failed) {
  if (failed.empty()) {
    out += "null";
    return;
  }
  // Nodes in one state share a reason: each reason's JSON text is made once.
  std::vector<std::string> reasons(failed.reason_count());
  for (uint32_t id = 0; id < reasons.size(); ++id) write_plain_or_escaped(reasons[id], failed.reason(id));
  // By name, as a JSON object was written before (and as Go's encoding/json
  // writes a map): the answer's bytes do not depend on the order nodes came
  // in. The decision state adds a refused filter's nodes by name already, so
  // one pass checks the order, finds names that need escaping and counts
  // the answer's bytes; only an unsorted map is sorted.
  std::vector<std::pair<std::string_view, uint32_t>> nodes;
  nodes.reserve(failed.size());
  size_t bytes = 2;  // the braces
  bool sorted = true, all_plain = true;
  failed.for_each_id([&](std::string_view node, uint32_t reason) {
    sorted = sorted && (nodes.empty() || !(node < nodes.back().first));
    all_plain = all_plain && is_plain(node);
    nodes.emplace_back(node, reason);
    bytes += node.size() + 3 + reasons[reason].size() + 1;  // quotes, colon, reason, comma
  });
  bytes -= 1;  // no comma after the last node
  if (!sorted)
    std::stable_sort(nodes.begin(), nodes.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  // Kubernetes names never need escaping; any other is escaped once here.
  std::vector<std::string> escaped;  // by place in `nodes`; empty: plain
  if (!all_plain) {
    escaped.resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (is_plain(nodes[i].first)) continue;
      write_string(escaped[i], nodes[i].first);
      bytes += escaped[i].size() - (nodes[i].first.size() + 2);  // escaping never shortens a quoted name
    }
  }
  // Straight into a buffer of the answer's size, not a character at a time.
  const size_t at = out.size();
  out.resize(at + bytes);
  char* p = out.data() + at;
  auto put = [&p](std::string_view s) {
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  };
  *p++ = '{';
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i) *p++ = ',';
    if (!escaped.empty() && !escaped[i].empty()) {
      put(escaped[i]);
    } else {
      *p++ = '"';
      put(nodes[i].first);
      *p++ = '"';
    }
    *p++ = ':';
    put(reasons[nodes[i].second]);
  }
  *p++ = '}';
  if (p != out.data() + out.size()) throw std::logic_error("FailedNodes: the answer's size was miscounted");
}

}  // namespace

// Written directly, not through a JSON tree: a pod that fits no node names
// every node in FailedNodes.
std::string encode_filter_result(const ExtenderFilterResult& r, const ExtenderArgs& args) {
  // Keys in the order the JSON tree wrote them before (by name), so the
  // bytes of an answer are unchanged.
  std::string out = "{\"Error\":";
  write_string(out, r.error);
  out += ",\"FailedAndUnresolvableNodes\":";
  FailedNodes unresolvable;
  for (const auto& [node, reason] : r.failed_unresolvable) unresolvable[node] = reason;
  write_map(out, unresolvable);
  out += ",\"FailedNodes\":";
  write_map(out, r.failed);
  out += ",\"NodeNames\":";
  if (r.nodes && !args.nodes_form) {
    out += '[';
    for (size_t i = 0; i < r.nodes->size(); ++i) {
      if (i) out += ',';
      write_plain_or_escaped(out, (*r.nodes)[i]);
    }
    out += ']';
  } else {
    out += "null";
  }
  out += ",\"Nodes\":";
  if (r.nodes && args.nodes_form) {
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
    out += nlohmann::json{{"items", std::move(items)}, {"metadata", nlohmann::json::object()}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else {
    out += "null";
  }
  out += '}';
  return out;
}

FailedNodes::Span FailedNodes::keep(std::string_view s) {
  const Span span{static_cast<uint32_t>(text_.size()), static_cast<uint32_t>(s.size())};
  text_.append(s);
  return span;
}

uint32_t FailedNodes::add_reason(std::string_view text) {
  for (size_t i = 0; i < reasons_.size(); ++i)
    if (view(reasons_[i]) == text) return static_cast<uint32_t>(i);
  reasons_.push_back(keep(text));
  return static_cast<uint32_t>(reasons_.size() - 1);
}

void FailedNodes::add(std::string_view node, uint32_t reason) { entries_.push_back({keep(node), reason}); }

void FailedNodes::reserve(size_t nodes, size_t name_bytes) {
  entries_.reserve(entries_.size() + nodes);
  text_.reserve(text_.size() + name_bytes);
}

FailedNodes::Slot FailedNodes::operator[](std::string_view node) {
  for (size_t i = 0; i < entries_.size(); ++i)
    if (view(entries_[i].name) == node) return Slot(*this, i);
  add(node, add_reason(""));
  return Slot(*this, entries_.size() - 1);
}

std::string FailedNodes::at(std::string_view node) const {
  for (const auto& e : entries_)
    if (view(e.name) == node) return std::string(view(reasons_[e.reason]));
  throw std::out_of_range("FailedNodes: no node " + std::string(node));
}

void FailedNodes::clear() {
  text_.clear();
  reasons_.clear();
  entries_.clear();
}

std::map<std::string, std::string> FailedNodes::to_map() const {
  std::map<std::string, std::string> out;
  for_each(
      [&](std::string_view node, std::string_view reason) { out[std::string(node)] = std::string(reason); });
  return out;
}

std::string encode_binding_result(const std::string& error) {
  return nlohmann::json{{"Error", error}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gpuslice::serve
