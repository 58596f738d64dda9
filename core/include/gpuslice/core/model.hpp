// The placement core's domain model: what a node offers and what is in use.
// Plain value types; everything the hot path touches is integers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuslice/core/dialect.hpp"

namespace gpuslice::core {

// One place a MIG instance may sit on a card, in memory slices (NVML's
// GetGpuInstancePossiblePlacements): slices [start, start + size).
struct MigPlacement {
  uint32_t start = 0;
  uint32_t size = 0;
  friend bool operator==(const MigPlacement&, const MigPlacement&) = default;
};

// Every MIG-capable card has at most this many memory slices (A30: 4;
// A100, H100, H200, B200: 8); a placement past it exceeds the card.
inline constexpr uint32_t kMigSlices = 8;

// A MIG profile a MIG-mode card registers (HAMi v2.10 MigProfile, the
// node's migProfiles): its name from the device config's allowlist, its
// memory and compute share (percent) from NVML, and where it may sit.
struct MigProfile {
  std::string name;  // e.g. "1g.10gb"
  int32_t memory_mib = 0;
  int32_t cores = 0;
  uint32_t slice_count = 0;
  std::vector<MigPlacement> placements{};  // NVML's order
  friend bool operator==(const MigProfile&, const MigProfile&) = default;
};

// One physical card as a node registers it (hami.io/node-nvidia-register),
// or as a Koordinator Device CR or KAI's node labels describe it (the
// dialect codecs fill what their source says; docs/dialects.md).
struct Device {
  std::string uuid;
  int index = 0;
  std::string type;  // e.g. "NVIDIA-Tesla T4" or "NVIDIA RTX A6000"
  std::string vendor = "NVIDIA";
  int32_t slots = 0;       // vGPU slots (HAMi "count", deviceSplitCount)
  int64_t memory_mib = 0;  // devmem, already multiplied by deviceMemoryScaling
  int32_t cores = 0;       // devcore, 100 x deviceCoreScaling
  int numa = 0;
  // The PCIe switch the card sits under (Koordinator's Device CR
  // topology.pcieID); empty when the fleet does not say. Koordinator builds
  // its topology tree only when every card of a node has one.
  std::string pcie;
  std::string mode = "hami-core";
  bool healthy = false;  // HAMi omits false in JSON, so absent means unhealthy
  // A MIG-mode card's profiles in registration order (read only when
  // mode is "mig": HAMi v2.10 places instances of them, docs/simulator.md).
  std::vector<MigProfile> mig_profiles{};
  // Asked per card in the fit and the FGD look-ahead: the length decides
  // almost always, so no call to compare (operator== against a literal is one).
  bool is_mig() const { return mode.size() == 3 && mode[0] == 'm' && mode[1] == 'i' && mode[2] == 'g'; }
};

// A healthy HAMi-core card with what every fleet built in code sets (openb's
// nodes, KAI's GPU labels, the benchmarks' and tests' fleets); the other
// fields keep Device's defaults.
inline Device healthy_card(std::string uuid, int index, std::string type, int32_t slots, int64_t memory_mib,
                           int32_t cores = 100) {
  Device d;
  d.uuid = std::move(uuid);
  d.index = index;
  d.type = std::move(type);
  d.slots = slots;
  d.memory_mib = memory_mib;
  d.cores = cores;
  d.healthy = true;
  return d;
}

// What placed pods hold on one card. memory_mib counts whole MiB; a grant
// made in bytes (Koordinator's gpu-memory) keeps the bytes past its whole
// MiB in memory_sub_mib, so the exact bytes held are
// memory_mib * 2^20 + memory_sub_mib and memory_mib never passes the card.
// memory_ratio is Koordinator's gpu-memory-ratio held (percent of the card),
// which Koordinator counts apart from the bytes.
struct DeviceUsage {
  int32_t slots = 0;
  int64_t memory_mib = 0;
  int32_t cores = 0;
  int32_t memory_ratio = 0;
  int64_t memory_sub_mib = 0;
  // Running pods whose MIG reservations on this card cannot be read: HAMi
  // v2.10 marks the card unhealthy while they run (getNodesUsage fails closed).
  int32_t closed_by = 0;
  // MIG instances per memory slice, one byte per slice (slice k in bits
  // 8k..8k+7): a slice is taken while its count is not zero. Counts, not a
  // mask, so a pod's release frees only what it held (an init and an app
  // container may hold overlapping instances, as HAMi lets them).
  uint64_t mig_slices = 0;
  int64_t memory_bytes() const { return memory_mib * kMiB + memory_sub_mib; }
  static constexpr int64_t kMiB = int64_t{1} << 20;
  friend bool operator==(const DeviceUsage&, const DeviceUsage&) = default;
};

// Host CPU and memory. A capacity of 0 means the dimension is not tracked
// (HAMi's own filter ignores CPU; trace replays such as openb need it).
struct HostResources {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  friend bool operator==(const HostResources&, const HostResources&) = default;
};

// Per-node overrides of the device plugin (HAMi's device config "nodeconfig").
// They only matter when a registration is generated from raw card facts.
struct NodeDeviceConfig {
  int32_t split_count = 10;
  double memory_scaling = 1.0;
  double core_scaling = 1.0;
  std::string operating_mode = "hami-core";
};

// One entry of Koordinator's GPU partition table: cards that may be given
// together to a whole-card request of their count.
struct GpuPartition {
  std::vector<int> minors;
  int allocation_score = 1;
  std::optional<int64_t> ring_bus_bandwidth;  // bytes/s, when the table says
  friend bool operator==(const GpuPartition&, const GpuPartition&) = default;
};

struct Node {
  std::string name;
  std::vector<Device> devices;
  HostResources capacity;
  std::vector<std::string> cordoned_uuids;  // hami.io/device-cordon
  // Pair scores between this node's cards (hami.io/node-nvidia-score), by
  // device position: topology[i][j]. Empty when the node publishes none.
  std::vector<std::vector<int>> topology;
  std::string
      model;  // free-form GPU model label (openb "model", node.koordinator.sh/gpu-model), may be empty
  // Whose description gave the cards: HAMi's registration, a Koordinator
  // Device CR or KAI's GPU labels. Snapshots read running pods by it (a
  // bound whole-GPU pod holds its cards on a KAI node only).
  Dialect cards_from = Dialect::Hami;
  // Koordinator's node facts (docs/dialects.md); defaults elsewhere.
  std::string gpu_isolation_provider;  // label koordinator.sh/gpu-isolation-provider
  bool gpu_partition_honor = false;  // label node.koordinator.sh/gpu-partition-policy: Honor (Node or Device)
  // The Device CR's partition table (scheduling.koordinator.sh/gpu-partitions):
  // partitions by GPU count. Empty: Koordinator's built-in table for
  // H100/H800/H20 nodes (by model), else none.
  std::vector<GpuPartition> gpu_partitions;
};

}  // namespace gpuslice::core
