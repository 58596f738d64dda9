// The placement core's domain model: what a node offers and what is in use.
// Plain value types; everything the hot path touches is integers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuslice::core {

// One physical card as a node registers it (hami.io/node-nvidia-register).
struct Device {
  std::string uuid;
  int index = 0;
  std::string type;  // e.g. "NVIDIA-Tesla T4" or "NVIDIA RTX A6000"
  std::string vendor = "NVIDIA";
  int32_t slots = 0;       // vGPU slots (HAMi "count", deviceSplitCount)
  int64_t memory_mib = 0;  // devmem, already multiplied by deviceMemoryScaling
  int32_t cores = 0;       // devcore, 100 x deviceCoreScaling
  int numa = 0;
  std::string mode = "hami-core";
  bool healthy = false;  // HAMi omits false in JSON, so absent means unhealthy
};

// What placed pods hold on one card.
struct DeviceUsage {
  int32_t slots = 0;
  int64_t memory_mib = 0;
  int32_t cores = 0;
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

struct Node {
  std::string name;
  std::vector<Device> devices;
  HostResources capacity;
  std::vector<std::string> cordoned_uuids;  // hami.io/device-cordon
  // Pair scores between this node's cards (hami.io/node-nvidia-score), by
  // device position: topology[i][j]. Empty when the node publishes none.
  std::vector<std::vector<int>> topology;
  std::string model;  // free-form GPU model label (openb "model"), may be empty
};

}  // namespace gpuslice::core
