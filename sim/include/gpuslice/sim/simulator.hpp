// One simulation run: the event loop that replays a pod stream against a
// fleet with one placement policy, through the same core the CLI uses.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/sim/run_metrics.hpp"
#include "gpuslice/sim/scenario.hpp"

namespace gpuslice::sim {

// What a pod that fits nowhere may do to lower-priority pods
// (docs/simulator.md#priorities-and-preemption):
// - Off: nothing; it waits.
// - Kube: kube-scheduler's DefaultPreemption as it runs on a HAMi cluster
//   today, counting nvidia.com/gpu slots (the extender has no preempt verb):
//   it evicts pods whose slots it needs, whether or not their cards help.
// - HamiAware: the same rules with HAMi's fit of the cards (serve's preempt
//   verb): it evicts only pods whose cards let the pod fit.
enum class Preemption { Off, Kube, HamiAware };
// "off" | "kube" | "hami-aware"; nullopt for anything else.
std::optional<Preemption> parse_preemption(std::string_view text);
std::string_view preemption_name(Preemption p);

struct RunOptions {
  std::string policy = "hami-binpack";
  std::string gpu_policy = "spread";
  uint64_t seed = 42;
  QueueDiscipline queue = QueueDiscipline::Fifo;
  Preemption preemption = Preemption::HamiAware;
  size_t explain_limit = 20000;  // failures explained with every node's HAMi reason
  bool card_use = true;          // keep the per-card use log (card_use.csv)
  // Keep per-pod names, allocations and refusal explanations (pods.csv,
  // events); off for grids that read only the summary and curves.
  bool records = true;
  // Called now and then with the fraction done; returning false stops the run.
  std::function<bool(double)> progress;
  // Namespaces' ResourceQuotas (HAMi v2.10): pods are charged to their
  // namespace when placed, released when they leave, and a pod over its
  // namespace's limit is refused with ResourceQuotaNotFit. HAMi's policies
  // and the study's (HAMi's fit) only; a dialect's scheduler has none.
  std::vector<core::NamespaceQuota> quotas;
  // Cluster Autoscaler's node groups (docs/simulator.md#node-groups-and-the-autoscaler):
  // the fleet given is the fixed part; the groups' nodes are added after it.
  std::vector<NodeGroupSpec> node_groups;
  AutoscalerSpec autoscaler;
  // A snapshot's PodDisruptionBudgets, which PodSpec's counted_by_budgets
  // and guarded_by_budgets name (docs/simulator.md#disruption-budgets).
  std::vector<DisruptionBudget> disruption_budgets;
};

// The options a scenario sets for itself (policy, GPU policy, seed, queue),
// the rest at their defaults: what `gpuslice simulate` runs it with before
// any flag.
RunOptions scenario_options(const Scenario& scenario);

struct PodRecord {
  std::string name, kind, node, allocation, status, reason;
  double arrival = 0, start = -1, end = -1;
  int64_t gpu_milli = 0;
  std::string origin;          // snapshot runs: queue | later
  std::string priority_class;  // the class its priority came from (empty: none)
  int32_t priority = 0;
  int preempted = 0;      // times it was evicted by a higher-priority pod
  std::string shortfall;  // snapshot runs, pods not placed: how close the best card comes
  bool starting = false;  // a snapshot's pod placed before the run: no row in pods.csv
  // HAMi v2.10's hami.io/vgpu-mig-allocations when the pod holds MIG
  // instances (report.html and the terminal show them; pods.csv does not).
  std::string mig_allocations;
  // `--policy dra`: the pod's claims' allocation result (status.allocation
  // in compact JSON, dra/fleet.hpp); empty under every other policy.
  std::string claim_allocation;
};

struct EventRecord {
  double time = 0;
  std::string pod, type, reason, message;
  // The other object an event names (Kubernetes' related): the preemptor
  // of a Preempted event; empty for most events.
  std::string related;
  // A node's event (Cluster Autoscaler's ScaleDown): the node it is on; pod is then empty.
  std::string node;
};

// One card's use right after a placement or departure changed it.
struct CardUseRow {
  double time = 0;
  uint32_t node = 0;
  int card = 0;
  core::DeviceUsage used;
  int64_t card_memory_mib = 0;  // the card's whole memory: the report reads use as a share of it
};

struct RunResult {
  nlohmann::ordered_json summary;
  std::vector<PodRecord> pods;
  std::vector<TimelineRow> timeline;
  std::vector<EventRecord> events;
  std::vector<CardUseRow> card_use;
  std::vector<std::string> node_names;  // for card_use rows
  bool interrupted = false;
  // `--policy dra`: pods.csv gains the claim_allocation column (last); the
  // other policies' pods.csv keeps its columns as they were.
  bool claim_allocations = false;
};

// The fleet is copied: a scenario can be run many times.
RunResult simulate(const Scenario& scenario, const RunOptions& options);
RunResult simulate(const core::Cluster& fleet, const Workload& workload, const RunOptions& options,
                   const std::string& scenario_name = "");

}  // namespace gpuslice::sim
