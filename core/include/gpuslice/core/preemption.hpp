// Preemption as kube-scheduler's DefaultPreemption chooses it (victims per
// node, reprieve, node choice), with the pod's fit decided by HAMi's device
// fit instead of slot counts. One place for the extender's preempt verb and
// the simulator. docs/serve.md#preemption says what it changes on a HAMi
// cluster. kube-scheduler's steps: SelectVictimsOnNode, isPreemptionAllowed,
// filterPodsWithPDBViolation and PodEligibleToPreemptOthers
// (pkg/scheduler/framework/plugins/defaultpreemption), pickOneNodeForPreemption
// (pkg/scheduler/framework/preemption), MoreImportantPod and
// GetEarliestPodStartTime (pkg/scheduler/util).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/fit.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core {

// A pod running on a node, as preemption sees it.
struct RunningPod {
  std::string id;         // the caller's name for it (the extender: its UID)
  size_t node = 0;        // where it runs
  int32_t priority = 0;   // spec.priority (0 when unset)
  double start_time = 0;  // status.startTime in seconds; not started: the caller's "now"
  PodAllocation
      allocation;      // what it holds on `node` (charged in the cluster); unread where `charges` is given
  HostResources host;  // CPU and memory it holds there (charged in the cluster)
  // The PodDisruptionBudgets that count this pod (indexes into
  // PreemptionQuestion::budgets): same namespace, selector matches, and the
  // pod is not among the budget's status.disruptedPods. The caller resolves
  // selectors; preemption only counts.
  std::vector<uint32_t> budgets;
  // effective_charges(allocation, the node's cards), when the caller offers
  // the pod many times (the simulator works it out once while the pod
  // runs); empty: worked out from `allocation` at each use.
  std::vector<DeviceCharge> charges;
};

// How "the pod fits the node" is decided.
enum class FitRule : uint8_t {
  // HAMi's fit (or the policy's dialect fit): cards, memory, cores, host.
  Devices,
  // kube-scheduler alone counting `nvidia.com/gpu` as an extended resource:
  // the node's free slots (summed over its cards) against the cards the pod
  // asks, plus host CPU and memory. Models preemption without the preempt
  // verb when the resource is not ignoredByScheduler.
  SlotCount,
  // kube-scheduler with the GPU resources ignoredByScheduler (HAMi's and
  // deploy/'s configuration): host CPU and memory only, the cards unseen.
  HostOnly,
};

struct PreemptionQuestion {
  PodRequest pod;
  int32_t priority = 0;        // the preemptor's spec.priority
  bool preempt_never = false;  // spec.preemptionPolicy: Never
  std::vector<RunningPod> running;
  std::vector<int32_t> budgets;  // each PDB's status.disruptionsAllowed
};

// One node's victims: kube-scheduler's Victims.
struct NodeVictims {
  size_t node = 0;
  std::vector<uint32_t> victims;  // indexes into PreemptionQuestion::running, most important first
  int64_t pdb_violations = 0;     // victims whose eviction breaks a budget
};

// Why a node is or is not a candidate.
enum class NodeOutcome : uint8_t {
  Victims,          // evicting `victims` lets the pod fit
  NoLowerPriority,  // no pod of lower priority runs there
  NoRoom,           // the pod does not fit even with every lower-priority pod gone
  FitsAlready,      // it fits with nothing evicted (kube-scheduler drops such a node)
};

struct NodeVerdict {
  NodeOutcome outcome = NodeOutcome::NoLowerPriority;
  NodeVictims victims;
};

struct PreemptionPlan {
  bool eligible = true;            // false: preemptionPolicy Never, nobody is asked
  std::vector<NodeVictims> nodes;  // every candidate node with victims, in the order asked
  std::optional<size_t> chosen;    // index into `nodes` (pickOneNodeForPreemption)
  const NodeVictims* choice() const { return chosen ? &nodes[*chosen] : nullptr; }
};

// kube-scheduler's MoreImportantPod: higher priority, then the earlier start.
inline bool more_important(const RunningPod& a, const RunningPod& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  return a.start_time < b.start_time;
}

// Victims on one node at a time (SelectVictimsOnNode). Keeps scratch
// buffers between nodes: one per thread.
class VictimSelector {
 public:
  VictimSelector(const Cluster& cluster, Policy& policy, FitRule rule = FitRule::Devices);

