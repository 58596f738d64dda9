// `gpuslice defrag` and gpuslice.defrag(): read a snapshot, build the
// question, search for the plan with the fewest moves, and when moves
// cannot place the targets, ask the capacity planner how many nodes would
// (what `gpuslice plan --snapshot --add` answers).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuslice/defrag/input.hpp"
#include "gpuslice/defrag/problem.hpp"
#include "gpuslice/defrag/search.hpp"
#include "gpuslice/plan/plan.hpp"

namespace gpuslice::defrag {

struct DefragRequest {
  std::string snapshot;  // CLUSTER.yaml or .json
  Goal goal;
  ProblemOptions options;
  SearchOptions search;
  // The node `plan --add` adds when no plan is found; default: an empty copy
  // of the snapshot's node that takes the most targets.
  std::optional<std::string> add;
  // HAMi's device-config.yaml (request defaults, MIG allowlist) the snapshot
  // is read with; empty: the Helm chart's.
  std::string device_config;
  // ResourceQuotas beside the snapshot's own (kubectl get resourcequotas).
  std::string quotas;
  // --strict: a pending pod whose request cannot be read is bad input;
  // default: it is left out with a warning (HAMi leaves it Pending).
  bool strict = false;
};

// A request as front ends spell it (the CLI's flags, Python's keywords),
// read into a DefragRequest in one place; errors name the flag.
struct RequestWords {
  std::string snapshot;
  std::optional<std::vector<std::string>> for_pods;  // --for
  bool for_queue = false;                            // --for-queue
  std::optional<std::string> free_cards;             // --free-cards N[:MODEL]
  std::string policy = "hami", gpu_policy = "spread";
  int max_moves = 5;
  std::string movable;  // label selector text
  std::vector<std::string> protect;
  std::optional<std::string> add;
  std::string search = "auto";  // auto | exact | heuristic
  uint64_t search_budget = SearchOptions{}.exact_budget;
  std::string device_config;  // --device-config FILE
  std::string quotas;         // --quotas FILE
  bool strict = false;        // --strict
};
// Throws core::InputError naming the flag.
DefragRequest request_of(const RequestWords& words);

// What adding nodes instead would take.
struct AddInstead {
  std::string template_name;  // added nodes are <template_name>-<i>
  std::string from;           // the --add file, or "an empty copy of node X"
  std::optional<int> count;   // nodes to add; nullopt: none up to max_count places them
  int max_count = 0;
  std::vector<std::string> targets;   // the pods the planner was asked to place
  std::vector<std::string> left_out;  // queue pods that fit no added node either
  plan::PlanResult plan;
};

struct DefragResult {
  std::string snapshot;
  DefragRequest request;
  Built built;  // the problem (and queue pods no node can ever take)
  std::vector<std::string> warnings;
  SearchResult search;
  std::optional<AddInstead> add;  // when no plan was found
  double read_seconds = 0, search_seconds = 0, add_seconds = 0;
};

// Throws core::InputError for bad input.
DefragResult defrag(const DefragRequest& request);
// The same on a snapshot already read (request.snapshot only names it).
DefragResult defrag(const Input& input, const DefragRequest& request, double read_seconds = 0);

}  // namespace gpuslice::defrag
