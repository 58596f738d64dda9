// The question `gpuslice defrag` answers, in the core's terms: a cluster
// with its running HAMi pods, which of them may be moved (and under which
// disruption budgets), the pods to place (the targets) and the policy that
// places everything.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/quota.hpp"
#include "gpuslice/core/request.hpp"
#include "gpuslice/defrag/disruption_budget.hpp"
#include "gpuslice/defrag/label_selector.hpp"
#include "gpuslice/defrag/workload_facts.hpp"
#include "gpuslice/sim/snapshot.hpp"

namespace gpuslice::defrag {

// Why a running pod may not be moved (typed; the text is made at the edges).
enum class Pinned : uint8_t {
  No,              // movable
  NotRunning,      // bound but not Running (or being deleted)
  Bare,            // no controller: an evicted bare pod is gone, nothing places it again
  NodeBound,       // a DaemonSet's pod (or a static pod's mirror) comes back on its own node
  Protected,       // in a --protect namespace
  NotSelected,     // does not match --movable
  SeveralBudgets,  // the eviction API refuses pods under more than one budget
  NoDisruptions,   // its budget allows no eviction now
};
std::string_view pinned_text(Pinned why);

struct RunningPod {
  std::string key;           // namespace/name
  core::PodRequest request;  // as its controller recreates it
  size_t node = 0;
  core::PodAllocation allocation;
  int64_t gpu_mib = 0;  // card memory it holds: what moving it moves
  Pinned pinned = Pinned::No;
  std::vector<uint32_t> budgets;  // indexes into Problem::budgets
  bool movable() const { return pinned == Pinned::No; }
};

struct Target {
  std::string key;  // namespace/name, or free-cards/card-N
  core::PodRequest request;
};

struct Problem {
  core::Cluster cluster;         // every running pod charged (GPU pods and host-only ones)
  std::vector<RunningPod> pods;  // the HAMi pods holding cards, in snapshot order
  std::vector<Target> targets;   // placed in this order after the moves
  std::vector<BudgetState> budgets;
  // The namespaces' ResourceQuotas (the dump's and --quotas'): HAMi v2.10
  // refuses a pod its namespace has no room for, so a move or a target
  // placement is checked against them as the running pods hold them.
  std::vector<core::NamespaceQuota> quotas;
  std::string policy = "hami";
  core::PolicyArgs policy_args;
  std::unique_ptr<core::Policy> make_policy() const { return core::make_policy(policy, policy_args); }
};

// What to make room for.
struct Goal {
  enum class Kind { Pods, Queue, FreeCards };
  Kind kind = Kind::Queue;
  std::vector<std::string> pods;  // Pods: namespace/name, in the order to place them
  int free_cards = 0;             // FreeCards: how many whole cards
  std::string model;              // ... of this model (a card type substring, as nvidia.com/use-gputype)
};

struct ProblemOptions {
  std::string policy = "hami";
  std::string gpu_policy = "spread";
  std::vector<std::string> protect;  // namespaces whose pods stay
  LabelSelector movable;             // pods that may move (default: all)
};

// Queue pods that fit no node even with nothing running (they are left out
// of a --for-queue goal: no move can place them).
struct Built {
  Problem problem;
  std::vector<std::string> never_fits;
};

// Throws core::InputError (field --for, --free-cards, --policy, ...) when the
// goal names what the snapshot does not have.
Built build_problem(const sim::ClusterSnapshot& snapshot, const WorkloadFacts& facts, const Goal& goal,
                    const ProblemOptions& options);

// "2:A100" -> {2, "A100"}; throws core::InputError naming --free-cards.
Goal free_cards_goal(std::string_view text);

}  // namespace gpuslice::defrag