  // `on_node`: indexes into question.running of the pods on `node` that the
  // caller offers (the extender: those it knows run there); only those of
  // lower priority than the preemptor are candidates. Throws
  // std::invalid_argument when a pod runs elsewhere, names a card the node
  // lacks, or takes away more than the node has charged (a pod the cluster
  // never charged there).
  NodeVerdict select(const PreemptionQuestion& question, size_t node, std::span<const uint32_t> on_node);

  // Whether the pod fits `node` with the pods `evicted` gone (indexes into
  // question.running, all on that node): the check the plans are replayed with.
  bool fits_without(const PreemptionQuestion& question, size_t node, std::span<const uint32_t> evicted);

 private:
  bool fits_now(const PodRequest& pod);
  // Loads the node's use and the pod's card order (its GPU policy, parsed
  // again only when its text changes).
  void load(size_t node, const PodRequest& pod);
  void apply(const RunningPod& pod, std::span<const DeviceCharge> charges, int sign);
  // The pod's charges: those it carries, else worked out into `scratch`.
  std::span<const DeviceCharge> charges_of(const RunningPod& pod, std::vector<DeviceCharge>& scratch) const;

  const Cluster& cluster_;
  Policy& policy_;
  FitRule rule_;
  FitScratch scratch_;
  GpuPolicy gpu_;
  std::optional<std::string> gpu_text_;                 // what gpu_ was parsed from
  std::vector<std::vector<DeviceCharge>> computed_;     // charges worked out here, per running pod offered
  std::vector<std::span<const DeviceCharge>> charges_;  // per running pod offered, while selecting
  std::vector<DeviceUsage> usage_;                      // the node's cards as the victims leave and return
  HostResources host_;
  size_t node_ = 0;
  NodeView view_;  // the node loaded, its usage and host use pointing at usage_ and host_
  std::vector<uint32_t> order_, violating_, non_violating_, victims_;
  std::vector<int32_t> allowed_;
};

// The whole of kube-scheduler's choice for `question`: each node of
// `candidates` (all nodes when empty) with its victims, and the node
// pickOneNodeForPreemption takes among them. Pods in question.running are
// offered on the node they name. Every candidate is evaluated (kube-scheduler
// stops after max(100, 10% of nodes) from a random offset: pass those
// nodes to sample as it does). The caller then evicts the chosen victims
// and schedules the pod again, as kube-scheduler nominates the node and
// retries the pod.
PreemptionPlan plan_preemption(const Cluster& cluster, const PreemptionQuestion& question, Policy& policy,
                               std::span<const size_t> candidates = {}, FitRule rule = FitRule::Devices);

// pickOneNodeForPreemption's order over `nodes` (each with at least one
// victim, victims most important first): fewest PDB violations, lowest
// highest-victim priority, smallest sum of priorities, fewest victims, the
// latest earliest-start among the highest-priority victims, then the first
// listed. Returns the index in `nodes`; nullopt when empty.
std::optional<size_t> pick_one_node(std::span<const NodeVictims> nodes, std::span<const RunningPod> running);

// What pickOneNodeForPreemption compares of one node's victims: a caller
// that keeps a node's victims between questions (the simulator) keeps
// this with them and picks without listing every candidate's victims.
struct VictimsScore {
  int64_t pdb_violations = 0;
  int64_t shifted_sum = 0;      // the victims' priorities, each + 2^31
  int64_t earliest_top_ns = 0;  // GetEarliestPodStartTime: among the highest-priority victims, nanoseconds
  int32_t top_priority = 0;     // the first (most important) victim's
  int32_t count = 0;            // victims
  friend bool operator==(const VictimsScore&, const VictimsScore&) = default;
};
// `node` has at least one victim, most important first.
VictimsScore score_victims(const NodeVictims& node, std::span<const RunningPod> running);
// Whether pickOneNodeForPreemption prefers `a`'s victims to `b`'s
// (strictly: equals keep the node met first).
bool preferred_victims(const VictimsScore& a, const VictimsScore& b);
// pick_one_node's order over the scores: the first node no later one is
// preferred to.
std::optional<size_t> pick_one_node(std::span<const VictimsScore> nodes);

}  // namespace gpuslice::core
