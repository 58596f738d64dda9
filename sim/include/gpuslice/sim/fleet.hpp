// Fleets for the simulator: node templates x counts, Kubernetes Node
// manifests, or the openb node list.
#pragma once

#include <optional>
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
  // HAMi's operating mode for the cards: "hami-core", or "mig", whose
  // registration (slots = count, cores = 100, mig_profiles) the scenario
  // reader generates as HAMi's device plugin would (mig_registration.hpp).
  std::string mode = "hami-core";
  std::vector<core::MigProfile> mig_profiles{};
};

struct FleetGroup {
  NodeTemplate node;  // node.name names the group; the rest is unused with a prototype
  int count = 1;
  // A Node manifest copied `count` times (gpuslice simulate --add-nodes):
  // copies are named <name>-<i>, their cards GPU-<node>-<c>.
  std::optional<core::Node> prototype;
};

// `first` (a snapshot's nodes) keep their names and come first, so node
// indices into them stay valid whatever the groups' counts.
core::Cluster build_fleet(const std::vector<FleetGroup>& groups, const std::vector<core::Node>& first = {});

}  // namespace gpuslice::sim
