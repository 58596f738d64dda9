// The node's GPUs as NVML reports them (libnvidia-ml.so.1, opened at run
// time: the fake one on machines without a GPU): what HAMi's monitor
// exports per card, and per-process SM utilization for the accounting
// files' slots.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gpuslice::monitor {

struct HostGpu {
  unsigned index = 0;
  std::string uuid, name;
  bool memory_known = false;  // false when NVML has no memory figure (unified memory)
  uint64_t memory_used = 0;
  bool utilization_known = false;
  unsigned gpu_percent = 0, memory_percent = 0;
};

class HostGpus {
 public:
  virtual ~HostGpus() = default;
  // "" when NVML answers; otherwise why not (said once in the log).
  virtual std::string problem() const = 0;
  virtual std::vector<HostGpu> list() = 0;
  // SM utilization (percent) per host pid on a card since the last call for
  // that card (NVML's process utilization samples).
  virtual std::map<unsigned, unsigned> process_utilization(const std::string& uuid) = 0;
};

std::unique_ptr<HostGpus> open_nvml();

}  // namespace gpuslice::monitor
