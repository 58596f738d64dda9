// What arrives: pods with an arrival time and how long they run.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/disruption/disruption_budget.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::sim {

inline constexpr double kForever = std::numeric_limits<double>::infinity();

// What kube-scheduler's queue (PrioritySort) and preemption
// (DefaultPreemption) read of a pod: spec.priority, spec.preemptionPolicy,
// and the PriorityClass it came from (reports group pending times by it).
struct PodPriority {
  int32_t value = 0;
  bool preempt_never = false;  // preemptionPolicy: Never
  std::string class_name;      // priorityClassName; empty: none
  friend bool operator==(const PodPriority&, const PodPriority&) = default;
};

struct PodSpec {
  core::PodRequest request;
  double arrival = 0;          // seconds
  double duration = kForever;  // seconds of running once placed; kForever: never leaves
  std::string kind;            // template or trace class, for reports
  // GPU demand in milli-GPUs (1000 = one whole card), the study's unit:
  // count x share of one card. Used for allocation ratios and arrived demand.
  int64_t gpu_milli = 0;
  // gpu_milli is the trace's own figure (openb: count x gpu_milli), which
  // the study's allocation ratio adds up. Otherwise it is an estimate made
  // before placement (gpu_milli_of, against a typical card), and allocation
  // is measured on the cards a pod actually holds.
  bool milli_from_trace = false;
  // A draw the study's tuning appended (a second copy of a trace row): left
  // out when the typical pods are counted, which the study counts over the
  // original trace.
  bool resampled = false;
  // Snapshot runs: the name pods.csv gives (namespace/name); empty: request.name.
  std::string name;
  // Where the pod came from in a snapshot run: "queue" (Pending at time 0)
  // or "later" (MORE.yaml); empty for other runs. Such pods are explained
  // in numbers (core::shortfall) when they do not fit.
  std::string origin;
  // A snapshot's pod already placed when the run starts: it holds this
  // place from time 0 (never scheduled, no row in pods.csv).
  struct Placed {
    size_t node = 0;
    core::PodAllocation allocation;
  };
  std::optional<Placed> running_on;
  PodPriority priority;
  // A controller (a Deployment's ReplicaSet, a Job) makes the pod again when
  // it is preempted, so it queues anew; a bare pod preempted ends there.
  bool controlled = true;
  // A PodDisruptionBudget covering the pod allows no disruption now
  // (disruptionsAllowed 0): Cluster Autoscaler does not drain its node.
  bool pdb_protected = false;
  // A snapshot's PodDisruptionBudgets (indexes into
  // RunOptions::disruption_budgets): those whose disruption controller
  // counts the pod (its selector matches), and those kube-scheduler's
  // preemption charges when it evicts the pod (filterPodsWithPDBViolation:
  // the pod has labels, the selector is not empty).
  std::vector<uint32_t> counted_by_budgets, guarded_by_budgets;
};

using Workload = std::vector<PodSpec>;

// A PodDisruptionBudget of a snapshot, for the simulator's preemption: its
// status.disruptionsAllowed is recomputed from the pods it counts as they
// start and stop (the dump's status goes stale as the run goes on).
// `outside`: the dump's pods it counts that the run does not simulate
// (pods asking no GPU, terminated or malformed ones): they stay as listed.
struct DisruptionBudget {
  core::disruption::BudgetFacts facts;
  core::disruption::BudgetCounts outside;
};

// The milli-GPU demand of a request (1000 = one whole card): per card the
// larger of its core share and its memory share, memory in MiB measured
// against a typical card of the fleet; summed over app containers' cards.
int64_t gpu_milli_of(const core::PodRequest& request, int64_t typical_card_mib);

// The typical (median) card memory of a fleet, for gpu_milli_of.
int64_t typical_card_mib(const core::Cluster& fleet);

}  // namespace gpuslice::sim
