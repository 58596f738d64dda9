// List + watch of Nodes and Pods, the way client-go's reflector keeps an
// informer in step: a paged list gives the whole cluster and a resourceVersion,
// a watch from that version streams the changes, a 410 Gone (the version is
// older than the server's history) means list again. Terminated pods are
// passed through: the decision state drops them (one rule, one place).
// Pages and watch lines are read by the core's one reader: a decoded sink
// gets each object decoded, a JSON sink the object as the API wrote it.
#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <set>
#include <thread>

#include "api_objects.hpp"
#include "gpuslice/core/codec/kube_reader.hpp"
#include "gpuslice/core/codec/resource_quota.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/serve/cluster_io.hpp"
#include "kube_http.hpp"

namespace gpuslice::serve {

namespace {

constexpr auto kListTimeout = std::chrono::seconds(60);

std::string url_encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

enum class Resource { Nodes, Pods, Quotas };
const char* path_of(Resource r) {
  return r == Resource::Nodes  ? "/api/v1/nodes"
         : r == Resource::Pods ? "/api/v1/pods"
                               : "/api/v1/resourcequotas";
}
const char* kind_of(Resource r) {
  return r == Resource::Nodes ? "Node" : r == Resource::Pods ? "Pod" : "ResourceQuota";
}

// A ResourceQuota as HAMi reads it; nothing (said on stderr) when a managed
// key holds what no quota may: one bad object must not stop the feed.
std::optional<core::NamespaceQuota> quota_of(const core::codec::ResourceQuotaObject& q,
                                             const std::string& source) {
  try {
    return core::codec::namespace_quota(q, source);
  } catch (const core::InputError& e) {
    fmt::print(stderr, "gpuslice serve: ResourceQuota not counted: {}\n", e.what());
    return std::nullopt;
  }
}

struct Listed {
  std::vector<nlohmann::json> items;           // for a JSON sink
  std::vector<core::codec::NodeObject> nodes;  // for a decoded one
  std::vector<core::codec::PodObject> pods;
  std::vector<core::NamespaceQuota> quotas;
  std::string resource_version;
};

// A stream ended for one of these reasons.
enum class WatchEnd { Closed, Gone, Failed, Superseded };

class KubeFeed final : public ClusterFeed {
 public:
  KubeFeed(const KubeConnection& c, const KubeFeedOptions& o) : http_(c), options_(o) {}
  ~KubeFeed() override { stop(); }

  void start(ClusterSink& sink) override {
    sink_ = &sink;
    relist_now();  // throws: the caller decides whether to serve without a cluster
    for (Resource r : {Resource::Nodes, Resource::Pods, Resource::Quotas}) {
      if (r == Resource::Nodes && !options_.nodes) continue;
      if (r == Resource::Quotas && !quotas_listed_) continue;
      ++running_;  // before the thread exists, so stop() never misses it
      threads_.emplace_back([this, r] { watch_loop(r); });
    }
  }

