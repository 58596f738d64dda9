// Cluster Autoscaler in the simulator: which nodes of each node group are
// there, when a group grows (pending pods, CA's binpacking estimate with
// the core's fit, an expander) and when a node is removed (unneeded for
// scale_down_unneeded, its pods movable). The run owns pods and events and
// asks; this keeps the groups. docs/simulator.md#node-groups-and-the-autoscaler.
//
// Every node a group may hold is in the cluster from the start; a node the
// group does not hold carries a charge of its whole capacity, so the core's
// fit refuses it with no change to the core and no cost per event in runs
// without node groups.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/scheduler.hpp"
#include "gpuslice/sim/node_groups.hpp"
#include "gpuslice/sim/run_metrics.hpp"

namespace gpuslice::sim {

// A pod as scale-up reads it: its request and its equivalence class (CA
// groups pods of one controller and spec; here, one request shape).
struct PendingPod {
  uint32_t id = 0;
  const core::PodRequest* request = nullptr;
  uint32_t shape = 0;
};

struct ScaleUp {
  size_t group = 0;
  int from = 0, to = 0;        // the group's target size before and after
  std::vector<size_t> nodes;   // the nodes started
  std::vector<uint32_t> pods;  // the pods the estimate placed on them (CA's TriggeredScaleUp)
};

// A pod on a node CA considers removing.
struct PodOnNode {
  uint32_t id = 0;
  const core::PodRequest* request = nullptr;
  const core::PodAllocation* allocation = nullptr;
  bool controlled = true;
  bool pdb_protected = false;
};

class Autoscaler {
 public:
  // The groups' new nodes are `cluster`'s nodes from `first_node` on, group
  // after group, `max` each (fleet_with_groups); a group's members (nodes
  // of a snapshot) are Ready from the start. Nodes above `min` are taken out
  // of use (and out of `metrics`' capacity).
  Autoscaler(const std::vector<NodeGroupSpec>& groups, const AutoscalerSpec& spec, size_t first_node,
             core::Cluster& cluster, Metrics& metrics, uint64_t seed, const std::string& gpu_policy);

  const AutoscalerSpec& spec() const { return spec_; }
  bool manages(size_t node) const { return node < entry_of_.size() && entry_of_[node] >= 0; }
  size_t group_of(size_t node) const { return state_[entry(node)].group; }
  const NodeGroupSpec& group(size_t g) const { return groups_[g].spec; }
  size_t group_count() const { return groups_.size(); }
  // Nodes in the fleet now: the fixed ones and every group's started or Ready ones.
  size_t nodes() const { return cluster_.size() - state_.size() + present_; }
  size_t gpus() const;  // their cards
  bool at_min() const {
    for (const auto& g : groups_)
      if (g.target() != g.spec.min) return false;
    return true;
  }
  // The next tick of CA's loop at or after `now`.
  double next_scan(double now) const;

  // CA's scale-up for the pods waiting now: those that fit neither a Ready
  // node nor a node on its way (the core's fit, tentatively) are packed on
  // each group's template by CA's binpacking estimator; the expander picks
  // one option. Nothing when no group can take any of them.
  std::optional<ScaleUp> scale_up(double now, const std::vector<PendingPod>& pending);
  // A started node is Ready: it joins the fleet.
  void node_ready(size_t node, double now);

  // A Ready group node's use changed (or it just became Ready): returns the
  // time its scale-down is to be checked when it has just become
  // unneeded (below the threshold), else a negative number.
  double usage_changed(size_t node, double now);
  enum class Verdict { Remove, Keep, Later };
  struct Check {
    Verdict verdict = Verdict::Keep;
    double again = -1;  // Later: when to check again
  };
  // CA's scale-down of one node whose check is due: kept when the group is
  // at min, a scale-up was recent, a pod cannot be evicted (bare pod,
  // PDB) or the core finds no other Ready node for every pod.
  Check check_scale_down(size_t node, double now, const std::vector<PodOnNode>& pods);
  // The node, drained, leaves the fleet.
  void remove(size_t node, double now);

  // Per group: scale_ups, scale_downs, nodes_added, peak_nodes, node_hours, cost; and cost.
  nlohmann::ordered_json summary(double end) const;
  void count_evicted(size_t node) { ++groups_[group_of(node)].pods_evicted; }

 private:
  enum class NodeState : uint8_t { Absent, Starting, Ready };
  struct NodeEntry {
    uint32_t group = 0;
    NodeState state = NodeState::Absent;
    double unneeded_since = -1;  // below the threshold since (negative: needed)
    size_t node = 0;             // its index in the cluster
    bool member = false;         // a snapshot's node: once removed, never made again
  };
  struct Group {
    NodeGroupSpec spec;
    size_t first = 0;  // its first new node in the cluster (the template's copies)
    // The template's capacity (its first new node's): least-waste and the
    // estimator's pod order read it.
    int64_t cpu_milli = 0, memory_mib = 0, gpu_memory = 0;
    int starting = 0, ready = 0;
    size_t scale_ups = 0, scale_downs = 0, nodes_added = 0, pods_evicted = 0;
    int peak = 0;
    double node_seconds = 0, since = 0;  // node-time held, counted up to `since`
    // The estimator's snapshot: template nodes, added as the estimate needs them.
    std::unique_ptr<core::Cluster> estimate;
    std::vector<int8_t> fits_template;  // by shape: -1 unknown, 0 no, 1 yes
    // Its size after each change (report.html's chart), from time 0.
    std::vector<double> size_time;
    std::vector<int> size_nodes;
    void record(double now) {
      if (!size_time.empty() && size_time.back() == now) {
        size_nodes.back() = target();
        return;
      }
      size_time.push_back(now);
      size_nodes.push_back(target());
    }
    int target() const { return starting + ready; }
  };
  void block(size_t node);
  void unblock(size_t node);
  void account(Group& g, double now);
  bool fits_template(Group& g, const PendingPod& p);
  // CA's BinpackingNodeEstimator on group g's template for these pods (an
  // equivalence class after another, in CA's decreasing order), at most
  // `limit` nodes: the nodes with pods, and the pods placed.
  struct Estimate {
    int nodes = 0;
    std::vector<uint32_t> pods;
    int64_t gpu_memory_mib = 0;  // what the pods hold of the new nodes' cards
  };
  Estimate estimate(Group& g, const std::vector<const PendingPod*>& pods, int limit);
  size_t pick(const std::vector<size_t>& options, const std::vector<Estimate>& est,
              const std::vector<const PendingPod*>& pods);
  double utilization(size_t node) const;

  size_t entry(size_t node) const { return static_cast<size_t>(entry_of_[node]); }

  AutoscalerSpec spec_;
  core::Cluster& cluster_;
  Metrics& metrics_;
  std::vector<Group> groups_;
  std::vector<NodeEntry> state_;   // every group node: members, then new nodes, group after group
  std::vector<int32_t> entry_of_;  // by cluster node: its entry in state_, -1 for a fixed node
  size_t present_ = 0;             // group nodes started or Ready
  double last_scale_up_ = -1e300;
  // CA's simulations ask the core with HAMi's fit, apart from the run's
  // scheduler and policy so no cache or reservation of theirs is touched.
  std::unique_ptr<core::Policy> fit_policy_;
  core::Scheduler fit_scheduler_;
  std::mt19937_64 rng_;
  std::vector<core::PodAllocation> blocks_;  // by entry: the charge that keeps it out
};

}  // namespace gpuslice::sim
