// A pod's demand: one model for every dialect (docs/dialects.md). HAMi's
// requests as its scheduler sees them after webhook defaulting; a
// Koordinator pod's device request (pod-level) on the container that asks
// for it, per GPU; a KAI pod's fraction or memory on the container it names.
// Each field says whose resource it carries; a policy reads only the fields
// its dialect can express (translate.hpp makes a request fit one dialect
// or says which field it cannot carry).
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
  // Distinct cards: nvidia.com/gpu; Koordinator's GPUs the request spreads
  // over (gpu.shared, or a percentage over 100 / 100); KAI's
  // gpu-fraction-num-devices (1 by default) or nvidia.com/gpu.
  int32_t count = 0;
  int64_t memory_mib = 0;  // per card: nvidia.com/gpumem; KAI gpu-memory (MiB)
  // Per card, percent of the card's memory: nvidia.com/gpumem-percentage;
  // Koordinator gpu-memory-ratio.
  int32_t memory_percent = kMemoryPercentUnset;
  int64_t memory_bytes = 0;    // per card: Koordinator gpu-memory (a Quantity in bytes); 0: not asked
  double memory_fraction = 0;  // per card: KAI gpu-fraction (0 < f <= 1); 0: not asked
  // Per card, percent of the card's compute: nvidia.com/gpucores (HAMi
  // clamps to 100); Koordinator gpu-core (not clamped: 200 fits nowhere).
  int32_t cores = 0;
  int32_t priority = 0;           // nvidia.com/priority (env only)
  std::string vendor = "NVIDIA";  // which cards serve it (Device::vendor)
  bool wants_devices() const { return count > 0; }
  // Fields only HAMi's own resource names cannot carry (translate.hpp).
  bool carries_foreign_memory() const { return memory_bytes != 0 || memory_fraction != 0; }
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
  // Koordinator: the pod label koordinator.sh/gpu-isolation-provider; a
  // shared request fits only nodes labelled alike (empty: any node).
  std::string gpu_isolation_provider;

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
  // Where that container is in container_at order (container_count() when none).
  size_t first_device_index() const {
    for (size_t i = 0; i < container_count(); ++i)
      if (container_at(i).wants_devices()) return i;
    return container_count();
  }
  size_t container_count() const { return init_containers.size() + containers.size(); }
  // Container i in annotation order: init containers first.
  const ContainerRequest& container_at(size_t i) const {
    return i < init_containers.size() ? init_containers[i] : containers[i - init_containers.size()];
  }
};

}  // namespace gpuslice::core
