// A ClusterSink that records what the feed delivers, for tests to wait on.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include "gpuslice/serve/cluster_io.hpp"

namespace gpuslice::serve::testing {

struct RecordingSink : ClusterSink {
  std::mutex mutex;
  std::condition_variable changed;
  int replacements = 0;
  std::vector<nlohmann::json> nodes, pods;  // from the last replace_all
  std::vector<std::pair<WatchKind, nlohmann::json>> node_events, pod_events;

  void replace_all(const std::vector<nlohmann::json>& n, const std::vector<nlohmann::json>& p) override {
    std::lock_guard<std::mutex> lock(mutex);
    ++replacements;
    nodes = n;
    pods = p;
    changed.notify_all();
  }
  void node_changed(WatchKind kind, const nlohmann::json& object) override {
    std::lock_guard<std::mutex> lock(mutex);
    node_events.emplace_back(kind, object);
    changed.notify_all();
  }
  void pod_changed(WatchKind kind, const nlohmann::json& object) override {
    std::lock_guard<std::mutex> lock(mutex);
    pod_events.emplace_back(kind, object);
    changed.notify_all();
  }
  // Waits (bounded) until `ready` holds under the lock.
  bool wait(const std::function<bool()>& ready, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    std::unique_lock<std::mutex> lock(mutex);
    return changed.wait_for(lock, limit, ready);
  }
};

}  // namespace gpuslice::serve::testing
