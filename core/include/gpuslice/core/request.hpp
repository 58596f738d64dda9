// A pod's demand as HAMi's scheduler sees it, after webhook defaulting.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuslice/core/model.hpp"

namespace gpuslice::core {

// HAMi's "memory percentage not given" sentinel.
inline constexpr int32_t kMemoryPercentUnset = 101;

struct ContainerRequest {
  std::string name;
  int32_t count = 0;                             // nvidia.com/gpu: distinct cards
  int64_t memory_mib = 0;                        // nvidia.com/gpumem per card
  int32_t memory_percent = kMemoryPercentUnset;  // nvidia.com/gpumem-percentage
  int32_t cores = 0;                             // nvidia.com/gpucores per card
  int32_t priority = 0;                          // nvidia.com/priority (env only)
  std::string vendor = "NVIDIA";                 // which cards serve it (Device::vendor)
  bool wants_devices() const { return count > 0; }
  // Memory this container takes on a card of the given size (HAMi Fit step 8).
  int64_t memory_on(int64_t card_memory_mib) const {
    if (memory_mib > 0) return memory_mib;
    if (memory_percent != kMemoryPercentUnset) return card_memory_mib * memory_percent / 100;
    return 0;
  }
};

struct ScoringWeights {
  int64_t slot = 1, core = 1, memory = 1;
  friend bool operator==(const ScoringWeights&, const ScoringWeights&) = default;
};

// Pod-level steering annotations (nvidia.com/*, hami.io/*).
struct Selectors {
  std::vector<std::string> use_types, nouse_types;  // case-insensitive substrings
  std::vector<std::string> use_uuids, nouse_uuids;  // exact
  bool numa_bind = false;
  std::string vgpu_mode;  // empty = any mode
};

struct PodRequest {
  std::string name;
  std::string ns = "default";
  std::string uid;
  std::vector<ContainerRequest> init_containers;
  std::vector<ContainerRequest> containers;
  HostResources host;  // summed CPU / memory requests
  Selectors selectors;
  std::string node_policy;  // hami.io/node-scheduler-policy (empty: scheduler default)
  std::string gpu_policy;   // hami.io/gpu-scheduler-policy (may be a comma chain)
  ScoringWeights weights;
  std::vector<std::string> allowed_models;  // trace replay (openb gpu_spec); empty = any

  bool wants_devices() const {
    for (const auto& c : init_containers)
      if (c.wants_devices()) return true;
    for (const auto& c : containers)
      if (c.wants_devices()) return true;
    return false;
  }
  // The first container that asks for cards (the one a sharing pod has).
  const ContainerRequest* first_device_container() const {
    for (size_t i = 0; i < container_count(); ++i)
      if (container_at(i).wants_devices()) return &container_at(i);
    return nullptr;
  }
  size_t container_count() const { return init_containers.size() + containers.size(); }
  // Container i in annotation order: init containers first.
  const ContainerRequest& container_at(size_t i) const {
    return i < init_containers.size() ? init_containers[i] : containers[i - init_containers.size()];
  }
};

}  // namespace gpuslice::core
