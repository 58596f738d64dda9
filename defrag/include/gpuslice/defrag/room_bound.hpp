// How far each node is from having room for one target: the fewest pods
// that must leave it before the core's fit places the target there. A
// move takes one pod off one node, so no plan places the target in fewer
// moves than the smallest of these over all nodes: the search's lower
// bound, and where its heuristic looks for moves.
//
// This relies on fit being monotone (less in use never refuses what more
// in use accepts), which holds for HAMi's per-card checks and a pod whose
// cards one container asks; `monotone_fit` says whether a pod is one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/defrag/replay.hpp"

namespace gpuslice::defrag {

// True when at most one of the pod's containers asks for cards.
bool monotone_fit(const core::PodRequest& pod);

class RoomBound {
 public:
  // Distances are counted exactly up to each node's cap; a larger one is
  // kept as cap + 1 ("more than cap").
  RoomBound(const Replay& replay, const core::PodRequest& target, int cap);

  int at(size_t node) const { return at_[node]; }
  // The smallest kept distance over all nodes (0: the target fits somewhere).
  int bound() const;
  // True when no node can take the target whatever the moves: it fits
  // nowhere even with every pod that may move gone.
  bool never() const { return reachable_ == 0; }
  // Recomputes one node after it changed, exactly up to `cap`.
  void update(size_t node, int cap);
  // Counts every node exactly up to `cap` at least.
  void raise_cap(int cap);
  // Whether the target fits on `node` once these pods have left it.
  bool fits_without(size_t node, std::span<const uint32_t> leaving);

  // Sets of `size` pods now on `node` whose leaving lets the target fit
  // there, at most `limit` of them, in the order pods are listed.
  std::vector<std::vector<uint32_t>> removal_sets(size_t node, int size, size_t limit);

 private:
  int distance(size_t node, int from, int cap);
  void store(size_t node, int value, int cap);

  const Replay& replay_;
  const core::PodRequest& target_;
  core::GpuPolicy gpu_policy_;
  std::vector<int> at_, cap_;
  std::vector<uint8_t> can_reach_;  // fits with every movable pod gone
  std::vector<size_t> count_;       // nodes at each kept distance
  size_t reachable_ = 0;
  core::FitScratch scratch_;
  std::vector<core::DeviceUsage> usage_;
  std::vector<uint32_t> movable_, chosen_, leaving_;
};

}  // namespace gpuslice::defrag
