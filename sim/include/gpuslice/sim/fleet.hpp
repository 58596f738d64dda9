// Fleets for the simulator: node templates x counts, Kubernetes Node
// manifests, or the openb node list.
#pragma once

#include <string>
#include <vector>

#include "gpuslice/core/cluster.hpp"

namespace gpuslice::sim {

struct NodeTemplate {
  std::string name;   // node names are <name>-<i>
  std::string model;  // NVML name, e.g. "Tesla T4"
  int cards = 1;
  int64_t card_memory_mib = 0;
  int32_t slots = 10;     // deviceSplitCount
  int32_t cores = 100;    // devcore
  int64_t cpu_milli = 0;  // host capacity; 0 = not tracked
  int64_t memory_mib = 0;
};

struct FleetGroup {
  NodeTemplate node;
  int count = 1;
};

core::Cluster build_fleet(const std::vector<FleetGroup>& groups);

}  // namespace gpuslice::sim
