// A running cluster as the simulator's starting point: what
// `kubectl get nodes,pods -A -o yaml` (or -o json) prints from a cluster
// running HAMi, Koordinator (with its Device CRs: add `devices`) or KAI.
// Nodes with GPUs (HAMi's registration, a Device CR, KAI's GPU labels) are
// the fleet; placed pods (HAMi's, Koordinator's device-allocated, KAI's GPU
// groups) are the starting usage; Pending pods that ask for HAMi resources are
// the queue at time 0, in creation order; every other pod is skipped and
// counted by reason. Bad input fails with file:line: field: what.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/codec/kube_reader.hpp"
#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/quota.hpp"
#include "gpuslice/sim/durations.hpp"
#include "gpuslice/sim/fleet.hpp"
#include "gpuslice/sim/workload.hpp"

namespace gpuslice::sim {

// A pod already holding its place when the run starts: a HAMi pod with its
// grants, or a pod bound without GPUs whose CPU and memory count on its node.
struct StartingPod {
  core::PodRequest request;
  size_t node = 0;  // index into ClusterSnapshot::nodes
  core::PodAllocation allocation;
  double duration = kForever;  // seconds it still runs
  PodPriority priority;        // spec.priority (set by the Priority admission plugin)
  bool controlled = false;     // a controller owns it: preempted, it queues again
  // The budgets counting it and guarding it (PodSpec's fields of the same names).
  std::vector<uint32_t> counted_by_budgets, guarded_by_budgets;
};

struct QueuedPod {
  core::PodRequest request;
  double duration = kForever;  // seconds it runs once placed
  PodPriority priority;
  bool controlled = false;
  std::vector<uint32_t> counted_by_budgets, guarded_by_budgets;  // as StartingPod's
};

// Every pod the snapshot lists, any phase: its name, phase and what decides
// whether it may be moved (labels, controller, readiness), for gpuslice
// defrag and the disruption budgets it counts.
struct ListedPod {
  std::string key;  // namespace/name
  std::string phase;
  core::codec::PodMeta meta;
};

// A pending pod whose request cannot be read (a malformed gpumem, ...):
// HAMi leaves that one pod Pending and schedules the rest, so the run goes
// on without it. Where and why, as the InputError it raised said it.
struct MalformedPod {
  std::string name;  // namespace/name
  std::string file;
  int line = 0;
  std::string field, detail;
  std::string message() const;      // file:line: field: detail
  [[noreturn]] void raise() const;  // --strict: the InputError, as before
};

struct ClusterSnapshot {
  std::string source;
  std::vector<core::Node> nodes;
  // By node: its metadata.labels (--node-groups joins nodes to a group by them).
  std::vector<core::codec::TextMap> node_labels;
  std::vector<StartingPod> starting;
  std::vector<QueuedPod> queue;           // creation order (tie: namespace/name)
  size_t running_gpu_pods = 0;            // HAMi pods among `starting`
  std::map<std::string, size_t> skipped;  // reason -> pods left out
  std::vector<std::string> warnings;      // stale cards, unknown nodes, ...
  std::vector<ListedPod> listed;          // every pod, in file order
  // ResourceQuotas in the dump (HAMi v2.10's managed keys), in file order.
  std::vector<core::NamespaceQuota> quotas;
  std::vector<MalformedPod> malformed;  // pending pods left out, in file order
  // The PodDisruptionBudgets (policy/v1) in the dump, in file order, with
  // the pods the run does not simulate counted; the starting and queued
  // pods name theirs.
  std::vector<DisruptionBudget> budgets;
};

// The reasons pods are left out, as summary.json and the table name them.
inline constexpr const char* kSkipNoGpu = "asks no HAMi GPU";
inline constexpr const char* kSkipSucceeded = "Succeeded";
inline constexpr const char* kSkipFailed = "Failed";
inline constexpr const char* kSkipUnknownNode = "on a node not in the snapshot";
inline constexpr const char* kSkipNotHami = "holds GPUs HAMi did not grant";
inline constexpr const char* kSkipOverCapacity = "does not fit its node's registered capacity";
inline constexpr const char* kSkipKaiReservation = "KAI reservation pod (its group's pods hold the card)";

// assume_duration: seconds every pod without gpuslice.io/expected-duration
// runs (the running ones from time 0); nullopt: such pods never leave.
// One pass of the reader over the text (kube_reader.hpp): each object is
// decoded, read as HAMi reads it, and dropped.
ClusterSnapshot read_snapshot(const core::codec::KubeText& text, std::optional<double> assume_duration,
                              const core::codec::RequestDefaults& defaults = {});
// The same for text in memory (tests, Python).
ClusterSnapshot parse_snapshot(std::string_view text, const std::string& source,
                               std::optional<double> assume_duration = std::nullopt,
                               const core::codec::RequestDefaults& defaults = {});
ClusterSnapshot load_snapshot(const std::string& path, std::optional<double> assume_duration = std::nullopt,
                              const core::codec::RequestDefaults& defaults = {});

// kubectl cordon (spec.unschedulable, or --cordon): every card of the node
// refuses new pods, while those it holds keep running.
void cordon_all_cards(core::Node& node);

}  // namespace gpuslice::sim
