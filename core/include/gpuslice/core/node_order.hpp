// Nodes kept in rank order for policies whose node score does not depend on
// the pod (HAMi binpack/spread): the best node for a pod is then the first
// node in that order that fits, so placement stops at the first fit instead
// of scoring the whole fleet. Nodes sit in small sorted blocks that carry
// the maxima of what their nodes have free, so whole blocks of nodes that
// cannot take the pod (full, short of CPU, no card with enough memory) are
// skipped in one comparison. Follows the cluster through its change log.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core {

// What a node has free, reduced to a few maxima (over its healthy cards).
// A pod that needs more than a summary offers cannot fit: a necessary test.
struct FreeSummary {
  int64_t host_cpu = 0, host_memory = 0;  // int64 max when the node does not track host capacity
  int64_t card_memory = 0;                // most free MiB on one card
  int32_t card_permille = 0;              // most free memory on one card, per mille of that card (rounded up)
  int32_t card_cores = 0;                 // most free cores on one card
  int32_t cards_with_slot = 0;            // cards with a free slot
  int32_t cards_for_whole = 0;            // cards a whole-card (100 cores) request may take
  static FreeSummary of(const NodeView& node);
  void widen(const FreeSummary& other);  // element-wise max
  bool may_take(const PodRequest& pod) const;
};

class NodeOrderIndex {
 public:
  // Brings the index up to the cluster's state. Only the direction asked
  // for (sign, as in visit_in_rank_order) is kept: binpack never pays for
  // spread's order and the other way round.
  void sync(const Cluster& cluster, const KeyRanking& ranking, int sign);

  // Calls visit(node id, key) in rank order (sign +1: highest key first,
  // -1: lowest first; equal keys: lowest id first), skipping nodes whose
  // summary rules the pod out, until visit returns true.
  template <typename Visit>
  void visit_in_rank_order(int sign, const PodRequest& pod, Visit&& visit) const {
    const Order& order = sign >= 0 ? high_first_ : low_first_;
    if (order.blocks.empty()) return;
    // Depth first, left to right, over the tree of block summaries: a
    // subtree whose maxima rule the pod out is skipped in one comparison,
    // so a pod that fits nowhere costs O(log blocks), not O(blocks).
    size_t stack[2 * 64];
    size_t top = 0;
    stack[top++] = 1;
    while (top > 0) {
      const size_t n = stack[--top];
      if (!order.tree[n].may_take(pod)) continue;
      if (n < order.leaves) {
        stack[top++] = 2 * n + 1;
        stack[top++] = 2 * n;  // the left child is visited first
        continue;
      }
      for (const Entry& e : order.blocks[n - order.leaves].entries)
        if (summary_[e.id].may_take(pod) && visit(static_cast<size_t>(e.id), e.key)) return;
    }
  }

 private:
  struct Entry {
    double key;
    uint32_t id;
  };
  struct Block {
    std::vector<Entry> entries;
    FreeSummary free;
  };
  // Blocks of entries in rank order; `high` decides the direction.
  struct Order {
    explicit Order(bool high_first) : high(high_first) {}
    bool high = true;
    bool active = false;  // kept up to date only once asked for
    std::vector<Block> blocks;
    // Block summaries in a complete binary tree (root 1, leaves from
    // `leaves`; padding leaves take nothing), each node the maxima below it.
    std::vector<FreeSummary> tree;
    size_t leaves = 0;
    void rebuild_tree();
    void update_tree(size_t block);
    bool before(const Entry& a, const Entry& b) const;
    void build(std::vector<Entry> entries, const std::vector<FreeSummary>& summary);
    void erase(const Entry& e, const std::vector<FreeSummary>& summary);
    void insert(const Entry& e, const std::vector<FreeSummary>& summary);
    void refresh(const Entry& e, const std::vector<FreeSummary>& summary);
    size_t block_of(const Entry& e) const;
    static void recompute(Block& b, const std::vector<FreeSummary>& summary);
  };

  void rebuild(const Cluster& cluster, const KeyRanking& ranking);
  void update(const Cluster& cluster, const KeyRanking& ranking, uint32_t id);

  const Cluster* cluster_ = nullptr;
  const KeyRanking* ranking_ = nullptr;
  uint64_t epoch_ = 0;
  size_t seen_changes_ = 0;
  std::vector<double> key_;
  std::vector<FreeSummary> summary_;
  Order high_first_{true}, low_first_{false};
};

}  // namespace gpuslice::core
