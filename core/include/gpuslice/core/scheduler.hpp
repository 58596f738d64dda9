// The one entry point every front end uses (CLI, simulator, Python, the
// extender): filter every node with HAMi's fit, rank the fitting ones with a
// policy, and report what HAMi would report (failed nodes, events).
#pragma once

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/node_order.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/quota.hpp"
#include "gpuslice/core/request.hpp"
#include "gpuslice/core/request_shape.hpp"
#include "gpuslice/core/winner_tree.hpp"

namespace gpuslice::core {

struct Event {
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
  std::vector<Event> events;         // Detail::Full
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
  bool quota_armed() const { return quota_ != nullptr; }

  // Charges the decision's allocation (and the pod's namespace in `quotas`,
  // when given) and tells the policy.
  static void commit(Cluster& cluster, const PodRequest& pod, const Decision& decision, Policy& policy,
                     QuotaBook* quotas);
  static void commit(Cluster& cluster, const PodRequest& pod, const Decision& decision, Policy& policy);

 private:
  // `allowed`: when given, nodes whose entry differs from `allowed_stamp_` are skipped.
  Decision place_by_rank(const Cluster& cluster, const PodRequest& pod, Policy& policy,
                         const KeyRanking& ranking, const std::vector<uint32_t>* allowed = nullptr);
  Decision place_impl(const Cluster& cluster, const PodRequest& pod, Policy& policy, Detail detail,
                      const std::vector<size_t>* among, size_t asked);

  // The first node of this scan (since clear_seen_states) in the same state
  // as `id`: `id` itself when none was. Nodes in one state score alike.
  // With a policy that keys its own node state, that key must match too.
  size_t first_with_state(const Cluster& cluster, size_t id, const Policy& policy);
  void clear_seen_states(const Cluster& cluster);
  std::vector<uint32_t> name_rank_;
  std::vector<uint32_t> name_order_;  // node ids by name
  uint64_t name_epoch_ = 0;
  const PodAllocation no_grants_{};  // what a dialect's score is handed before the grants exist

  // Arms quota_ for this pod: its namespace's headroom when some node
  // could take more than it (else the quota cannot refuse it and the caches
  // stay exact). Caches that outlive one scan are bypassed while armed.
  void arm_quota(const Cluster& cluster, const PodRequest& pod);
  int64_t largest_card_mib(const Cluster& cluster);
  const QuotaBook* quotas_ = nullptr;
  std::optional<QuotaHeadroom> headroom_;
  const QuotaHeadroom* quota_ = nullptr;  // &*headroom_ while armed
  uint64_t largest_card_epoch_ = 0;
  int64_t largest_card_mib_ = 0;

  FitScratch scratch_;
  // The full report's refusals: node -> (scan stamp, its entry in
  // Decision::failed), so a node in a refused node's state is refused alike.
  std::vector<std::pair<uint32_t, uint32_t>> refused_at_;
  std::vector<int> cards_;   // a share's fitting cards
  PodAllocation candidate_;  // a share on one of them
  uint64_t state_epoch_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> state_hash_;  // node -> (version, hash)
  // node -> the node last found in its state by a full compare, and both
  // nodes' versions then (a node's version moves with each change of it).
  struct VerifiedSame {
    uint32_t same_as = UINT32_MAX;
    uint64_t same_as_version = 0;
    uint64_t own_version = 0;
    friend bool operator==(const VerifiedSame&, const VerifiedSame&) = default;
  };
  std::vector<VerifiedSame> verified_same_;
  // This scan's states: open addressing on the state hash, emptied by
  // moving the stamp on (a scan per placement must not clear a table).
  struct SeenState {
    uint64_t hash = 0;
    uint64_t key = 0;  // the policy's own node state (keys_node_state)
    uint32_t node = 0;
    uint32_t stamp = 0;
  };
  std::vector<SeenState> seen_states_;
  uint32_t seen_stamp_ = 0;
  struct CachedScore {
    bool fits = false;
    NodeScore score;
  };
  struct ShapeScores {
    std::vector<CachedScore> nodes;  // node -> score as of the change log's position seen_changes
    WinnerTree fitting;              // the fitting nodes by score: the best at the root
    size_t seen_changes = 0;         // the cluster's change log read so far
    bool primed = false;
    // Random: the nodes that may fit, in no order, and each one's place in
    // that list (UINT32_MAX: not in it).
    std::vector<uint32_t> members;
    std::vector<uint32_t> member_at;
  };
  // The nodes of `cache` changed since its last visit (all of them when it
  // is new or the change log moved past it).
  template <typename F>
  void for_changed_nodes(const Cluster& cluster, ShapeScores& cache, F visit);
  // The scores kept for request shape `shape` (reset when the cluster or policy changes).
  ShapeScores& shape_scores(const Cluster& cluster, const Policy& policy, size_t shape);
  RequestShapes shapes_;
  std::unordered_map<size_t, ShapeScores> score_cache_;  // shape -> scores
  uint64_t score_epoch_ = 0;
  const Policy* score_policy_ = nullptr;
  NodeOrderIndex order_;
  std::vector<uint32_t> draw_scratch_;  // Random without a shape cache: nodes that may fit
  // place_among's candidates: node -> the stamp of the last call naming it.
  std::vector<uint32_t> allowed_;
  uint32_t allowed_stamp_ = 0;
  std::vector<size_t> allowed_ids_;  // the same nodes, in cluster order
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
std::vector<Event> filtering_failed_events(const Cluster& cluster, const Decision& decision,
                                           size_t considered);

}  // namespace gpuslice::core
