// A scenario: a fleet, a pod stream and how to run it, read from YAML
// (format in docs/simulator.md). Bad files fail with file:line: field: what.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/sim/fleet.hpp"
#include "gpuslice/sim/generator.hpp"
#include "gpuslice/sim/node_groups.hpp"
#include "gpuslice/sim/openb.hpp"
#include "gpuslice/sim/snapshot.hpp"
#include "gpuslice/sim/workload.hpp"

namespace gpuslice::sim {

enum class QueueDiscipline { Fifo, SkipAhead };

struct ExplicitPod {
  double at = 0;
  double duration = kForever;
  std::string template_name;
  int repeat = 1;
};

// A scheduling.k8s.io/v1 PriorityClass as a scenario names it.
struct PriorityClass {
  int32_t value = 0;
  bool preempt_never = false;  // preemptionPolicy: Never
  bool global_default = false;
};
using PriorityClasses = std::map<std::string, PriorityClass>;

struct Scenario {
  std::string name;
  std::string description;  // the comment line at the top of the file
  std::string policy = "hami-binpack";
  std::string gpu_policy = "spread";
  uint64_t seed = 42;
  QueueDiscipline queue = QueueDiscipline::Fifo;
  core::Cluster fleet;
  // The templates x counts the fleet was built from (empty for manifests and
  // openb fleets): capacity planning changes counts here, not in YAML text.
  std::vector<FleetGroup> fleet_groups;
  // Exactly one pod source.
  std::vector<PodTemplate> templates;
  std::vector<ExplicitPod> pods;
  std::optional<GeneratorSpec> generator;
  PriorityClasses priority_classes;           // templates and openb pods name them
  std::optional<std::string> openb_pods_csv;  // contents
  std::string openb_pods_source;
  OpenbOptions openb;
  // A run from a cluster snapshot: its nodes lead the fleet, its placed
  // pods and its queue start the run; the pod source above (if any) gives
  // the pods that arrive later.
  std::optional<ClusterSnapshot> snapshot;
  // Namespaces' ResourceQuotas (`quotas:`), HAMi v2.10's check in the fit;
  // a snapshot's own come first, these after (the last set wins per key).
  std::vector<core::NamespaceQuota> quotas;
  // Cluster Autoscaler's node groups (`node_groups:`): nodes the run adds
  // and removes, beside the fixed fleet (which may then be empty).
  std::vector<NodeGroupSpec> node_groups;
  AutoscalerSpec autoscaler;
  // What reading the file found that HAMi reads otherwise than written (a
  // template's gpucores above 100); the commands say it on stderr.
  std::vector<std::string> warnings;
};

// "fifo" | "skip-ahead"; nullopt for anything else. The one queue parser.
std::optional<QueueDiscipline> parse_queue(std::string_view text);

// Sets the count of fleet_groups[i] to counts[i] for each i in `which` and
// rebuilds the fleet; throws InputError when the fleet would be too large.
void set_fleet_counts(Scenario& scenario, const std::vector<size_t>& which, const std::vector<int>& counts);

Scenario load_scenario(const std::string& path);
// fleet_given: a snapshot gives the fleet, so the file must not (and may
// name no pod source: the snapshot's queue is then the whole stream).
Scenario parse_scenario(const std::string& text, const std::string& source, const std::string& base_dir,
                        bool fleet_given = false);

// The pod stream for one run (generators and openb resampling use the seed).
Workload materialize(const Scenario& scenario, uint64_t seed);

// An openb replay as a scenario (CLI --openb-nodes/--openb-pods).
Scenario openb_scenario(const std::string& nodes_path, const std::string& pods_path,
                        const OpenbOptions& options);

// What `gpuslice simulate --snapshot` and plan --snapshot run
// (sim/src/snapshot_scenario.cpp).
struct SnapshotRunSpec {
  std::string snapshot;                   // CLUSTER.yaml / .json
  std::optional<std::string> pods;        // MORE.yaml: a scenario without a fleet
  std::vector<std::string> add_nodes;     // NODE.yaml:COUNT
  std::vector<std::string> cordon;        // node names
  std::optional<double> assume_duration;  // seconds
  // HAMi's device config (--device-config): how the pods' requests read.
  core::codec::RequestDefaults defaults;
  // --strict: a malformed pending pod is bad input (exit 2), as a malformed
  // running one always is.
  bool strict = false;
  // --node-groups FILE: Cluster Autoscaler's groups, the snapshot's nodes
  // joining them by label (docs/simulator.md#node-groups-for-a-snapshot).
  std::optional<std::string> node_groups;
};

// A --node-groups file: the `node_groups:` list of a scenario, whose groups
// may name `node_labels` (and then leave out `template`), and an optional
// `autoscaler:`. label_lines: by group, the line of its node_labels (or of
// the group), for errors found when the snapshot's nodes join.
struct NodeGroupsFile {
  std::string source;
  std::vector<NodeGroupSpec> groups;
  AutoscalerSpec autoscaler;
  std::vector<int> label_lines;
};
NodeGroupsFile parse_node_groups_file(const std::string& text, const std::string& source);

// The snapshot's nodes join the file's groups by their labels (a node
// carrying every label of a group is one of its members); a group with no
// template copies a member's registration. A node of two groups, a group of
// more members than max, or a template-less group with no member is an
// InputError naming the file; a group no node joins is a warning.
void join_node_groups(Scenario& scenario, NodeGroupsFile file);

// The fleet group of an added node file (one Node manifest, copied `count`
// times as <name>-<i>): its name must not clash with the snapshot's nodes
// or another group's. Throws InputError naming the file.
FleetGroup added_node_group(const std::string& path, int count, const std::vector<core::Node>& snapshot_nodes,
                            const std::vector<FleetGroup>& others);

// The run as a scenario: the snapshot's nodes first, then one group per
// --add-nodes file (so capacity planning can vary its count); the pod
// source of MORE.yaml, if given, for the pods that arrive later.
Scenario snapshot_scenario(const SnapshotRunSpec& spec);

}  // namespace gpuslice::sim
