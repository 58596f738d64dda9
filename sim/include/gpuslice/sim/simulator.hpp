// One simulation run: the event loop that replays a pod stream against a
// fleet with one placement policy, through the same core the CLI uses.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpuslice/sim/metrics.hpp"
#include "gpuslice/sim/scenario.hpp"

namespace gpuslice::sim {

struct RunOptions {
  std::string policy = "hami-binpack";
  std::string gpu_policy = "spread";
  uint64_t seed = 42;
  QueueDiscipline queue = QueueDiscipline::Fifo;
  size_t explain_limit = 20000;  // failures explained with every node's HAMi reason
  bool card_use = true;          // keep the per-card use log (card_use.csv)
  // Keep per-pod names, allocations and refusal explanations (pods.csv,
  // events); off for grids that read only the summary and curves.
  bool records = true;
  // Called now and then with the fraction done; returning false stops the run.
  std::function<bool(double)> progress;
};

struct PodRecord {
  std::string name, kind, node, allocation, status, reason;
  double arrival = 0, start = -1, end = -1;
  int64_t gpu_milli = 0;
  std::string origin;     // snapshot runs: queue | later
  std::string shortfall;  // snapshot runs, pods not placed: how close the best card comes
  bool starting = false;  // a snapshot's pod placed before the run: no row in pods.csv
  // HAMi v2.10's hami.io/vgpu-mig-allocations when the pod holds MIG
  // instances (report.html and the terminal show them; pods.csv does not).
  std::string mig_allocations;
};

struct EventRecord {
  double time = 0;
  std::string pod, type, reason, message;
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
};

// The fleet is copied: a scenario can be run many times.
RunResult simulate(const Scenario& scenario, const RunOptions& options);
RunResult simulate(const core::Cluster& fleet, const Workload& workload, const RunOptions& options,
                   const std::string& scenario_name = "");

}  // namespace gpuslice::sim
