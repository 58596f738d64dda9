#include "api_objects.hpp"

#include <charconv>

namespace gpuslice::serve {

namespace {

using core::codec::Scalar;
using nlohmann::json;

bool json_number(const std::string& t) {
  if (t.empty()) return false;
  double v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  return ec == std::errc() && end == t.data() + t.size() && t.front() != '+' && t.front() != '.' &&
         t.find_first_of("iInN") == std::string::npos;
}

json value(const Scalar& s) {
  switch (s.kind) {
    case Scalar::Kind::Mapping:
      return json::object();
    case Scalar::Kind::Sequence:
      return json::array();
    case Scalar::Kind::Text:
      if (!s.quoted && (s.text == "true" || s.text == "false")) return s.text == "true";
      if (!s.quoted && json_number(s.text)) return json::parse(s.text);
      return s.text;
    default:
      return nullptr;
  }
}

void put(json& into, const char* key, const Scalar& s) {
  if (s.present()) into[key] = value(s);
}

void put(json& into, const char* key, const core::codec::StringMap& m) {
  if (m.kind == Scalar::Kind::Absent) return;
  if (m.kind == Scalar::Kind::Null) {
    into[key] = nullptr;
    return;
  }
  json& out = into[key] = json::object();
  for (const auto& e : m.entries) out[e.key] = value(e.value);
}

json header(const core::codec::ObjectHeader& h) {
  json j = {{"apiVersion", h.api_version.empty() ? "v1" : h.api_version}, {"kind", h.kind}};
  const auto& m = h.meta;
  if (m.kind == Scalar::Kind::Absent) return j;
  json& meta = j["metadata"] = json::object();
  put(meta, "name", m.name);
  put(meta, "namespace", m.namespace_name);
  put(meta, "uid", m.uid);
  put(meta, "creationTimestamp", m.creation_timestamp);
  put(meta, "resourceVersion", m.resource_version);
  put(meta, "labels", m.labels);
  put(meta, "annotations", m.annotations);
  for (const auto& o : m.owner_references)
    meta["ownerReferences"].push_back({{"apiVersion", o.api_version},
                                       {"kind", o.kind},
                                       {"name", o.name},
                                       {"uid", o.uid},
                                       {"controller", o.controller}});
  return j;
}

json containers(const std::vector<core::codec::ContainerObject>& list) {
  json out = json::array();
  for (const auto& c : list) {
    json one = json::object();
    put(one, "name", c.name);
    if (c.resources_kind != Scalar::Kind::Absent) {
      json& r = one["resources"] = json::object();
      put(r, "limits", c.limits);
      put(r, "requests", c.requests);
    }
    out.push_back(std::move(one));
  }
  return out;
}

}  // namespace

json api_json(const core::codec::KubeObject& object, const core::codec::ReadContext& context) {
  if (const auto raw = context.raw_object(); !raw.empty()) {
    json j = json::parse(raw);
    const auto& h = core::codec::header_of(object);
    j["apiVersion"] = h.api_version.empty() ? "v1" : h.api_version;  // list items carry none
    j["kind"] = h.kind;
    return j;
  }
  if (const auto* pod = std::get_if<core::codec::PodObject>(&object)) {
    json j = header(pod->header);
    if (pod->spec_kind != Scalar::Kind::Absent) {
      json& spec = j["spec"] = json::object();
      put(spec, "nodeName", pod->node_name);
      put(spec, "schedulerName", pod->scheduler_name);
      if (!pod->init_containers.empty()) spec["initContainers"] = containers(pod->init_containers);
      spec["containers"] = containers(pod->containers);
    }
    if (pod->phase.present()) j["status"]["phase"] = value(pod->phase);
    return j;
  }
  if (const auto* node = std::get_if<core::codec::NodeObject>(&object)) {
    json j = header(node->header);
    if (node->unschedulable.present()) j["spec"]["unschedulable"] = value(node->unschedulable);
    if (node->allocatable.kind != Scalar::Kind::Absent || node->capacity.kind != Scalar::Kind::Absent) {
      json& status = j["status"] = json::object();
      put(status, "allocatable", node->allocatable);
      put(status, "capacity", node->capacity);
    }
    return j;
  }
  return header(core::codec::header_of(object));
}

std::optional<core::codec::KubeObject> decode_api_json(const json& object, const std::string& default_kind,
                                                       const std::string& source) {
  std::optional<core::codec::KubeObject> out;
  core::codec::ReadOptions options;
  options.default_kind = default_kind;
  core::codec::read_kube_objects(
      core::codec::KubeText::from_string(object.dump(), source),
      [&](core::codec::KubeObject&& o, const core::codec::ReadContext&) { out = std::move(o); }, options);
  return out;
}

}  // namespace gpuslice::serve
