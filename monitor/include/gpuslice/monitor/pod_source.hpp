// Which pods run on this node, to name each container folder's metrics
// (namespace, pod, container) and to tell a stale folder from a live one.
// Three sources: the Kubernetes API (serve's client: a list + watch of this
// node's pods), a kubectl dump (`--pods CLUSTER.yaml`), or none.
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/serve/cluster_io.hpp"

namespace gpuslice::monitor {

struct NodePod {
  std::string uid, ns, name;
  std::vector<std::string> containers;  // spec.containers, in order
  std::string assigned_node;            // hami.io/vgpu-node (annotation; HAMi sets the label too)
  std::string node_name;                // spec.nodeName
};

// The seam to the one manifest reader (core::codec): every pod of a
// manifest text (a kubectl dump, YAML or JSON), and one Pod object as the
// API sends it. Throws core::InputError naming the source, line and field.
std::vector<NodePod> pods_from_manifests(std::string_view text, const std::string& source);
NodePod pod_from_api_object(const nlohmann::json& pod, const std::string& source);

// HAMi's monitor reports pods labelled hami.io/vgpu-node=<node>; HAMi's
// scheduler writes that label and the annotation together. A pod bound
// here (spec.nodeName) counts too: gpuslice serve writes only the
// annotation, and Koordinator neither.
bool runs_on(const NodePod& pod, const std::string& node);

class PodSource {
 public:
  virtual ~PodSource() = default;
  // False for --no-pods: folders are then named by pod UID, and none is stale.
  virtual bool knows_pods() const = 0;
  // This node's pods now.
  virtual std::vector<NodePod> pods(const std::string& node) = 0;
  virtual std::string describe() const = 0;
};

std::unique_ptr<PodSource> no_pods();
// Read now (throws core::InputError), and again whenever the file changes
// (a bad rewrite keeps the last good read, logged).
std::unique_ptr<PodSource> pods_from_file(const std::string& path);
// Lists and watches the node's pods (fieldSelector spec.nodeName=<node>);
// throws serve::ApiError when the first list fails.
std::unique_ptr<PodSource> pods_from_api(const serve::KubeConnection& connection, const std::string& node,
                                         const serve::KubeFeedOptions& options = {});

}  // namespace gpuslice::monitor
