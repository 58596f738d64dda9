// The cluster without an API server: a snapshot file read once (a kubectl
// dump of nodes and pods, YAML or JSON) and a writer that keeps what a real
// API server would be told in memory, so the whole protocol runs offline.
#pragma once

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "gpuslice/serve/cluster_io.hpp"
#include "gpuslice/serve/dialect_check.hpp"

namespace gpuslice::serve {

class SnapshotFeed final : public ClusterFeed {
 public:
  // Reads and checks the file now, with the one reader (its objects decoded,
  // its text dropped): throws core::InputError (file, line).
  // Its ResourceQuotas, and those of `quotas_path` when given, go to the sink first.
  explicit SnapshotFeed(const std::string& path, const std::string& quotas_path = "");
  void start(ClusterSink& sink) override;  // one replace_all, nothing after
  void stop() override {}
  size_t node_count() const { return node_count_; }
  size_t pod_count() const { return pod_count_; }
  // GPU nodes by the dialect that registers their cards (HAMi, Koordinator's Devices, KAI's labels).
  const NodesByDialect& gpu_nodes() const { return gpu_nodes_; }

 private:
  std::string path_;
  std::vector<core::codec::NodeObject> nodes_;
  std::vector<core::codec::PodObject> pods_;
  std::vector<core::NamespaceQuota> quotas_;
  size_t node_count_ = 0, pod_count_ = 0;
  NodesByDialect gpu_nodes_;
};

// Objects of kind Node and Pod in a kubectl dump (a v1 List, several
// documents, or single objects), as the API's JSON: each object as written
// when the text is JSON, else the fields the reader keeps.
void read_cluster_objects(const std::string& text, const std::string& source,
                          std::vector<nlohmann::json>& nodes, std::vector<nlohmann::json>& pods);

class MemoryWriter final : public ClusterWriter {
 public:
  struct Event {
    PodRef pod;
    std::string type, reason, message;
  };
  void patch_pod_annotations(const PodRef& pod, const nlohmann::json& annotations) override;
  void patch_node_annotations(const std::string& node, const nlohmann::json& annotations) override;
  void bind(const PodRef& pod, const std::string& node) override;
  void record_event(const PodRef& pod, const std::string& type, const std::string& reason,
                    const std::string& message) override;

  // What was written, for tests and dry runs.
  nlohmann::json pod_annotations(const std::string& ns, const std::string& name) const;
  nlohmann::json node_annotations(const std::string& node) const;
  std::string bound_node(const std::string& ns, const std::string& name) const;
  std::vector<Event> events() const;         // the latest kMaxEvents
  static constexpr size_t kMaxEvents = 256;  // a 10,000-node success message is ~200 kB

 private:
  mutable std::mutex mutex_;
  std::map<std::string, nlohmann::json> pod_annotations_, node_annotations_;
  std::map<std::string, std::string> bindings_;
  std::deque<Event> events_;
};

}  // namespace gpuslice::serve
