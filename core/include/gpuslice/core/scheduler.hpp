// The one entry point every front end uses (CLI, simulator, Python, the
// extender): filter every node with HAMi's fit, rank the fitting ones with a
// policy, and report what HAMi would report (failed nodes, events).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core {

struct Event {
  std::string type;     // Normal | Warning
  std::string reason;   // FilteringSucceed | FilteringFailed
  std::string message;
};

struct FittingNode {
  size_t node = 0;
  NodeScore score;
};

struct Decision {
  std::optional<size_t> node;
  double score = 0;                                     // shown score of the chosen node
  PodAllocation allocation;
  std::vector<std::pair<size_t, std::string>> failed;  // node -> HAMi reason (Detail::Full)
  std::vector<FittingNode> fitting;                     // best last, as HAMi sorts them
  std::vector<Event> events;                            // Detail::Full
  bool placed() const { return node.has_value(); }
};

enum class Detail {
  Full,     // every node's reason and HAMi's event texts (CLI, extender)
  Minimal,  // only the choice (simulator hot path)
};

class Scheduler {
 public:
  // The pod's steering annotations override the policy's defaults.
  Decision place(const Cluster& cluster, const PodRequest& pod, Policy& policy,
                 Detail detail = Detail::Full) const;

  // Charges the decision's allocation and tells the policy.
  static void commit(Cluster& cluster, const PodRequest& pod, const Decision& decision, Policy& policy);

 private:
  mutable FitScratch scratch_;
};

// The HAMi event texts, exposed for the extender and tests.
std::string filtering_succeed_message(const Cluster& cluster, const Decision& decision);
std::vector<Event> filtering_failed_events(const Cluster& cluster, const Decision& decision);

}  // namespace gpuslice::core
