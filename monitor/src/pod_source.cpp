#include "gpuslice/monitor/pod_source.hpp"

#include <sys/stat.h>

#include <iostream>
#include <map>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::monitor {

namespace {

NodePod from_document(const core::codec::PodDocument& d) {
  NodePod p;
  p.uid = d.request.uid;
  p.ns = d.request.ns;
  p.name = d.request.name;
  for (const auto& c : d.request.containers) p.containers.push_back(c.name);
  p.assigned_node = d.assigned_node;
  p.node_name = d.node_name;
  return p;
}

class NoPods final : public PodSource {
 public:
  bool knows_pods() const override { return false; }
  std::vector<NodePod> pods(const std::string&) override { return {}; }
  std::string describe() const override { return "no pod source (folders named by pod UID)"; }
};

class FilePods final : public PodSource {
 public:
  explicit FilePods(std::string path) : path_(std::move(path)) {
    pods_ = pods_from_manifests(core::codec::read_text_file(path_), path_);
    mtime_ = modified();
  }
  bool knows_pods() const override { return true; }
  std::vector<NodePod> pods(const std::string& node) override {
    const auto now = modified();
    if (now != mtime_) {
      mtime_ = now;
      try {
        pods_ = pods_from_manifests(core::codec::read_text_file(path_), path_);
      } catch (const std::exception& e) {
        std::cerr << "gpuslice monitor: keeping the last pods read: " << e.what() << "\n";
      }
    }
    std::vector<NodePod> out;
    for (const auto& p : pods_)
      if (runs_on(p, node)) out.push_back(p);
    return out;
  }
  std::string describe() const override { return "pods from " + path_; }

 private:
  long long modified() const {
    struct stat st {};
    return stat(path_.c_str(), &st) == 0
               ? static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec
               : -1;
  }
  std::string path_;
  std::vector<NodePod> pods_;
  long long mtime_ = -1;
};

// serve's feed keeps a sink in step with the API; the sink keeps the pods.
class ApiPods final : public PodSource, private serve::ClusterSink {
 public:
  ApiPods(const serve::KubeConnection& c, const std::string& node, serve::KubeFeedOptions o)
      : server_(c.server) {
    o.nodes = false;
    o.pod_field_selector = "spec.nodeName=" + node;
    feed_ = serve::make_kube_feed(c, o);
    feed_->start(*this);
  }
  ~ApiPods() override { feed_->stop(); }
  bool knows_pods() const override { return true; }
  std::vector<NodePod> pods(const std::string& node) override {
    std::lock_guard lock(mutex_);
    std::vector<NodePod> out;
    for (const auto& [uid, p] : pods_)
      if (runs_on(p, node)) out.push_back(p);
    return out;
  }
  std::string describe() const override { return "pods from the API server at " + server_; }

 private:
  void replace_all(const std::vector<nlohmann::json>&, const std::vector<nlohmann::json>& pods) override {
    std::map<std::string, NodePod> fresh;
    for (const auto& p : pods)
      if (auto pod = read(p)) fresh[pod->uid] = *pod;
    std::lock_guard lock(mutex_);
    pods_ = std::move(fresh);
  }
  void node_changed(serve::WatchKind, const nlohmann::json&) override {}
  void pod_changed(serve::WatchKind kind, const nlohmann::json& object) override {
    auto pod = read(object);
    if (!pod) return;
    std::lock_guard lock(mutex_);
    if (kind == serve::WatchKind::Deleted)
      pods_.erase(pod->uid);
    else
      pods_[pod->uid] = *pod;
  }
  // A pod the reader refuses is left out (logged): one bad object must not
  // take every container's metrics away.
  std::optional<NodePod> read(const nlohmann::json& object) {
    try {
      return pod_from_api_object(object, "pod from " + server_);
    } catch (const std::exception& e) {
      std::cerr << "gpuslice monitor: skipping a pod: " << e.what() << "\n";
      return std::nullopt;
    }
  }

  std::string server_;
  std::unique_ptr<serve::ClusterFeed> feed_;
  std::mutex mutex_;
  std::map<std::string, NodePod> pods_;  // by UID
};

}  // namespace

std::vector<NodePod> pods_from_manifests(std::string_view text, const std::string& source) {
  std::vector<NodePod> out;
  for (const auto& d : core::codec::parse_pods(text, source)) out.push_back(from_document(d));
  return out;
}

NodePod pod_from_api_object(const nlohmann::json& pod, const std::string& source) {
  // The API's JSON is YAML; the one reader reads it as text.
  const auto docs = core::codec::parse_pods(pod.dump(), source);
  if (docs.size() != 1) throw core::InputError(source, 0, "", "not one Pod object");
  return from_document(docs.front());
}

bool runs_on(const NodePod& pod, const std::string& node) {
  return !node.empty() && (pod.assigned_node == node || pod.node_name == node);
}

std::unique_ptr<PodSource> no_pods() { return std::make_unique<NoPods>(); }

std::unique_ptr<PodSource> pods_from_file(const std::string& path) {
  return std::make_unique<FilePods>(path);
}

std::unique_ptr<PodSource> pods_from_api(const serve::KubeConnection& connection, const std::string& node,
                                         const serve::KubeFeedOptions& options) {
  return std::make_unique<ApiPods>(connection, node, options);
}

}  // namespace gpuslice::monitor