  void stop() override {
    stopping_ = true;
    wake_.notify_all();
    // A request may be just opening its socket when we look; keep shutting
    // down what is in flight until every thread has left.
    while (running_ > 0) {
      {
        std::lock_guard<std::mutex> lock(clients_mutex_);
        for (auto* c : in_flight_) c->stop();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (auto& t : threads_)
      if (t.joinable()) t.join();
    threads_.clear();
  }

 private:
  // Registers a client so stop() and a relist can cut its request short.
  struct InFlight {
    KubeFeed& feed;
    httplib::ClientImpl* client;
    InFlight(KubeFeed& f, httplib::ClientImpl* c) : feed(f), client(c) {
      std::lock_guard<std::mutex> lock(feed.clients_mutex_);
      feed.in_flight_.insert(client);
    }
    ~InFlight() {
      std::lock_guard<std::mutex> lock(feed.clients_mutex_);
      feed.in_flight_.erase(client);
    }
  };

  Listed list(Resource r, bool decoded) {
    Listed out;
    std::string next;
    bool paged = options_.list_page_size > 0;
    auto cli = http_.client(kListTimeout);
    InFlight guard(*this, cli.get());
    core::codec::ReadOptions read;
    read.default_kind = kind_of(r);  // the API's list items name no kind
    for (;;) {
      if (stopping_) throw ApiError(0, "stopping");
      std::string path = http_.prefix() + path_of(r);
      const std::string selector = selector_of(r);
      if (paged) path += fmt::format("?limit={}", options_.list_page_size);
      if (paged && !next.empty()) path += "&continue=" + url_encode(next);
      if (!selector.empty()) path += (paged ? "&" : "?") + selector;
      auto res = cli->Get(path, http_.headers());
      if (!res) throw ApiError(0, transport_failure(http_.server(), res.error()));
      if (res->status == 410 && !next.empty()) {
        // The continue token expired mid-list: list whole, as client-go falls back.
        out = {};
        next.clear();
        paged = false;
        continue;
      }
      if (res->status != 200) throw ApiError(res->status, status_message(res->status, res->body));
      core::codec::ListInfo page;
      try {
        const core::codec::KubeText text = core::codec::KubeText::from_string(res->body, path_of(r));
        res->body = std::string();  // read from the copy; one page in memory at a time
        page = core::codec::read_kube_objects(
            text,
            [&](core::codec::KubeObject&& object, const core::codec::ReadContext& context) {
              if (!decoded)
                out.items.push_back(api_json(object, context));
              else if (auto* n = std::get_if<core::codec::NodeObject>(&object))
                out.nodes.push_back(std::move(*n));
              else if (auto* p = std::get_if<core::codec::PodObject>(&object))
                out.pods.push_back(std::move(*p));
              else if (auto* q = std::get_if<core::codec::ResourceQuotaObject>(&object)) {
                if (auto quota = quota_of(*q, path_of(r))) out.quotas.push_back(std::move(*quota));
              }
            },
            read);
      } catch (const core::InputError& e) {
        throw ApiError(res->status,
                       fmt::format("{} list is not a list of objects: {}", path_of(r), e.what()));
      }
      if (page.kind.empty())
        throw ApiError(res->status, fmt::format("{} answered something that is not a list", path_of(r)));
      out.resource_version = page.resource_version;
      next = page.continue_token;
      if (!paged || next.empty()) return out;
    }
  }

  // Lists both kinds and hands the sink the whole cluster; the watches then
  // resume from the new versions (a stream from before is cut short).
  void relist_now() {
    std::lock_guard<std::mutex> one_at_a_time(relist_mutex_);
    relist_locked();
  }

  // After a 410 on a watch begun at `generation`: both watches usually go
  // Gone together, and one relist serves both.
  void relist_after(uint64_t generation) {
    std::lock_guard<std::mutex> one_at_a_time(relist_mutex_);
    {
      std::lock_guard<std::mutex> lock(state_mutex_);
      if (generation != generation_) return;
    }
    relist_locked();
  }

  // "fieldSelector=..." for the pods when one is set, else "".
  std::string selector_of(Resource r) const {
    if (r != Resource::Pods || options_.pod_field_selector.empty()) return "";
    return "fieldSelector=" + url_encode(options_.pod_field_selector);
  }

  void relist_locked() {
    DecodedSink* decoded = sink_->decoded();
    Listed nodes = options_.nodes ? list(Resource::Nodes, decoded != nullptr) : Listed{};
    Listed pods = list(Resource::Pods, decoded != nullptr);
    Listed quotas;
    if (options_.quotas && decoded && !quotas_refused_) {
      try {
        quotas = list(Resource::Quotas, true);
        quotas_listed_ = true;
      } catch (const ApiError& e) {
        if (e.status() != 403 && e.status() != 404) throw;
        // The role may not list them (deploy/rbac.yaml grants it): serve without.
        fmt::print(stderr,
                   "gpuslice serve: ResourceQuotas not followed ({}); no namespace quota is checked\n",
                   e.what());
        quotas_refused_ = true;
      }
    }
    std::lock_guard<std::mutex> lock(state_mutex_);
    if (decoded && quotas_listed_) {
      decoded->quotas_replaced(std::move(quotas.quotas));
      rv_quotas_ = quotas.resource_version;
    }
    if (decoded)
      decoded->replace_all(std::move(nodes.nodes), std::move(pods.pods));
    else
      sink_->replace_all(nodes.items, pods.items);
    rv_nodes_ = nodes.resource_version;
    rv_pods_ = pods.resource_version;
    ++generation_;
    std::lock_guard<std::mutex> clients(clients_mutex_);
    for (auto* c : watching_) c->stop();
  }

  void sleep_backoff(double& seconds) {
    std::unique_lock<std::mutex> lock(wake_mutex_);
    wake_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stopping_.load(); });
    seconds = std::min(seconds * 2, options_.backoff_max_seconds);
  }

