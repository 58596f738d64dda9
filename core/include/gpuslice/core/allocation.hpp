// Which cards a pod got: the content of hami.io/vgpu-devices-allocated.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gpuslice/core/model.hpp"

namespace gpuslice::core {

// A grant that does not state its memory ratio holds the ratio Koordinator
// would fill in for its memory: trunc(bytes / card bytes x 100) (fillGPUTotalMem).
inline constexpr int32_t kRatioFromMemory = -1;

struct DeviceGrant {
  int device = 0;  // position in Node::devices
  int64_t memory_mib = 0;
  int32_t cores = 0;
  int32_t memory_ratio = kRatioFromMemory;  // Koordinator's gpu-memory-ratio granted
  int32_t memory_sub_mib = 0;               // bytes granted past memory_mib whole MiB (Koordinator)
  // A MIG instance (HAMi v2.10): the placement it holds (size 0: not MIG)
  // and its profile's position in the card's mig_profiles (-1: a
  // read-back reservation naming a profile the card does not register).
  int32_t mig_profile = -1;
  MigPlacement mig_placement{};
  bool is_mig() const { return mig_placement.size != 0; }
  int64_t memory_bytes() const { return memory_mib * DeviceUsage::kMiB + memory_sub_mib; }
  friend bool operator==(const DeviceGrant&, const DeviceGrant&) = default;
};

// Koordinator's ratio for `bytes` of a card of `card_bytes`, as its
// fillGPUTotalMem computes it (float64 division, truncated).
int32_t memory_ratio_of(int64_t bytes, int64_t card_bytes);

// A MIG instance a running pod holds that none of its grants carries: a
// reservation read back from hami.io/vgpu-mig-allocations that pairs with
// no grant still occupies its slices (HAMi getNodesUsage's leftovers).
struct MigHold {
  int device = 0;
  MigPlacement placement{};
  friend bool operator==(const MigHold&, const MigHold&) = default;
};

// One entry per container, init containers first; a container without
// devices is an empty entry (the annotation keeps the index mapping).
struct PodAllocation {
  std::vector<std::vector<DeviceGrant>> containers;
  size_t init_count = 0;
  // Cards this running pod closes (HAMi v2.10 getNodesUsage marks them
  // unhealthy): its MIG reservations there could not be read back.
  std::vector<int> closes_cards{};
  std::vector<MigHold> mig_held{};
  bool empty() const {
    for (const auto& c : containers)
      if (!c.empty()) return false;
    return true;
  }
  friend bool operator==(const PodAllocation&, const PodAllocation&) = default;
};

// What a placed pod holds per card while it runs: init containers run one
// after another (peak of them), app containers together (sum), and the pod
// holds the larger of the two (HAMi CollapseInitContainerUsage).
struct DeviceCharge {
  int device = 0;
  DeviceUsage usage;
};
// With `devices` (the node's cards), grants without a stated ratio hold the
// ratio of their memory on their card; without, they hold none.
std::vector<DeviceCharge> effective_charges(const PodAllocation& allocation,
                                            std::span<const Device> devices = {});

// One charge added to (sign +1) or taken from (-1) a card's use, every
// dimension and MIG slice: the arithmetic of Cluster and of preemption's
// what-if, kept in one place so an eviction frees what a release frees.
// Inline, with holds_charge: the what-if runs them for every pod it takes
// away and puts back.
inline void add_charge(DeviceUsage& use, const DeviceUsage& charge, int sign) {
  use.slots += sign * charge.slots;
  use.memory_mib += sign * charge.memory_mib;
  use.cores += sign * charge.cores;
  use.memory_ratio += sign * charge.memory_ratio;
  use.memory_sub_mib += sign * charge.memory_sub_mib;
  use.closed_by += sign * charge.closed_by;
  // Per-slice counts in byte lanes: adding or taking away lane by lane
  // never carries while each lane stays within 0..255 (holds_charge checks
  // a release; a charge counts one instance per slice).
  if (sign > 0)
    use.mig_slices += charge.mig_slices;
  else
    use.mig_slices -= charge.mig_slices;
}

// Whether `use` holds at least `charge` in every dimension and MIG slice
// (what a release may take away).
inline bool holds_charge(const DeviceUsage& use, const DeviceUsage& charge) {
  if (charge.mig_slices != 0)
    for (int k = 0; k < 8; ++k)
      if (((use.mig_slices >> (8 * k)) & 0xffu) < ((charge.mig_slices >> (8 * k)) & 0xffu)) return false;
  return use.slots >= charge.slots && use.memory_mib >= charge.memory_mib && use.cores >= charge.cores &&
         use.memory_ratio >= charge.memory_ratio && use.memory_bytes() >= charge.memory_bytes() &&
         use.closed_by >= charge.closed_by;
}

}  // namespace gpuslice::core
