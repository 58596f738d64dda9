// Placement policies: one small interface, one file per policy, registered
// by name. A policy ranks the nodes a pod fits (and, for research policies,
// which card a share goes on); feasibility is always HAMi's fit.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core {

struct NodeScore {
  double rank = 0;   // higher wins; equal ranks go to the node listed first
  double shown = 0;  // what events print (HAMi prints its raw node score)
  // Among a node's cards for a share, higher wins after rank (equal: the
  // lower index). Never compared across nodes: the artifact chooses the
  // node by its score alone and the card afterwards (its Reserve step).
  double card_rank = 0;
};

// A request shape and how often it occurs: FGD's "typical pods".
struct TypicalPod {
  PodRequest pod;
  double weight = 0;
};

class FragmentationModel;  // fragmentation.hpp

struct PolicyArgs {
  uint64_t seed = 0;
  std::string gpu_policy = "spread";     // card order for fit (HAMi default)
  std::vector<TypicalPod> typical_pods;  // for FGD
  // The fragment model over typical_pods when the caller keeps one too (a
  // simulator measuring fragmentation): FGD then shares it and its memo of
  // node states instead of computing the same fragments twice.
  std::shared_ptr<FragmentationModel> fragmentation;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;

  // Node policy name HAMi would apply (binpack|spread) when this policy
  // follows the pod's annotation; research policies return empty.
  virtual std::string_view hami_node_policy(const PodRequest&) const { return {}; }

  // Card order inside a node for fit (a HAMi GPU policy string).
  virtual std::string gpu_policy_for(const PodRequest& pod) const;

  // True when a share (one card, part of it) may be placed on any fitting
  // card and score() picks the card: the FGD family's GPU choice.
  virtual bool chooses_share_card() const { return false; }

  // True when score() reads nothing but the node's shape and usage (no
  // names, UUIDs, history or randomness): then nodes in the same state score
  // the same, and since ties keep the first node the scheduler may skip the
  // later ones. FGD and its deterministic baselines say yes.
  virtual bool score_reads_only_node_state() const { return false; }

  // For a policy whose score reads, besides the node's shape and usage,
  // state of its own per node (kept in on_charge/on_release): that state as
  // a key, equal for two nodes only when their state is equal, or nullopt
  // when it cannot say. With it the scheduler may skip a node whose usage
  // and key repeat an earlier node's, as for score_reads_only_node_state.
  virtual bool keys_node_state() const { return false; }
  virtual std::optional<uint64_t> node_state_key(size_t /*node id*/) const { return std::nullopt; }

  // True when a node's score for a pod changes only when that node's use
  // changes (its version): state the policy keeps per node, updated in
  // on_charge/on_release, qualifies; randomness does not. Lets the scheduler
  // keep scores per (request shape, node) between placements.
  virtual bool score_changes_only_with_node() const { return score_reads_only_node_state(); }

  // True when the node score does not depend on the pod (HAMi's node score
  // is usage before the pod): then score(node, pod) must equal
  // {rank_sign(pod) * node_key(node), node_key(node)}, and the scheduler
  // keeps nodes pre-ordered by key instead of scoring all of them.
  virtual bool pod_independent_score() const { return false; }
  virtual double node_key(const NodeView&) const { return 0; }
  virtual int rank_sign(const PodRequest&) const { return 1; }

  // True when the policy picks a feasible node uniformly at random (the
  // study's Random): the scheduler then draws nodes by node_draw() and fits
  // only the drawn ones instead of scoring every node.
  virtual bool draws_nodes_at_random() const { return false; }
  // This pod's lottery ticket for a node (highest feasible wins), fixed
  // between begin_pod() calls; score().rank must equal it.
  virtual double node_draw(size_t /*node id*/) const { return 0; }
  // The position in `nodes` of the highest ticket (equal tickets: the lower
  // node id); nodes is not empty. One call per scan instead of one per node.
  virtual size_t best_draw(std::span<const uint32_t> nodes) const;

  // Told before each placement decision (a policy drawing lots per pod).
  virtual void begin_pod(const PodRequest&) {}

  // Ranks placing `pod` on `node` with `allocation` (usage before the pod).
  virtual NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) = 0;

  // Told after a placement is charged or released (stateful policies).
  virtual void on_charge(const NodeView&, const PodRequest&, const PodAllocation&) {}
  virtual void on_release(const NodeView&, const PodRequest&, const PodAllocation&) {}

 protected:
  std::string default_gpu_policy_ = "spread";
};

// The position in `nodes` (not empty) of the highest ticket(node), equal
// tickets going to the lower node id: Policy::best_draw's rule, for
// policies that compute tickets their own way.
template <typename Ticket>
size_t highest_ticket(std::span<const uint32_t> nodes, Ticket ticket) {
  size_t best = 0;
  auto top = ticket(nodes[0]);
  for (size_t i = 1; i < nodes.size(); ++i) {
    const auto t = ticket(nodes[i]);
    if (t > top || (t == top && nodes[i] < nodes[best])) {
      top = t;
      best = i;
    }
  }
  return best;
}

using PolicyFactory = std::function<std::unique_ptr<Policy>(const PolicyArgs&)>;

// Registry by name: "hami", "hami-binpack", "hami-spread", "random", "dotprod",
// "gpupacking", "gpuclustering", "bestfit", "fgd".
// Throws std::invalid_argument for an unknown name or GPU policy string.
std::unique_ptr<Policy> make_policy(std::string_view name, const PolicyArgs& args = {});
std::vector<std::string> policy_names();
// Why `name` is not a registered policy ("" when it is), listing the known
// ones: front ends report it with their own file, line and field.
std::string policy_name_problem(std::string_view name);
void register_policy(std::string name, PolicyFactory factory);

// HAMi's node score from usage before the pod:
// 10 * (sum used/sum slots + sum usedcores/sum cores + sum usedmem/sum mem), 0 if a total is 0.
float hami_node_score(const NodeView& node);

}  // namespace gpuslice::core
