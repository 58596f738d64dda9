// Nodes kept in rank order for policies whose node score does not depend on
// the pod (HAMi binpack/spread): the best node for a pod is then the first
// node in that order that fits, so placement stops at the first fit instead
// of scoring the whole fleet. Follows the cluster through its change log.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/policy.hpp"

namespace gpuslice::core {

class NodeOrderIndex {
 public:
  void sync(const Cluster& cluster, const Policy& policy);

  // Calls visit(node id, key) in rank order (sign +1: highest key first,
  // -1: lowest first; equal keys: lowest id first) until it returns true.
  template <typename Visit>
  void visit_in_rank_order(int sign, Visit&& visit) const {
    if (sign >= 0) {
      for (const auto& [key, id] : descending_)
        if (visit(static_cast<size_t>(id), key)) return;
    } else {
      for (const auto& [key, id] : ascending_)
        if (visit(static_cast<size_t>(id), key)) return;
    }
  }

 private:
  struct HighFirst {
    bool operator()(const std::pair<double, uint32_t>& a, const std::pair<double, uint32_t>& b) const {
      if (a.first != b.first) return a.first > b.first;
      return a.second < b.second;
    }
  };
  void rebuild(const Cluster& cluster, const Policy& policy);
  void update(const Cluster& cluster, const Policy& policy, uint32_t id);

  const Cluster* cluster_ = nullptr;
  const Policy* policy_ = nullptr;
  uint64_t epoch_ = 0;
  size_t seen_changes_ = 0;
  std::vector<double> key_;
  std::set<std::pair<double, uint32_t>, HighFirst> descending_;
  std::set<std::pair<double, uint32_t>> ascending_;
};

}  // namespace gpuslice::core
