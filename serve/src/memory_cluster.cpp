#include "gpuslice/serve/memory_cluster.hpp"

#include <fmt/format.h>

#include "api_objects.hpp"
#include "gpuslice/core/codec/kube_reader.hpp"
#include "gpuslice/core/codec/resource_quota.hpp"
#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::serve {

namespace {

std::string key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

void read_api_objects(const core::codec::KubeText& text, std::vector<nlohmann::json>& nodes,
                      std::vector<nlohmann::json>& pods) {
  core::codec::read_kube_objects(
      text, [&](core::codec::KubeObject&& object, const core::codec::ReadContext& context) {
        if (std::holds_alternative<core::codec::NodeObject>(object))
          nodes.push_back(api_json(object, context));
        else if (std::holds_alternative<core::codec::PodObject>(object))
          pods.push_back(api_json(object, context));
      });
}

}  // namespace

void read_cluster_objects(const std::string& text, const std::string& source,
                          std::vector<nlohmann::json>& nodes, std::vector<nlohmann::json>& pods) {
  read_api_objects(core::codec::KubeText::from_string(text, source), nodes, pods);
}

SnapshotFeed::SnapshotFeed(const std::string& path, const std::string& quotas_path) : path_(path) {
  // Who registers each node's cards, as every dialect reads them: serve
  // says what it cannot read before it starts (dialect_check.hpp).
  std::vector<core::codec::NodeDocument> registrations;
  core::dialects::NodeObjects objects;
  core::codec::read_kube_objects(
      core::codec::KubeText::from_file(path),
      [&](core::codec::KubeObject&& object, const core::codec::ReadContext& context) {
        if (auto* n = std::get_if<core::codec::NodeObject>(&object)) {
          try {
            registrations.push_back(core::codec::node_document(*n, context));
          } catch (const core::InputError&) {
            // The decision state reads it again and says why it is skipped.
          }
          nodes_.push_back(std::move(*n));
        } else if (auto* p = std::get_if<core::codec::PodObject>(&object)) {
          pods_.push_back(std::move(*p));
        } else if (auto* q = std::get_if<core::codec::ResourceQuotaObject>(&object)) {
          quotas_.push_back(core::codec::namespace_quota(*q, context));
        } else {
          objects.take(object, context);
        }
      });
  if (nodes_.empty()) throw core::InputError(path, 0, "kind", "no Node objects found");
  std::vector<std::string> ignored;  // serve reads no Device: what is wrong in one is not its to say
  try {
    core::dialects::register_nodes(registrations, objects, path, ignored);
  } catch (const core::InputError&) {
  }
  for (const auto& n : registrations)
    if (!n.node.devices.empty()) ++gpu_nodes_[n.node.cards_from];
  if (!quotas_path.empty())
    for (auto& q : core::codec::read_resource_quota_file(quotas_path)) quotas_.push_back(std::move(q));
  node_count_ = nodes_.size();
  pod_count_ = pods_.size();
}

void SnapshotFeed::start(ClusterSink& sink) {
  if (DecodedSink* decoded = sink.decoded()) {
    decoded->quotas_replaced(std::move(quotas_));
    decoded->replace_all(std::move(nodes_), std::move(pods_));
  } else {
    // Whole objects: read the file again, keeping each as the API's JSON.
    std::vector<nlohmann::json> nodes, pods;
    read_api_objects(core::codec::KubeText::from_file(path_), nodes, pods);
    sink.replace_all(nodes, pods);
  }
  nodes_.clear();
  pods_.clear();
}

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