  void watch_loop(Resource r) {
    double backoff = options_.backoff_initial_seconds;
    bool need_relist = false;
    uint64_t gone_at = 0;  // the generation whose watch went Gone
    while (!stopping_) {
      if (need_relist) {
        try {
          relist_after(gone_at);
          need_relist = false;
          backoff = options_.backoff_initial_seconds;
        } catch (const ApiError& e) {
          if (stopping_) break;
          fmt::print(stderr, "gpuslice serve: relist failed ({}); retrying\n", e.what());
          sleep_backoff(backoff);
          continue;
        }
      }
      bool connected = false;
      const WatchEnd end = watch_once(r, connected, gone_at);
      if (connected) backoff = options_.backoff_initial_seconds;
      if (stopping_) break;
      switch (end) {
        case WatchEnd::Closed:
        case WatchEnd::Superseded:
          break;  // the server ended a quiet watch, or a relist moved us on: resume
        case WatchEnd::Gone:
          need_relist = true;
          break;
        case WatchEnd::Failed:
          sleep_backoff(backoff);
          break;
      }
    }
    --running_;
  }

  WatchEnd watch_once(Resource r, bool& connected, uint64_t& generation) {
    std::string rv;
    {
      std::lock_guard<std::mutex> lock(state_mutex_);
      generation = generation_;
      rv = version_of(r);
    }
    auto cli = http_.client(std::chrono::seconds(options_.watch_timeout_seconds + 30));
    InFlight guard(*this, cli.get());
    {
      std::lock_guard<std::mutex> lock(clients_mutex_);
      watching_.insert(cli.get());
    }
    struct Unwatch {
      KubeFeed& f;
      httplib::ClientImpl* c;
      ~Unwatch() {
        std::lock_guard<std::mutex> lock(f.clients_mutex_);
        f.watching_.erase(c);
      }
    } unwatch{*this, cli.get()};
    // A relist may have happened between reading the version and registering.
    {
      std::lock_guard<std::mutex> lock(state_mutex_);
      if (generation != generation_) return WatchEnd::Superseded;
    }

    const std::string path =
        http_.prefix() +
        fmt::format("{}?watch=1&resourceVersion={}&allowWatchBookmarks=true&timeoutSeconds={}", path_of(r),
                    url_encode(rv), options_.watch_timeout_seconds) +
        (selector_of(r).empty() ? "" : "&" + selector_of(r));
    int status = 0;
    std::string error_body, pending;
    WatchEnd end = WatchEnd::Closed;
    core::codec::ReadOptions read;
    read.default_kind = kind_of(r);
    read.count_lines = false;
    auto on_line = [&](const std::string& line) -> bool {
      core::codec::WatchEvent ev;
      try {
        ev = core::codec::read_watch_event(core::codec::KubeText::from_string(line, path_of(r)), read);
      } catch (const core::InputError& e) {
        fmt::print(stderr, "gpuslice serve: {} watch sent a line that is not an event ({})\n", path_of(r),
                   e.what());
        end = WatchEnd::Failed;
        return false;
      }
      const std::string& type = ev.type;
      if (type == "ERROR") {
        end = ev.status_code == 410 ? WatchEnd::Gone : WatchEnd::Failed;
        if (ev.status_code != 410)
          fmt::print(stderr, "gpuslice serve: {} watch error: {}\n", path_of(r), ev.raw_object);
        return false;
      }
      if (!ev.object || core::codec::header_of(*ev.object).meta.kind != core::codec::Scalar::Kind::Mapping) {
        end = WatchEnd::Failed;
        return false;
      }
      std::lock_guard<std::mutex> lock(state_mutex_);
      if (generation != generation_) {
        end = WatchEnd::Superseded;
        return false;
      }
      WatchKind kind;
      if (type == "ADDED")
        kind = WatchKind::Added;
      else if (type == "MODIFIED")
        kind = WatchKind::Modified;
      else if (type == "DELETED")
        kind = WatchKind::Deleted;
      else if (type == "BOOKMARK")
        kind = WatchKind::Added;  // unused: a bookmark only moves the version on
      else {
        end = WatchEnd::Failed;
        return false;
      }
      if (type != "BOOKMARK") {
        DecodedSink* decoded = sink_->decoded();
        auto* node = std::get_if<core::codec::NodeObject>(&*ev.object);
        auto* pod = std::get_if<core::codec::PodObject>(&*ev.object);
        auto* quota = std::get_if<core::codec::ResourceQuotaObject>(&*ev.object);
        if ((r == Resource::Nodes && !node) || (r == Resource::Pods && !pod) ||
            (r == Resource::Quotas && !quota)) {
          end = WatchEnd::Failed;
          return false;
        }
        if (quota) {
          if (auto q = quota_of(*quota, path_of(r)); q && decoded)
            decoded->quota_changed(kind, std::move(*q));
        } else if (decoded && node)
          decoded->node_changed(kind, std::move(*node));
        else if (decoded)
          decoded->pod_changed(kind, std::move(*pod));
        else if (node)
          sink_->node_changed(kind, nlohmann::json::parse(ev.raw_object));
        else
          sink_->pod_changed(kind, nlohmann::json::parse(ev.raw_object));
      }
      version_of(r) = ev.resource_version;
      return true;
    };
    auto res = cli->Get(
        path, http_.headers(),
        [&](const httplib::Response& response) {
          status = response.status;
          connected = status == 200;
          return !stopping_;
        },
        [&](const char* data, size_t n) {
          if (stopping_) return false;
          if (status != 200) {
            if (error_body.size() < 64 * 1024) error_body.append(data, n);
            return true;
          }
          pending.append(data, n);
          size_t at;
          while ((at = pending.find('\n')) != std::string::npos) {
            const std::string line = pending.substr(0, at);
            pending.erase(0, at + 1);
            if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
            if (!on_line(line)) return false;
          }
          if (pending.size() > 64 * 1024 * 1024) {  // one object never grows this large
            end = WatchEnd::Failed;
            return false;
          }
          return true;
        });
    if (end != WatchEnd::Closed) return end;
    if (status == 410) return WatchEnd::Gone;
    if (status != 0 && status != 200) {
      fmt::print(stderr, "gpuslice serve: {} watch answered {}: {}\n", path_of(r), status,
                 status_message(status, error_body));
      return WatchEnd::Failed;
    }
    if (!res) {
      {
        std::lock_guard<std::mutex> lock(state_mutex_);
        if (generation != generation_) return WatchEnd::Superseded;
      }
      if (connected && res.error() == httplib::Error::Read) return WatchEnd::Closed;
      if (!stopping_)
        fmt::print(stderr, "gpuslice serve: {} watch: {}\n", path_of(r),
                   transport_failure(http_.server(), res.error()));
      return WatchEnd::Failed;
    }
    return WatchEnd::Closed;
  }

  KubeHttp http_;
  KubeFeedOptions options_;
  ClusterSink* sink_ = nullptr;
  std::atomic<bool> stopping_{false};
  std::atomic<int> running_{0};
  std::vector<std::thread> threads_;

  std::mutex relist_mutex_;
  std::mutex state_mutex_;  // the versions, the generation, and every call into the sink
  std::string rv_nodes_, rv_pods_, rv_quotas_;
  std::string& version_of(Resource r) {
    return r == Resource::Nodes ? rv_nodes_ : r == Resource::Pods ? rv_pods_ : rv_quotas_;
  }
  // Quotas: listed (then watched), or refused by the API (then left alone).
  bool quotas_listed_ = false, quotas_refused_ = false;
  uint64_t generation_ = 0;

  std::mutex clients_mutex_;
  std::set<httplib::ClientImpl*> in_flight_;
  std::set<httplib::ClientImpl*> watching_;

  std::mutex wake_mutex_;
  std::condition_variable wake_;
};

}  // namespace

std::unique_ptr<ClusterFeed> make_kube_feed(const KubeConnection& connection,
                                            const KubeFeedOptions& options) {
  return std::make_unique<KubeFeed>(connection, options);
}

}  // namespace gpuslice::serve
