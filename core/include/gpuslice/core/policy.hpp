// Placement policies: a scorer with optional parts (card choice, reserve
// hooks, key ranking, lottery, a dialect's own fit), one file per policy,
// registered by name. Feasibility is HAMi's fit unless the policy brings
// its dialect's (Koordinator, KAI).
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
#include "gpuslice/core/dialect.hpp"
#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core {

struct NodeScore {
  double rank = 0;   // higher wins; equal ranks go to the node listed first
  double shown = 0;  // what events print (HAMi prints its raw node score)
};

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

// A policy is split the way kube-scheduler splits a profile into plugins
// by extension point. Every policy scores (Score); the other parts are
// optional, each an interface a policy hands out or not; traits() says
// what its score reads, so the scheduler may skip work (PolicyTraits):
//   card_chooser()   which card a share goes on (the artifact's Reserve
//                    step picks it after the node is chosen)
//   reserve_hooks()  told when a placement is charged or released
//   key_ranking()    HAMi: ranked by a pod-independent key; its score is
//                    derived from the key (KeyRankedPolicy), never restated
//   lottery()        the study's Random: a feasible node uniformly
//   device_fit()     kube-scheduler's Filter and the device choice of
//                    Reserve in a dialect's own terms (Koordinator, KAI);
//                    without it, feasibility is HAMi's fit

// The card of a share: among one node's fitting cards the highest card rank
// wins (equal: the lower index), after the node's score. Never compared
// across nodes.
class CardChooser {
 public:
  virtual ~CardChooser() = default;
  virtual double card_rank(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) = 0;
};

// kube-scheduler's Reserve/Unreserve: a stateful policy keeps its per-node
// state (e.g. GpuClustering's tags) in step with the cluster.
class ReserveHooks {
 public:
  virtual ~ReserveHooks() = default;
  virtual void reserve(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) = 0;
  virtual void unreserve(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) = 0;
};

// A node score that does not depend on the pod (HAMi's: usage before the
// pod): the scheduler keeps nodes pre-ordered by key and places on the
// first in key order that fits, instead of scoring every node.
class KeyRanking {
 public:
  virtual ~KeyRanking() = default;
  virtual double node_key(const NodeView& node) const = 0;
  // +1: the highest key wins; -1: the lowest.
  virtual int rank_sign(const PodRequest&) const { return 1; }
};

// A feasible node uniformly at random: the scheduler draws nodes by ticket
// and fits only the drawn ones. Tickets are fixed between begin_pod() calls.
class NodeLottery {
 public:
  virtual ~NodeLottery() = default;
  // This pod's ticket for a node: the highest feasible one wins.
  virtual double node_draw(size_t node) const = 0;
  // The position in `nodes` (not empty) of the highest ticket (equal: the
  // lower node id). One call per scan instead of one per node.
  virtual size_t best_draw(std::span<const uint32_t> nodes) const;
};

// A dialect's own feasibility: whether a pod fits a node at its usage, on
// which cards and with what grants, or why not (typed, in the dialect's
// words). The scheduler asks it instead of HAMi's fit.
class DeviceFit {
 public:
  virtual ~DeviceFit() = default;
  virtual FitResult fit(const NodeView& node, const PodRequest& pod) = 0;
  // Whether fit would place the pod, without building grants or reasons.
  virtual bool fits(const NodeView& node, const PodRequest& pod) { return fit(node, pod).fits; }
  // A cheap necessary condition for fit (false: fit refuses); lets the
  // scheduler skip full nodes without building an allocation.
  virtual bool may_fit(const NodeView&, const PodRequest&) { return true; }
  // What the node's usage passes in this dialect's terms ("" when nothing):
  // the invariant the simulator checks after every change.
  virtual std::string over_capacity(const NodeView& node) const = 0;
};

