#include "gpuslice/defrag/search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "exact_search.hpp"
#include "heuristic_search.hpp"

namespace gpuslice::defrag {

uint64_t default_exact_budget(size_t nodes) {
  return std::clamp<uint64_t>(200'000'000 / (nodes + 100), 20'000, 1'000'000);
}

SearchResult search(const Problem& problem, const SearchOptions& options) {
  if (options.max_moves < 0) throw std::invalid_argument("max_moves must not be negative");
  SearchResult r;
  if (options.method != SearchOptions::Method::Heuristic) {
    const uint64_t budget =
        options.exact_budget > 0 ? options.exact_budget : default_exact_budget(problem.cluster.size());
    ExactOutcome ex = exact_search(problem, options.max_moves, budget, options.progress);
    r.placements += ex.placements;
    r.states = ex.states;
    r.exact_depths_done = ex.refuted_below;
    r.lower_bound = ex.refuted_below;
    r.method = "exact";
    if (ex.plan) {
      r.lower_bound = static_cast<int>(ex.plan->moves.size());
      r.plan = std::move(ex.plan);
      r.proven_minimal = true;
      r.ties_exhaustive = true;
    } else if (!ex.gave_up) {
      r.proven_minimal = true;  // no plan within max_moves, proven
      r.impossible = ex.impossible;
    } else {
      r.exact_gave_up = true;
    }
  }
  const bool run_heuristic = options.method == SearchOptions::Method::Heuristic ||
                             (options.method == SearchOptions::Method::Auto && r.exact_gave_up);
  if (run_heuristic) {
    HeuristicOutcome h = heuristic_search(problem, options.max_moves, options.heuristic_budget);
    r.placements += h.placements;
    r.lower_bound = std::max(r.lower_bound, h.lower_bound);
    r.impossible = r.impossible || h.impossible;
    r.method = "heuristic";
    if (h.plan) {
      r.plan = std::move(h.plan);
      r.proven_minimal = static_cast<int>(r.plan->moves.size()) == r.lower_bound;
    } else {
      r.proven_minimal = r.impossible || r.lower_bound > options.max_moves;
    }
  }
  if (r.impossible) r.lower_bound = std::max(r.lower_bound, options.max_moves + 1);
  if (r.plan) {
    // Every plan is replayed from the start before anyone sees it.
    if (std::string wrong = check_plan(problem, *r.plan); !wrong.empty())
      throw std::logic_error(
          fmt::format("defrag: the {} search's plan does not replay: {}", r.method, wrong));
  }
  return r;
}

}  // namespace gpuslice::defrag
