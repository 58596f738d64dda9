// HAMi vGPUmonitor's metrics (cmd/vGPUmonitor/metrics.go): the same names,
// help texts, label sets and const label zone="vGPU", and behind
// --legacy-metrics the old names with their old labels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuslice/monitor/host_gpus.hpp"

namespace gpuslice::monitor {

// One container's file as the metrics read it, per device index.
struct ContainerView {
  std::string ns, pod, container;
  struct Device {
    int index = 0;     // vdevice_index: the file's device index
    std::string uuid;  // its first 40 characters, as HAMi takes them
    uint64_t total = 0, limit = 0, context = 0, module = 0, buffer = 0, sm_util = 0;
  };
  std::vector<Device> devices;
  int64_t last_kernel_time = 0;  // 0: never (no last-kernel metric)
};

// The /metrics text. `now` is seconds since the epoch.
std::string render_metrics(const std::string& node, const std::vector<HostGpu>& gpus,
                           const std::vector<ContainerView>& containers, int64_t now, bool legacy);

// The metric names render_metrics may write (HAMi's new names, then the
// legacy ones), for tests and docs.
std::vector<std::string> metric_names(bool legacy);

}  // namespace gpuslice::monitor
