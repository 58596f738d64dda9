// A cluster snapshot as defrag reads it: the simulator's reading of nodes
// and pods (the one snapshot reader), and the facts deciding what may move,
// taken from the same dump (labels, controllers, readiness, and the
// PodDisruptionBudgets appended with `kubectl get pdb -A -o yaml`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/defrag/workload_facts.hpp"
#include "gpuslice/sim/snapshot.hpp"

namespace gpuslice::defrag {

struct Input {
  sim::ClusterSnapshot snapshot;
  WorkloadFacts facts;
  std::vector<std::string> warnings;  // the snapshot's, and budgets left out
};

// Throws core::InputError (file:line: field: what) for bad input.
// `defaults`: HAMi's device config's request defaults and MIG allowlist.
Input parse_input(std::string_view text, const std::string& source,
                  const core::codec::RequestDefaults& defaults = {});
Input load_input(const std::string& path, const core::codec::RequestDefaults& defaults = {});

// The facts of a snapshot's listed pods and budget documents (exposed for
// tests that build snapshots in memory).
WorkloadFacts facts_of(const std::vector<sim::ListedPod>& pods,
                       const std::vector<core::codec::BudgetDocument>& budgets, const std::string& source,
                       std::vector<std::string>& warnings);

}  // namespace gpuslice::defrag
