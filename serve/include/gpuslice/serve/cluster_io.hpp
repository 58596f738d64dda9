// The seam between `gpuslice serve`'s decision state and wherever the
// cluster lives: a Kubernetes API server (list + watch in, patches, bindings
// and events out) or a snapshot file served from memory (no API calls).
// Feeds read what they get (list pages, watch lines, the snapshot file) with
// the core's one reader (kube_reader.hpp) and hand each object over decoded
// (kube_objects.hpp) to a sink that takes them so (the decision state); a
// sink that wants whole objects gets the API's own JSON instead (a Node or a
// Pod exactly as `GET /api/v1/nodes` returns its items).
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuslice/core/codec/kube_objects.hpp"
#include "gpuslice/core/quota.hpp"

namespace gpuslice::serve {

// A pod as the extender protocol names it.
struct PodRef {
  std::string namespace_name;
  std::string name;
  std::string uid;
};

// A failed API call: the HTTP status (0 when no answer came) and the
// server's message. Callers turn it into the extender's error answer and a
// pod event; it never escapes a request handler.
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

enum class WatchKind { Added, Modified, Deleted };

// The same calls with the reader's decoded objects: nothing of an object
// but what the reader keeps crosses, and nothing is kept as a JSON tree.
class DecodedSink {
 public:
  virtual ~DecodedSink() = default;
  virtual void replace_all(std::vector<core::codec::NodeObject> nodes,
                           std::vector<core::codec::PodObject> pods) = 0;
  virtual void node_changed(WatchKind kind, core::codec::NodeObject object) = 0;
  virtual void pod_changed(WatchKind kind, core::codec::PodObject object) = 0;
  // Namespaces' ResourceQuotas, as HAMi v2.10 reads them: the whole set
  // after a (re)list, then each change. A sink without quotas ignores them.
  virtual void quotas_replaced(std::vector<core::NamespaceQuota> quotas) { (void)quotas; }
  virtual void quota_changed(WatchKind kind, core::NamespaceQuota quota) {
    (void)kind;
    (void)quota;
  }
};

// What the feed tells the state. Calls come from the feed's own thread; the
// state serialises them with filters and binds (one writer).
class ClusterSink {
 public:
  virtual ~ClusterSink() = default;
  // A sink that takes decoded objects returns that side here; feeds then
  // call it instead of the JSON calls below.
  virtual DecodedSink* decoded() { return nullptr; }
  // The whole cluster, after a (re)list: replaces everything known so far.
  virtual void replace_all(const std::vector<nlohmann::json>& nodes,
                           const std::vector<nlohmann::json>& pods) = 0;
  // One watch event; `object` is the Node or Pod after the change (before
  // it, for Deleted).
  virtual void node_changed(WatchKind kind, const nlohmann::json& object) = 0;
  virtual void pod_changed(WatchKind kind, const nlohmann::json& object) = 0;
};

// Keeps a sink in step with the cluster: one replace_all, then changes, and
// a fresh replace_all after any gap it cannot resume from (410 Gone).
class ClusterFeed {
 public:
  virtual ~ClusterFeed() = default;
  // Delivers the first replace_all before returning (throws ApiError when
  // the first list fails), then keeps delivering changes on a thread of its
  // own until stop().
  virtual void start(ClusterSink& sink) = 0;
  virtual void stop() = 0;
};

// The side effects of a decision, written as HAMi writes them.
class ClusterWriter {
 public:
  virtual ~ClusterWriter() = default;
  // Strategic-merge patch of metadata.annotations (a value of null removes).
  virtual void patch_pod_annotations(const PodRef& pod, const nlohmann::json& annotations) = 0;
  virtual void patch_node_annotations(const std::string& node, const nlohmann::json& annotations) = 0;
  // POST pods/{name}/binding.
  virtual void bind(const PodRef& pod, const std::string& node) = 0;
  // A core/v1 Event on the pod (type "Normal" or "Warning"). May be sent
  // later (the API writer queues events, as client-go's recorder does, so a
  // filter does not wait on an API round trip for a message to humans).
  virtual void record_event(const PodRef& pod, const std::string& type, const std::string& reason,
                            const std::string& message) = 0;
  // Returns once the events recorded so far were sent or dropped.
  virtual void flush() {}
};

// How to reach an API server: from a kubeconfig file (its current context)
// or from the in-cluster service account.
struct KubeConnection {
  std::string server;  // https://host:port (a path prefix is kept: https://proxy/k8s/clusters/c-1)
  std::string bearer_token;
  // A token file is re-read (at most once a minute), as client-go does:
  // projected service-account tokens rotate under a running pod.
  std::string bearer_token_file;
  std::string ca_file;           // empty: system CAs
  std::string client_cert_file;  // client-certificate auth, when the kubeconfig uses it
  std::string client_key_file;
  // The kubeconfig's *-data fields, decoded (PEM text); they win over the
  // files, as in client-go. Kept in memory, never written out but the CA.
  std::string ca_data;
  std::string client_cert_data;
  std::string client_key_data;
  bool insecure_skip_tls_verify = false;
};

// Throws core::InputError naming the file and field when the kubeconfig is
// unusable; reads /var/run/secrets/kubernetes.io/serviceaccount and
// KUBERNETES_SERVICE_HOST/PORT for in-cluster.
KubeConnection connection_from_kubeconfig(const std::string& path);
KubeConnection connection_in_cluster();
// The same with the service-account folder and the two variables given
// (tests; a sidecar that mounts the account elsewhere).
KubeConnection connection_in_cluster(const std::string& service_account_dir, const std::string& service_host,
                                     const std::string& service_port);

// How the feed paces itself. The defaults suit a real cluster; tests shrink
// them.
struct KubeFeedOptions {
  int list_page_size = 500;              // ?limit= (client-go's reflector pages by 500)
  int watch_timeout_seconds = 300;       // ?timeoutSeconds=: the server ends a quiet watch, we resume
  double backoff_initial_seconds = 0.5;  // after a failed watch or relist, doubling...
  double backoff_max_seconds = 30;       // ...up to this
  // What to follow. `gpuslice serve` wants every node and pod; a node agent
  // (`gpuslice monitor`) only its node's pods: nodes off, and a field
  // selector ("spec.nodeName=<node>", as client-go's informers take it).
  bool nodes = true;
  std::string pod_field_selector;
  // ResourceQuotas too (`gpuslice serve`: HAMi v2.10's namespace quotas). A
  // cluster that will not list them (403: the role lacks resourcequotas;
  // 404) is served without quotas, said once on stderr.
  bool quotas = false;
};

std::unique_ptr<ClusterFeed> make_kube_feed(const KubeConnection& connection,
                                            const KubeFeedOptions& options = {});
std::unique_ptr<ClusterWriter> make_kube_writer(const KubeConnection& connection);

}  // namespace gpuslice::serve
