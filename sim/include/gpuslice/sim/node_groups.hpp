// Cluster Autoscaler's node groups in a scenario (`node_groups:` and
// `autoscaler:`, docs/simulator.md#node-groups-and-the-autoscaler): a node
// template, the group's bounds and price, and the timings CA works with.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/sim/fleet.hpp"

namespace gpuslice::sim {

// CA's --expander: which group grows when several could take the pods.
// CA appends `random` after any other as the tie-breaker; so does the run.
enum class Expander { LeastWaste, Price, MostPods, Random };
// "least-waste" | "price" | "most-pods" | "random"; nullopt for anything else.
std::optional<Expander> parse_expander(std::string_view text);
std::string_view expander_name(Expander e);

struct NodeGroupSpec {
  std::string name;
  NodeTemplate node;  // nodes are <node.name>-<i>, i < max
  int min = 0;
  int max = 0;
  double price_per_hour = 0;
  double scale_up_delay = 180;          // seconds from CA's decision to a Ready node
  double scale_down_unneeded = 600;     // CA's --scale-down-unneeded-time
  double scale_down_utilization = 0.5;  // CA's --scale-down-utilization-threshold (GPU memory share)
  // A snapshot run's group (--node-groups FILE): the labels that make a
  // node of the snapshot a member (it carries every one, as CA's cloud
  // providers tell a node's group by its node-pool label), the members'
  // indices in the fleet (Ready from the start, counted in min, max and
  // cost), and, when the file gave no template, the member whose
  // registration new nodes copy (CA builds a template from a real node).
  std::vector<std::pair<std::string, std::string>> node_labels;
  std::vector<size_t> members;
  std::optional<core::Node> prototype;
};

struct AutoscalerSpec {
  Expander expander = Expander::LeastWaste;
  double scan_interval = 10;                // CA's --scan-interval
  double scale_down_delay_after_add = 600;  // CA's --scale-down-delay-after-add
};

// The fleet followed by every node each group may make (its `max`, from its
// template or prototype), group after group: the run keeps the nodes a
// group does not hold out of use. A group's members are fleet nodes.
core::Cluster fleet_with_groups(const core::Cluster& fleet, const std::vector<NodeGroupSpec>& groups);

}  // namespace gpuslice::sim
