// Heuristic search, for clusters too large to search exactly: target by
// target (the first that does not place), the nodes closest to having room
// for it, the sets of pods whose leaving gives it room there, each set
// tried as moves in a few orders; the set that places the most targets
// (then costs least) is kept, and so on until every target places or the
// moves run out.
#pragma once

#include <cstdint>
#include <optional>

#include "gpuslice/defrag/move_plan.hpp"

namespace gpuslice::defrag {

struct HeuristicOutcome {
  std::optional<Plan> plan;
  int lower_bound = 0;  // the room bound at the start (proven)
  bool impossible = false;
  uint64_t placements = 0;
};

HeuristicOutcome heuristic_search(const Problem& problem, int max_moves, uint64_t budget);

}  // namespace gpuslice::defrag
