// The one entry point every front end uses (CLI, simulator, Python, the
// extender): filter every node with HAMi's fit, rank the fitting ones with a
// policy, and report what HAMi would report (failed nodes, events).
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/quota.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core {

// A Kubernetes Event on the pod, as HAMi's filter records it (the
// simulator's timed queue item is sim::Event).
struct KubeEvent {
  std::string type;    // Normal | Warning
  std::string reason;  // FilteringSucceed | FilteringFailed
  std::string message;
};

struct FittingNode {
  size_t node = 0;
  NodeScore score;
};

struct Decision {
  std::optional<size_t> node;
  double score = 0;  // shown score of the chosen node
  PodAllocation allocation;
  std::vector<std::pair<size_t, Refusal>> failed;  // node -> why not (Detail::Full)
  // Indices into `failed` in their nodes' name order, when the full report
  // made them (for HAMi's event texts); front ends listing the refusals by
  // name take them instead of ordering 10,000 nodes again.
  std::vector<uint32_t> failed_name_order;
  std::vector<FittingNode> fitting;  // best last, as HAMi sorts them
  std::vector<KubeEvent> events;     // Detail::Full
  bool placed() const { return node.has_value(); }
};

enum class Detail {
  Full,     // every node's reason and HAMi's event texts (CLI, small filters)
  Minimal,  // only the choice (simulator hot path, the extender's large filters)
};

// Not thread-safe: one Scheduler per thread (it keeps caches between calls). A server (the extender) must
// hold one lock across place() and commit() so two pods never take the same
// capacity (HAMi's filter has no such lock: issues #2232, #1330).
class Scheduler {
 public:
  Scheduler();
  ~Scheduler();
  Scheduler(const Scheduler& other);  // a copy keeps the caches (they stay exact)
  Scheduler(Scheduler&& other) noexcept;

  // The pod's steering annotations override the policy's defaults. A
  // minimal placement re-scores only the nodes changed since a pod of the
  // same request shape (request_shape.hpp) was last placed: use one
  // Scheduler per cluster and policy for that cache to pay off.
  Decision place(const Cluster& cluster, const PodRequest& pod, Policy& policy, Detail detail = Detail::Full);

  // The extender's filter: only the nodes kube-scheduler passed. `asked`:
  // how many nodes it named (HAMi's events count those, registered or not).
  // Full: every candidate's reason and HAMi's event texts. Minimal: the
  // choice alone, found the way place() finds it (the ranked walk for
  // HAMi's pod-independent scores), and the full report only when no
  // candidate fits (FailedNodes needs every reason then). Either way the
  // same node and cards: equal ranks go to the node first in the cluster.
  Decision place_among(const Cluster& cluster, const std::vector<size_t>& candidates, size_t asked,
                       const PodRequest& pod, Policy& policy, Detail detail = Detail::Full);

  // Each node's place in name order (rank[id]), kept while the cluster's
  // node list (its epoch) stays: reports list nodes by name, and sorting
  // 10,000 names per refused filter cost more than the fit. KAI's policies
  // break ties by name with it.
  std::span<const uint32_t> name_ranks(const Cluster& cluster);

  // The namespaces' ResourceQuotas (HAMi v2.10): a pod whose namespace has
  // a limit it could reach is fitted with HAMi's per-card quota check
  // (ResourceQuotaNotFit). The book must outlive the scheduler's use of it;
  // null (the default): no quota. The caller charges and releases the book
  // as pods come and go (commit does when given it).
  void set_quotas(const QuotaBook* quotas) { quotas_ = quotas; }
  const QuotaBook* quotas() const { return quotas_; }
  // Whether the last placement fitted with the quota check (its namespace
  // could reach a limit): a refusal then may be the namespace's, not the nodes'.
  bool quota_armed() const;

  // Charges the decision's allocation (and the pod's namespace in `quotas`,
  // when given) and tells the policy.
  static void commit(Cluster& cluster, const PodRequest& pod, const Decision& decision, Policy& policy,
                     QuotaBook* quotas);
  static void commit(Cluster& cluster, const PodRequest& pod, const Decision& decision, Policy& policy);

 private:
  // What placements keep between calls (node states, per-shape scores, the
  // ranked order, name ranks, scratch): core/src/scheduler_caches.hpp.
  struct Caches;
  // One placement's scan: core/src/scheduler.cpp.
  struct Placement;
  Decision place_impl(const Cluster& cluster, const PodRequest& pod, Policy& policy, Detail detail,
                      const std::vector<size_t>* among, size_t asked);
  std::unique_ptr<Caches> caches_;
  const QuotaBook* quotas_ = nullptr;
};

// The HAMi event texts, exposed for the extender and tests. `considered`:
// how many nodes the filter was asked about (HAMi's len(NodeNames)).
std::string filtering_succeed_message(const Cluster& cluster, const Decision& decision, size_t considered);
// Sorts `items` by their node's place in name order (`rank`, from
// Scheduler::name_ranks; `node_of(item)` names the node, each at most
// once): a bucket pass when they are many of the cluster's nodes, a
// comparison sort when few.
template <class T, class NodeOf>
void sort_by_name_rank(std::vector<T>& items, std::span<const uint32_t> rank, NodeOf node_of) {
  if (items.size() * 16 < rank.size()) {
    std::sort(items.begin(), items.end(),
              [&](const T& a, const T& b) { return rank[node_of(a)] < rank[node_of(b)]; });
    return;
  }
  std::vector<uint32_t> at(rank.size(), UINT32_MAX);
  for (uint32_t i = 0; i < items.size(); ++i) at[rank[node_of(items[i])]] = i;
  std::vector<T> sorted;
  sorted.reserve(items.size());
  for (const uint32_t i : at)
    if (i != UINT32_MAX) sorted.push_back(std::move(items[i]));
  items = std::move(sorted);
}

// Decision::failed's entries (their indices) in their nodes' name order, the
// order every report lists them in; through `name_rank` (Scheduler::name_ranks)
// when it covers the cluster, else by comparing names.
std::vector<uint32_t> failed_by_name(const Cluster& cluster, const Decision& decision,
                                     std::span<const uint32_t> name_rank);

// HAMi's event texts for a refusal, the nodes listed in
// `decision.failed_name_order` (which the full report sets).
std::vector<KubeEvent> filtering_failed_events(const Cluster& cluster, const Decision& decision,
                                               size_t considered);

}  // namespace gpuslice::core
