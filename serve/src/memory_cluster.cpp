#include "gpuslice/serve/memory_cluster.hpp"

#include <fmt/format.h>

#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/codec/yaml_documents.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::serve {

namespace {

// YAML to the API's JSON. Scalars stay strings: every reader downstream is
// the manifest codec, which reads YAML scalars the same either way.
nlohmann::json to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json j = nlohmann::json::object();
      for (const auto& kv : node) j[kv.first.Scalar()] = to_json(kv.second);
      return j;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& item : node) j.push_back(to_json(item));
      return j;
    }
    case YAML::NodeType::Scalar:
      return node.Scalar();
    default:
      return nullptr;
  }
}

std::string key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

}  // namespace

void read_cluster_objects(const std::string& text, const std::string& source,
                          std::vector<nlohmann::json>& nodes, std::vector<nlohmann::json>& pods) {
  auto take = [&](const YAML::Node& doc) {
    if (!doc.IsMap() || !doc["kind"] || !doc["kind"].IsScalar()) return;
    const std::string kind = doc["kind"].Scalar();
    if (kind == "Node") nodes.push_back(to_json(doc));
    if (kind == "Pod") pods.push_back(to_json(doc));
  };
  for (const auto& doc : core::codec::load_yaml_documents(text, source)) {
    if (doc.IsMap() && doc["kind"] && doc["kind"].IsScalar() &&
        (doc["kind"].Scalar() == "List" || doc["kind"].Scalar().ends_with("List")) && doc["items"]) {
      if (!doc["items"].IsSequence())
        throw core::InputError(source, doc["items"].Mark().line + 1, "items", "not a list");
      for (const auto& item : doc["items"]) take(item);
    } else {
      take(doc);
    }
  }
}

SnapshotFeed::SnapshotFeed(const std::string& path) {
  read_cluster_objects(core::codec::read_text_file(path), path, nodes_, pods_);
  if (nodes_.empty()) throw core::InputError(path, 0, "kind", "no Node objects found");
}

void SnapshotFeed::start(ClusterSink& sink) { sink.replace_all(nodes_, pods_); }

void MemoryWriter::patch_pod_annotations(const PodRef& pod, const nlohmann::json& annotations) {
  std::lock_guard lock(mutex_);
  pod_annotations_[key(pod.namespace_name, pod.name)].merge_patch(annotations);
}

void MemoryWriter::patch_node_annotations(const std::string& node, const nlohmann::json& annotations) {
  std::lock_guard lock(mutex_);
  node_annotations_[node].merge_patch(annotations);
}

void MemoryWriter::bind(const PodRef& pod, const std::string& node) {
  std::lock_guard lock(mutex_);
  auto [it, fresh] = bindings_.emplace(key(pod.namespace_name, pod.name), node);
  // The API server refuses a second binding of a bound pod (409 Conflict).
  if (!fresh)
    throw ApiError(409, fmt::format("pod {}/{} is already assigned to node \"{}\"", pod.namespace_name,
                                    pod.name, it->second));
}

void MemoryWriter::record_event(const PodRef& pod, const std::string& type, const std::string& reason,
                                const std::string& message) {
  std::lock_guard lock(mutex_);
  events_.push_back({pod, type, reason, message});
  if (events_.size() > kMaxEvents) events_.pop_front();
}

nlohmann::json MemoryWriter::pod_annotations(const std::string& ns, const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = pod_annotations_.find(key(ns, name));
  return it == pod_annotations_.end() ? nlohmann::json::object() : it->second;
}

nlohmann::json MemoryWriter::node_annotations(const std::string& node) const {
  std::lock_guard lock(mutex_);
  auto it = node_annotations_.find(node);
  return it == node_annotations_.end() ? nlohmann::json::object() : it->second;
}

std::string MemoryWriter::bound_node(const std::string& ns, const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = bindings_.find(key(ns, name));
  return it == bindings_.end() ? std::string() : it->second;
}

std::vector<MemoryWriter::Event> MemoryWriter::events() const {
  std::lock_guard lock(mutex_);
  return {events_.begin(), events_.end()};
}

}  // namespace gpuslice::serve
