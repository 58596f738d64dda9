// Exact search: iterative deepening over move sequences, pruned by the
// lower bound, by the best tie-break cost found at the current depth and by
// a table of states already reached at least as cheaply.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "gpuslice/defrag/plan.hpp"

namespace gpuslice::defrag {

struct ExactOutcome {
  std::optional<Plan> plan;  // the best plan with the fewest moves
  int refuted_below = 0;     // no plan has fewer moves than this
  bool gave_up = false;      // the budget ran out (refuted_below still holds)
  bool impossible = false;   // no sequence of moves at all places the targets
  uint64_t placements = 0, states = 0;
};

// progress: the share of the budget spent, now and then (may be empty).
ExactOutcome exact_search(const Problem& problem, int max_moves, uint64_t budget,
                          const std::function<void(double)>& progress = {});

}  // namespace gpuslice::defrag
