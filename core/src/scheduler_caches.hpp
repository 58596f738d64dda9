// What a Scheduler keeps between placements, private to the scheduler:
// which nodes share a state (so a scan fits each state once), each request
// shape's scores (re-scored only for nodes changed since), the ranked node
// order of HAMi's pod-independent scores, the nodes' name order, the quota
// headroom of the pod being placed, and scratch space reused per node.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/node_order.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/quota.hpp"
#include "gpuslice/core/request_shape.hpp"
#include "gpuslice/core/scheduler.hpp"
#include "gpuslice/core/winner_tree.hpp"

namespace gpuslice::core {

struct Scheduler::Caches {
  // --- Node states: nodes in one state fit and score alike. ---
  // The first node of this scan (since clear_seen_states) in the same state
  // as `id`: `id` itself when none was. With a policy that keys its own node
  // state, that key must match too.
  size_t first_with_state(const Cluster& cluster, size_t id, const Policy& policy);
  void clear_seen_states(const Cluster& cluster);
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
    uint64_t key = 0;  // the policy's own node state (PolicyTraits::keys_node_state)
    uint32_t node = 0;
    uint32_t stamp = 0;
  };
  std::vector<SeenState> seen_states_;
  uint32_t seen_stamp_ = 0;
  // The full report's refusals: node -> (scan stamp, its entry in
  // Decision::failed), so a node in a refused node's state is refused alike.
  std::vector<std::pair<uint32_t, uint32_t>> refused_at_;

  // --- Scores per request shape, kept between placements. ---
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
  std::vector<uint32_t> draw_scratch_;  // Random without a shape cache: nodes that may fit

  // --- HAMi's pod-independent scores: the nodes in rank order. ---
  NodeOrderIndex order_;
  // place_among's candidates: node -> the stamp of the last call naming it.
  std::vector<uint32_t> allowed_;
  uint32_t allowed_stamp_ = 0;
  std::vector<size_t> allowed_ids_;  // the same nodes, in cluster order

  // --- Name order (reports; KAI's ties). ---
  std::span<const uint32_t> name_ranks(const Cluster& cluster);
  std::vector<uint32_t> name_rank_;
  std::vector<uint32_t> name_order_;  // node ids by name
  uint64_t name_epoch_ = 0;

  // --- The quota of the pod being placed (HAMi v2.10). ---
  // Arms quota_ for this pod: its namespace's headroom when some node
  // could take more than it (else the quota cannot refuse it and the caches
  // stay exact). Caches that outlive one scan are bypassed while armed.
  void arm_quota(const QuotaBook* quotas, const Cluster& cluster, const PodRequest& pod);
  int64_t largest_card_mib(const Cluster& cluster);
  std::optional<QuotaHeadroom> headroom_;
  const QuotaHeadroom* quota_ = nullptr;  // &*headroom_ while armed
  uint64_t largest_card_epoch_ = 0;
  int64_t largest_card_mib_ = 0;

  // --- Scratch reused per node. ---
  FitScratch scratch_;
  std::vector<int> cards_;           // a share's fitting cards
  PodAllocation candidate_;          // a share on one of them
  const PodAllocation no_grants_{};  // what a dialect's score is handed before the grants exist
};

template <typename F>
void Scheduler::Caches::for_changed_nodes(const Cluster& cluster, ShapeScores& cache, F visit) {
  const size_t seen = cache.seen_changes;
  cache.seen_changes = cluster.change_count();
  if (!cache.primed) {
    for (size_t id = 0; id < cluster.size(); ++id) visit(id);
    cache.primed = true;
  } else if (seen < cluster.first_change() || cluster.change_count() - seen >= cluster.size()) {
    // The log moved past this cache, or is longer than the cluster: one
    // scan in node order, visiting each node changed since.
    for (size_t id = 0; id < cluster.size(); ++id)
      if (cluster.changed_at(id) > seen) visit(id);
  } else {
    // Each node changed since, at its latest entry in the log.
    for (size_t i = seen; i < cluster.change_count(); ++i) {
      const uint32_t id = cluster.changed_node(i);
      if (cluster.changed_at(id) == i + 1) visit(id);
    }
  }
}

}  // namespace gpuslice::core
