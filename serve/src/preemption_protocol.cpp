#include "gpuslice/serve/preemption_protocol.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "go_fields.hpp"

namespace gpuslice::serve {

namespace {

constexpr const char* kWhat = "ExtenderPreemptionArgs";

using go_fields::member;

std::optional<simdjson::dom::element> member_at(simdjson::dom::element e, std::string_view name) {
  simdjson::dom::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return std::nullopt;
  return member(o, name);
}

std::string text_member(simdjson::dom::object object, std::string_view name, const std::string& where) {
  const auto v = member(object, name);
  if (!v) return {};
  std::string_view s;
  if (v->get_string().get(s) != simdjson::SUCCESS)
    throw ProtocolError(fmt::format("{}: {}.{} is not a string", kWhat, where, name));
  return std::string(s);
}

int64_t violations_of(simdjson::dom::object victims, const std::string& where) {
  const auto v = member(victims, "NumPDBViolations");
  if (!v) return 0;
  int64_t n = 0;
  if (v->get_int64().get(n) != simdjson::SUCCESS || n < 0)
    throw ProtocolError(fmt::format("{}: {}.NumPDBViolations is not a count", kWhat, where));
  return n;
}

// One node's victims in either form: each pod a MetaPod ({"UID"}) or a v1.Pod.
NodeVictimsOffer read_offer(std::string_view node, simdjson::dom::element value, bool meta, const char* map) {
  NodeVictimsOffer offer;
  offer.node = std::string(node);
  const std::string where = fmt::format("{}[{}]", map, node);
  simdjson::dom::object victims;
  if (value.get_object().get(victims) != simdjson::SUCCESS)
    throw ProtocolError(fmt::format("{}: {} is not an object", kWhat, where));
  offer.pdb_violations = violations_of(victims, where);
  const auto pods = member(victims, "Pods");
  if (!pods) return offer;
  simdjson::dom::array list;
  if (pods->get_array().get(list) != simdjson::SUCCESS)
    throw ProtocolError(fmt::format("{}: {}.Pods is not an array", kWhat, where));
  size_t i = 0;
  for (simdjson::dom::element pod : list) {
    const std::string at = fmt::format("{}.Pods[{}]", where, i++);
    simdjson::dom::object object;
    if (pod.get_object().get(object) != simdjson::SUCCESS)
      throw ProtocolError(fmt::format("{}: {} is not an object", kWhat, at));
    OfferedVictim victim;
    if (meta) {
      victim.uid = text_member(object, "UID", at);
    } else {
      if (const auto m = member(object, "metadata"); m && m->is_object())
        victim.uid = text_member(m->get_object().value(), "uid", at + ".metadata");
      if (const auto spec = member(object, "spec"))
        if (const auto p = member_at(*spec, "priority")) {
          int64_t n = 0;
          if (p->get_int64().get(n) != simdjson::SUCCESS || n < std::numeric_limits<int32_t>::min() ||
              n > std::numeric_limits<int32_t>::max())
            throw ProtocolError(fmt::format("{}: {}.spec.priority is not a 32-bit integer", kWhat, at));
          victim.priority = static_cast<int32_t>(n);
        }
      if (const auto status = member(object, "status"); status && status->is_object())
        victim.start_time = text_member(status->get_object().value(), "startTime", at + ".status");
    }
    if (victim.uid.empty()) throw ProtocolError(fmt::format("{}: {} has no UID", kWhat, at));
    offer.pods.push_back(std::move(victim));
  }
  return offer;
}

}  // namespace

ExtenderPreemptionArgs decode_preemption_args(std::string_view body) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(body.data(), body.size()).get(root) != simdjson::SUCCESS)
    throw ProtocolError(fmt::format("{}: body is not valid JSON", kWhat));
  simdjson::dom::object top;
  if (root.get_object().get(top) != simdjson::SUCCESS)
    throw ProtocolError(fmt::format("{}: body is not a JSON object", kWhat));
  ExtenderPreemptionArgs args;
  const auto pod = member(top, "Pod");
  if (!pod || !pod->is_object())
    throw ProtocolError(fmt::format("{}: Pod is missing or not an object", kWhat));
  args.pod_json = simdjson::to_string(*pod);
  // kube-scheduler sets one of the two (ProcessPreemption: the meta form
  // when the extender is nodeCacheCapable); a body with both is read by
  // the meta form, which names pods as the answer does.
  const auto meta = member(top, "NodeNameToMetaVictims");
  const auto full = member(top, "NodeNameToVictims");
  if (!meta && !full) return args;  // no candidates: the answer names none
  args.meta_form = meta.has_value();
  const char* map = meta ? "NodeNameToMetaVictims" : "NodeNameToVictims";
  simdjson::dom::object nodes;
  if ((meta ? *meta : *full).get_object().get(nodes) != simdjson::SUCCESS)
    throw ProtocolError(fmt::format("{}: {} is not an object", kWhat, map));
  for (auto [name, value] : nodes) {
    if (value.is_null()) {
      args.nodes.push_back(NodeVictimsOffer{std::string(name), {}, 0});
      continue;
    }
    args.nodes.push_back(read_offer(name, value, args.meta_form, map));
  }
  return args;
}

std::string encode_preemption_result(const ExtenderPreemptionResult& result) {
  nlohmann::json nodes = nlohmann::json::object();
  for (const MetaVictimsAnswer& n : result.nodes) {
    nlohmann::json pods = nlohmann::json::array();
    for (const std::string& uid : n.uids) pods.push_back({{"UID", uid}});
    nodes[n.node] = {{"Pods", std::move(pods)}, {"NumPDBViolations", n.pdb_violations}};
  }
  return nlohmann::json{{"NodeNameToMetaVictims", std::move(nodes)}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gpuslice::serve
