// A move plan, defrag's answer (not plan/, which plans capacity): moves,
// then the targets' places; what it costs; and the check that replays it
// from the start on the core.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuslice/defrag/replay.hpp"

namespace gpuslice::defrag {

struct Cost {
  size_t moves = 0;
  int64_t mib = 0;   // card memory of the moved pods
  size_t nodes = 0;  // nodes a move takes a pod from or puts one on
  // Fewest moves, then least memory moved, then fewest nodes touched.
  friend auto operator<=>(const Cost& a, const Cost& b) = default;
};

struct Plan {
  std::vector<Move> moves;
  std::vector<Place> targets;  // one per Problem::targets entry
  Cost cost;
  std::vector<size_t> nodes_touched;  // ascending
};

// The plan of a replay's current moves and the targets' places.
Plan plan_of(const Problem& problem, const std::vector<Move>& moves, std::vector<Place> targets);
Cost cost_of(const Problem& problem, const std::vector<Move>& moves);

// Replays the plan on a fresh copy of the problem's cluster: every moved
// pod movable and within its budget when moved, every place the one the
// scheduler chooses at that step, no card over its slices at any step,
// every target placed. Returns what is wrong, or "" when nothing is.
std::string check_plan(const Problem& problem, const Plan& plan);

}  // namespace gpuslice::defrag
