// The search's lower bound over several targets: each bounded target's
// RoomBound, the largest of their bounds (every target must find room).
// Bounds are kept only when they are sound: every target's fit monotone.
#pragma once

#include <memory>
#include <vector>

#include "gpuslice/defrag/room_bound.hpp"

namespace gpuslice::defrag {

class Bounds {
 public:
  // Targets bounded: those not placed in the replay's state (at most
  // `most`), first failing first. None when a target's fit is not monotone.
  Bounds(Replay& replay, int cap, size_t most = 8);
  bool active() const { return !per_target_.empty(); }
  int bound() const;
  bool never() const;
  void update(size_t node, int cap);
  void raise_cap(int cap);
  // Pods whose move alone could give every bounded target room (the last
  // move of a plan must be one): empty vector and false when a bounded
  // target already fits somewhere (no restriction then).
  bool last_move_candidates(const Replay& replay, std::vector<uint32_t>& out);
  std::vector<std::unique_ptr<RoomBound>>& per_target() { return per_target_; }
  const std::vector<uint32_t>& targets() const { return targets_; }

 private:
  std::vector<std::unique_ptr<RoomBound>> per_target_;
  std::vector<uint32_t> targets_;
};

}  // namespace gpuslice::defrag
