// The search for the plan with the fewest moves (ties: least card memory
// moved, then fewest nodes touched). An exact search (iterative deepening
// with a lower bound, a branch-and-bound on the tie-breaks and a table of
// states already reached) runs while it stays within a budget of
// scheduler decisions; past it, a heuristic looks for a plan among the
// pods blocking the nodes closest to having room. Either way the answer
// says what is proven: the plan is minimal, or every plan needs at least
// `lower_bound` moves.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "gpuslice/defrag/plan.hpp"

namespace gpuslice::defrag {

struct SearchOptions {
  int max_moves = 5;
  enum class Method { Auto, Exact, Heuristic };
  Method method = Method::Auto;
  // Scheduler decisions the exact search may make before it gives up (Auto
  // then runs the heuristic; Exact reports what it proved so far). 0: by
  // the fleet's size (default_exact_budget), as a decision visits more
  // nodes on a larger fleet.
  uint64_t exact_budget = 0;
  uint64_t heuristic_budget = 50000;
  // The share of the exact search's budget spent (0..1), now and then: the
  // CLI's progress line. Empty: none.
  std::function<void(double)> progress;
};

struct SearchResult {
  std::optional<Plan> plan;
  std::string method;            // "exact" or "heuristic": what found the plan (or proved there is none)
  bool proven_minimal = false;   // plan: no plan has fewer moves; none: no plan within max_moves
  int lower_bound = 0;           // moves every plan needs (proven)
  bool impossible = false;       // proven: no number of moves places the targets
  bool ties_exhaustive = false;  // the plan's memory and nodes are the least among plans of its moves
  int exact_depths_done = 0;     // the exact search refuted every plan with fewer moves than this
  bool exact_gave_up = false;    // the exact search ran out of budget
  uint64_t placements = 0;       // scheduler decisions, all searches together
  uint64_t states = 0;           // states the exact search expanded
};

SearchResult search(const Problem& problem, const SearchOptions& options);

// About 2 x 10^8 node visits: 1,000,000 decisions up to ~100 nodes, 50,000
// at 4,000 nodes, never under 20,000.
uint64_t default_exact_budget(size_t nodes);

}  // namespace gpuslice::defrag
