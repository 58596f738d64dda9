// The decision's side effects on the API server: annotation patches, the
// pods/binding subresource and core/v1 Events, as HAMi's scheduler writes them.
#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "gpuslice/serve/cluster_io.hpp"
#include "kube_http.hpp"

namespace gpuslice::serve {

namespace {

constexpr auto kCallTimeout = std::chrono::seconds(30);

// RFC 3339 in UTC, seconds precision: metav1.Time's wire form.
std::string rfc3339_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Event names are <pod>.<16 hex digits>, as client-go's recorder makes them.
std::string event_name(const std::string& pod) {
  static std::mutex m;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard<std::mutex> lock(m);
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  return fmt::format("{}.{:016x}", pod, static_cast<uint64_t>(ns) ^ (rng() & 0xffff));
}

class KubeWriter final : public ClusterWriter {
 public:
  explicit KubeWriter(const KubeConnection& c) : http_(c), sender_([this] { send_events(); }) {}

  ~KubeWriter() override {
    {
      std::lock_guard<std::mutex> lock(events_mutex_);
      stopping_ = true;
    }
    events_changed_.notify_all();
    sender_.join();
  }

  void patch_pod_annotations(const PodRef& pod, const nlohmann::json& annotations) override {
    call("PATCH", fmt::format("/api/v1/namespaces/{}/pods/{}", pod.namespace_name, pod.name),
         annotation_patch(annotations), "application/strategic-merge-patch+json");
  }

  void patch_node_annotations(const std::string& node, const nlohmann::json& annotations) override {
    call("PATCH", fmt::format("/api/v1/nodes/{}", node), annotation_patch(annotations),
         "application/strategic-merge-patch+json");
  }

  void bind(const PodRef& pod, const std::string& node) override {
    const nlohmann::json binding = {
        {"apiVersion", "v1"},
        {"kind", "Binding"},
        {"metadata", {{"name", pod.name}, {"namespace", pod.namespace_name}, {"uid", pod.uid}}},
        {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
    call("POST", fmt::format("/api/v1/namespaces/{}/pods/{}/binding", pod.namespace_name, pod.name),
         binding.dump(), "application/json");
  }

  // Queued and sent by one thread, as client-go's event broadcaster does:
  // the filter answers without waiting on the API server for a message to
  // humans. A full queue drops the event (and says so), as client-go does.
  void record_event(const PodRef& pod, const std::string& type, const std::string& reason,
                    const std::string& message) override {
    // Only copied here: the Event's JSON is written by the sender thread. A
    // refusal's message names every node (120 kB at 10,000 nodes), and
    // escaping it took the filter's own thread as long as the decision.
    PendingEvent event{pod, event_name(pod.name), type, reason, message, rfc3339_now()};
    {
      std::lock_guard<std::mutex> lock(events_mutex_);
      if (events_.size() >= kMaxQueuedEvents) {
        if (dropped_++ % 1000 == 0)
          std::cerr << "gpuslice serve: the API server is not keeping up with events; " << dropped_
                    << " dropped so far\n";
        return;
      }
      events_.push_back(std::move(event));
    }
    events_changed_.notify_all();
  }

  void flush() override {
    std::unique_lock<std::mutex> lock(events_mutex_);
    events_changed_.wait(lock, [this] { return (events_.empty() && !sending_) || stopping_; });
  }

 private:
  static std::string annotation_patch(const nlohmann::json& annotations) {
    return nlohmann::json{{"metadata", {{"annotations", annotations}}}}.dump();
  }

  // One call on a pooled keep-alive client (handlers call concurrently; an
  // httplib client serves one request at a time).
  void call(const std::string& method, const std::string& path, const std::string& body,
            const std::string& content_type) {
    std::unique_ptr<httplib::ClientImpl> cli;
    {
      std::lock_guard<std::mutex> lock(pool_mutex_);
      if (!pool_.empty()) {
        cli = std::move(pool_.back());
        pool_.pop_back();
      }
    }
    if (!cli) cli = http_.client(kCallTimeout);
    httplib::Request req;
    req.method = method;
    req.path = http_.prefix() + path;
    req.headers = http_.headers();
    req.headers.emplace("Content-Type", content_type);
    req.body = body;
    httplib::Result res = cli->send(req);
    if (!res) throw ApiError(0, transport_failure(http_.server(), res.error()));
    const int status = res->status;
    const std::string reply = std::move(res->body);
    {
      std::lock_guard<std::mutex> lock(pool_mutex_);
      if (pool_.size() < 8) pool_.push_back(std::move(cli));
    }
    if (status < 200 || status > 299) throw ApiError(status, status_message(status, reply));
  }

  void send_events() {
    std::unique_lock<std::mutex> lock(events_mutex_);
    while (true) {
      events_changed_.wait(lock, [this] { return !events_.empty() || stopping_; });
      if (stopping_) return;  // what is still queued is dropped: shutdown must not wait on the API
      const PendingEvent event = std::move(events_.front());
      events_.pop_front();
      sending_ = true;
      lock.unlock();
      try {
        call("POST", fmt::format("/api/v1/namespaces/{}/events", event.pod.namespace_name), event_json(event),
             "application/json");
      } catch (const std::exception& e) {
        std::cerr << "gpuslice serve: event not recorded: " << e.what() << "\n";
      }
      lock.lock();
      sending_ = false;
      events_changed_.notify_all();
    }
  }

  static constexpr size_t kMaxQueuedEvents = 1000;  // client-go's broadcaster queue length

  struct PendingEvent {
    PodRef pod;
    std::string name, type, reason, message, time;
  };

  static std::string event_json(const PendingEvent& e) {
    const nlohmann::json event = {{"apiVersion", "v1"},
                                  {"kind", "Event"},
                                  {"metadata", {{"name", e.name}, {"namespace", e.pod.namespace_name}}},
                                  {"involvedObject",
                                   {{"apiVersion", "v1"},
                                    {"kind", "Pod"},
                                    {"name", e.pod.name},
                                    {"namespace", e.pod.namespace_name},
                                    {"uid", e.pod.uid}}},
                                  {"reason", e.reason},
                                  {"message", e.message},
                                  {"type", e.type},
                                  {"source", {{"component", "gpuslice-scheduler"}}},
                                  {"reportingComponent", "gpuslice-scheduler"},
                                  {"firstTimestamp", e.time},
                                  {"lastTimestamp", e.time},
                                  {"count", 1}};
    return event.dump();
  }

  KubeHttp http_;
  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<httplib::ClientImpl>> pool_;
  std::mutex events_mutex_;
  std::condition_variable events_changed_;
  std::deque<PendingEvent> events_;
  bool sending_ = false, stopping_ = false;
  uint64_t dropped_ = 0;
  std::thread sender_;  // last: starts once the members above exist
};

}  // namespace

std::unique_ptr<ClusterWriter> make_kube_writer(const KubeConnection& connection) {
  return std::make_unique<KubeWriter>(connection);
}

}  // namespace gpuslice::serve
