// A small in-process Kubernetes API server for tests: the real paths, JSON
// and status codes for what `gpuslice serve` calls (paged lists, watches
// from a resourceVersion with bookmarks and 410 Gone, annotation patches,
// pods/binding, events, bearer tokens). Objects start from
// tests/serve/data/api fixtures shaped as a kube-apiserver answers.
#pragma once

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "gpuslice/serve/cluster_io.hpp"

namespace gpuslice::serve::testing {

class ApiDouble {
 public:
  // Loads nodes.json and pods.json from `data_dir` (tests/serve/data/api).
  explicit ApiDouble(const std::string& data_dir, std::string token = "test-token");
  ~ApiDouble();  // stops the server and its streams
  ApiDouble(const ApiDouble&) = delete;
  ApiDouble& operator=(const ApiDouble&) = delete;

  std::string server() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& token() const { return token_; }

  // Changes as a controller would make them: each bumps the resourceVersion
  // and is streamed to open watches.
  void add_pod(nlohmann::json pod);
  void delete_pod(const std::string& ns, const std::string& name);
  // ResourceQuotas (/api/v1/resourcequotas, none at first): added or
  // modified, deleted. Until one is put, the path answers 404 as a cluster
  // whose role may not list them would answer 403.
  void put_quota(nlohmann::json quota);
  void delete_quota(const std::string& ns, const std::string& name);
  // A recorded watch line ({"type":..., "object":...}) replayed as is.
  void replay_watch_line(const std::string& resource, const std::string& line);
  // A BOOKMARK at the current resourceVersion on every open watch.
  void bookmark();
  // Forgets all history (as a restarted watch cache does): a watch from any
  // version seen so far gets 410 Gone; open watches are closed.
  void expire_history();
  // Answer a too-old watch with HTTP 410 instead of the in-stream ERROR event.
  void gone_as_http_status(bool on) { gone_as_http_ = on; }
  // Closes open watch streams without forgetting history (a load balancer idle cut).
  void drop_watches();

  nlohmann::json pod(const std::string& ns, const std::string& name) const;
  nlohmann::json node(const std::string& name) const;
  std::vector<nlohmann::json> events() const;
  uint64_t resource_version() const;
  int list_calls(const std::string& resource) const;
  // The fieldSelector of the last list of `resource` ("" when none). Lists
  // honour "spec.nodeName=<node>" as the apiserver does (watches do not
  // filter: a client re-checks what it gets).
  std::string field_selector(const std::string& resource) const;
  int watch_calls(const std::string& resource) const;
  int open_watches() const { return open_watches_; }

 private:
  struct Change {
    uint64_t rv;
    std::string resource;  // "nodes" | "pods"
    std::string line;      // the watch line as sent
  };

  void routes();
  bool authorised(const httplib::Request& req, httplib::Response& res) const;
  void status(httplib::Response& res, const std::string& fixture, int code,
              const std::vector<std::pair<std::string, std::string>>& fill) const;
  void list(const std::string& resource, const httplib::Request& req, httplib::Response& res);
  void watch(const std::string& resource, const httplib::Request& req, httplib::Response& res);
  // Callers hold mutex_.
  uint64_t bump(nlohmann::json& object, const std::string& resource, const std::string& type);
  void emit(const std::string& resource, const std::string& type, const nlohmann::json& object, uint64_t rv);

  std::map<std::string, std::string> field_selectors_;
  std::string data_dir_;
  std::string token_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t rv_ = 0;
  uint64_t oldest_rv_ = 0;  // a watch from below this is 410 Gone
  uint64_t drop_generation_ = 0;
  std::map<std::string, nlohmann::json> nodes_;   // by name
  std::map<std::string, nlohmann::json> pods_;    // by namespace/name
  std::map<std::string, nlohmann::json> quotas_;  // by namespace/name
  bool serve_quotas_ = false;
  std::vector<Change> history_;
  std::vector<nlohmann::json> events_;
  std::map<std::string, int> list_calls_, watch_calls_;
  std::atomic<bool> gone_as_http_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<int> open_watches_{0};
};

// The fixtures the double starts from.
inline const std::string kApiData = GPUSLICE_SERVE_TEST_DATA "/api";

// How a client reaches the double: its address and bearer token.
inline KubeConnection connection_to(const ApiDouble& api) {
  KubeConnection c;
  c.server = api.server();
  c.bearer_token = api.token();
  return c;
}

}  // namespace gpuslice::serve::testing
