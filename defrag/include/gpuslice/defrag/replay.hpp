// A plan played out on the core: each move evicts a pod (its grants are
// released) and asks the scheduler, under the problem's policy, where the
// pod goes now; then the targets are placed in order the same way. Moves
// can be undone, so a search walks plans without copying the cluster, and
// every change is checked: no card ever holds more than its slices.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuslice/core/quota.hpp"
#include "gpuslice/core/scheduler.hpp"
#include "gpuslice/defrag/problem.hpp"

namespace gpuslice::defrag {

struct Place {
  size_t node = 0;
  core::PodAllocation allocation;
  friend bool operator==(const Place&, const Place&) = default;
};

struct Move {
  uint32_t pod = 0;  // index into Problem::pods
  Place from, to;
};

class Replay {
 public:
  explicit Replay(const Problem& problem);
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;

  const Problem& problem() const { return problem_; }
  const core::Cluster& cluster() const { return cluster_; }
  core::Policy& policy() { return *policy_; }
  const core::Policy& policy() const { return *policy_; }
  const Place& place_of(uint32_t pod) const { return places_[pod]; }
  // The problem's pods now on `node`.
  const std::vector<uint32_t>& pods_on(size_t node) const { return on_node_[node]; }

  // Whether `pod` may be moved now: movable, and its budget not used up by
  // the moves made so far.
  bool may_move(uint32_t pod) const;
  // Evicts `pod` and lets the scheduler place it again. nullopt, with
  // nothing changed, when it fits nowhere (its controller's new pod would
  // stay Pending) or may not move.
  std::optional<Move> move(uint32_t pod);
  void undo();  // the last move made
  const std::vector<Move>& moves() const { return moves_; }

  // Places the targets in order, each where the scheduler puts it; stops at
  // the first that fits nowhere (fewer places than targets).
  std::vector<Place> place_targets();
  // Takes back what place_targets placed.
  void remove_targets(const std::vector<Place>& placed);

  // Which of the pod's namespace's quotas refuses it whatever moves are
  // made (moves keep each namespace's total), and by how much; empty when
  // none does or no quota is checked.
  std::string quota_shortfall(const core::PodRequest& pod) const;

  // Equal for two move sequences that leave every pod in the same place.
  uint64_t state_hash() const { return hash_; }
  uint64_t placements() const { return placements_; }  // scheduler decisions made so far

 private:
  void charge(size_t node, const core::PodRequest& pod, const core::PodAllocation& allocation);
  void release(size_t node, const core::PodRequest& pod, const core::PodAllocation& allocation);
  // Throws std::logic_error when a card of `node` holds more than it has:
  // the core placed something it should not have.
  void check_node(size_t node) const;
  uint64_t place_hash(uint32_t pod, const Place& place) const;
  void detach(uint32_t pod);
  void attach(uint32_t pod);

  const Problem& problem_;
  core::Cluster cluster_;
  std::unique_ptr<core::Policy> policy_;
  core::Scheduler scheduler_;
  // The namespaces' quotas as the pods in place hold them; armed (the
  // scheduler checks them) only when some namespace has a limit and the
  // policy fits as HAMi does (a dialect's own fit knows no quota).
  core::QuotaBook quotas_;
  bool quotas_armed_ = false;
  std::vector<Place> places_;
  std::vector<std::vector<uint32_t>> on_node_;
  std::vector<int32_t> budget_used_;
  std::vector<Move> moves_;
  uint64_t hash_ = 0;
  uint64_t placements_ = 0;
};

}  // namespace gpuslice::defrag