// What a policy's score reads, so the scheduler may skip work. The default
// (every field false) promises nothing: every node is scored for every pod.
struct PolicyTraits {
  // Only the node's shape and usage (no names, UUIDs, history or
  // randomness): nodes in one state score alike, and as ties keep the first
  // node the later ones are skipped. FGD and its deterministic baselines.
  bool score_reads_only_node_state = false;
  // Besides shape and usage, state of its own per node (kept by its reserve
  // hooks), given by Policy::node_state_key: nodes whose usage and key
  // repeat an earlier node's are skipped likewise.
  bool keys_node_state = false;
  // Nothing that changes unless the node's use does (per-node state kept by
  // its reserve hooks qualifies; randomness does not): scores are kept per
  // (request shape, node) between placements.
  bool score_changes_only_with_node = false;
  // Equal ranks go to the node whose name sorts first (KAI) instead of the
  // node listed first. The scheduler then scans nodes in name order (a node
  // repeating an earlier node's state is skipped only there) and keeps no
  // scores between placements for it.
  bool ties_by_name = false;

  // A score of the node's shape and usage alone, kept between placements.
  static constexpr PolicyTraits node_state_only() {
    return {.score_reads_only_node_state = true,
            .keys_node_state = false,
            .score_changes_only_with_node = true,
            .ties_by_name = false};
  }
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  // Whose requests the policy reads (translate.hpp makes a pod say what it
  // asks in those terms, or names what it cannot carry).
  virtual Dialect dialect() const { return Dialect::Hami; }

  // Node policy name HAMi would apply (binpack|spread) when this policy
  // follows the pod's annotation; research policies return empty.
  virtual std::string_view hami_node_policy(const PodRequest&) const { return {}; }

  // Card order inside a node for fit (a HAMi GPU policy string).
  virtual std::string gpu_policy_for(const PodRequest& pod) const;

  // Told before each placement decision, with the fleet it is made on
  // (PreScore: a policy drawing lots per pod, or scoring against the
  // fleet's range, as KAI's nodeplacement does).
  virtual void begin_pod(const Cluster&, const PodRequest&) {}

  // Score: ranks placing `pod` on `node` with `allocation` (usage before the pod).
  virtual NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation& allocation) = 0;

  // What the score reads, so the scheduler may skip work (PolicyTraits).
  virtual PolicyTraits traits() const { return {}; }
  // With traits().keys_node_state: the policy's own state of a node (kept
  // by its reserve hooks) as a key, equal for two nodes only when their
  // state is equal, or nullopt when it cannot say.
  virtual std::optional<uint64_t> node_state_key(size_t /*node id*/) const { return std::nullopt; }

  // The optional parts (nullptr: the policy has none).
  virtual CardChooser* card_chooser() { return nullptr; }
  virtual ReserveHooks* reserve_hooks() { return nullptr; }
  virtual const KeyRanking* key_ranking() const { return nullptr; }
  virtual NodeLottery* lottery() { return nullptr; }
  virtual DeviceFit* device_fit() { return nullptr; }

 protected:
  std::string default_gpu_policy_ = "spread";
};

// A policy ranked by a pod-independent key: its score is the key's.
class KeyRankedPolicy : public Policy, public KeyRanking {
 public:
  NodeScore score(const NodeView& node, const PodRequest& pod, const PodAllocation&) final {
    const double key = node_key(node);
    return {rank_sign(pod) * key, key};
  }
  const KeyRanking* key_ranking() const final { return this; }
};

// Tell a policy's reserve hooks, when it has any, of a placement charged
// to or released from the cluster.
inline void reserved(Policy& policy, const NodeView& node, const PodRequest& pod,
                     const PodAllocation& allocation) {
  if (ReserveHooks* hooks = policy.reserve_hooks()) hooks->reserve(node, pod, allocation);
}
inline void unreserved(Policy& policy, const NodeView& node, const PodRequest& pod,
                       const PodAllocation& allocation) {
  if (ReserveHooks* hooks = policy.reserve_hooks()) hooks->unreserve(node, pod, allocation);
}

// The position in `nodes` (not empty) of the highest ticket(node), equal
// tickets going to the lower node id: NodeLottery::best_draw's rule, for
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
// "gpupacking", "gpuclustering", "bestfit", "fgd", "koordinator",
// "koordinator-most", "koordinator-fixed", "koordinator-most-fixed",
// "kai-binpack", "kai-spread".
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
