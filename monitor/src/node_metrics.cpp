#include "gpuslice/monitor/node_metrics.hpp"

#include <algorithm>

#include "gpuslice/serve/prometheus_text.hpp"

namespace gpuslice::monitor {

namespace {

using serve::PrometheusFamily;
using Labels = std::vector<std::pair<std::string, std::string>>;

// HAMi registers its collector under a wrapping registerer adding zone="vGPU".
constexpr const char* kZone = "vGPU";

struct Desc {
  const char* name;
  const char* help;
};

// cmd/vGPUmonitor/metrics.go, word for word.
constexpr Desc kHostMemory{"hami_host_gpu_memory_used_bytes", "GPU device memory usage in bytes"};
constexpr Desc kHostUtil{"hami_host_gpu_utilization_ratio", "GPU core utilization ratio (0-100)"};
constexpr Desc kHostMemoryUtil{"hami_host_gpu_memory_controller_utilization_ratio",
                               "GPU memory controller utilization ratio (0-100)"};
constexpr Desc kVgpuUsed{"hami_vgpu_memory_used_bytes", "vGPU device memory usage in bytes"};
constexpr Desc kVgpuLimit{"hami_vgpu_memory_limit_bytes", "vGPU device memory limit in bytes"};
constexpr Desc kCtrMemory{"hami_container_device_memory_bytes", "Container device memory usage in bytes"};
constexpr Desc kCtrUtil{"hami_container_device_utilization_ratio", "Container device SM utilization ratio"};
constexpr Desc kCtrLastKernel{"hami_container_last_kernel_elapsed_seconds",
                              "Seconds since last kernel execution in container"};
constexpr Desc kCtrContext{"hami_vgpu_memory_context_bytes", "Container device memory context size in bytes"};
constexpr Desc kCtrModule{"hami_vgpu_memory_module_bytes", "Container device memory module size in bytes"};
constexpr Desc kCtrBuffer{"hami_vgpu_memory_buffer_bytes", "Container device memory buffer size in bytes"};

constexpr Desc kLegacyHostMemory{"HostGPUMemoryUsage", "GPU device memory usage"};
constexpr Desc kLegacyHostUtil{"HostCoreUtilization", "GPU core utilization"};
constexpr Desc kLegacyVgpuUsed{"vGPU_device_memory_usage_in_bytes", "vGPU device usage"};
constexpr Desc kLegacyVgpuLimit{"vGPU_device_memory_limit_in_bytes", "vGPU device limit"};
constexpr Desc kLegacyCtrMemory{"Device_memory_desc_of_container", "Container device memory description"};
constexpr Desc kLegacyCtrUtil{"Device_utilization_desc_of_container",
                              "Container device utilization description"};
constexpr Desc kLegacyCtrLastKernel{"Device_last_kernel_of_container",
                                    "Container device last kernel description"};

constexpr Desc kNew[] = {kHostMemory, kHostUtil,      kHostMemoryUtil, kVgpuUsed,  kVgpuLimit, kCtrMemory,
                         kCtrUtil,    kCtrLastKernel, kCtrContext,     kCtrModule, kCtrBuffer};
constexpr Desc kLegacy[] = {kLegacyHostMemory, kLegacyHostUtil, kLegacyVgpuUsed,     kLegacyVgpuLimit,
                            kLegacyCtrMemory,  kLegacyCtrUtil,  kLegacyCtrLastKernel};

class Families {
 public:
  explicit Families(bool legacy) {
    for (const Desc& d : kNew) families_.push_back({d.name, d.help, "gauge", {}});
    if (legacy)
      for (const Desc& d : kLegacy) families_.push_back({d.name, d.help, "gauge", {}});
  }
  void add(const Desc& d, Labels labels, double value) {
    for (auto& f : families_)
      if (f.name == d.name) {
        labels.emplace_back("zone", kZone);
        f.add(std::move(labels), value);
        return;
      }
    // A legacy family when --legacy-metrics is off: not written.
  }
  std::string render() { return serve::render_prometheus(std::move(families_)); }

 private:
  std::vector<PrometheusFamily> families_;
};

}  // namespace

std::string render_metrics(const std::string& node, const std::vector<HostGpu>& gpus,
                           const std::vector<ContainerView>& containers, int64_t now, bool legacy) {
  Families out(legacy);
  for (const HostGpu& g : gpus) {
    const std::string index = std::to_string(g.index), type = "NVIDIA-" + g.name;
    if (g.memory_known) {
      const auto used = static_cast<double>(g.memory_used);
      out.add(kHostMemory,
              {{"node", node}, {"device_index", index}, {"device_uuid", g.uuid}, {"device_type", type}},
              used);
      out.add(kLegacyHostMemory,
              {{"nodeid", node}, {"deviceidx", index}, {"deviceuuid", g.uuid}, {"devicetype", type}}, used);
    }
    if (g.utilization_known) {
      const double gpu = g.gpu_percent;
      out.add(kHostUtil,
              {{"node", node}, {"device_index", index}, {"device_uuid", g.uuid}, {"device_type", type}}, gpu);
      out.add(kLegacyHostUtil,
              {{"nodeid", node}, {"deviceidx", index}, {"deviceuuid", g.uuid}, {"devicetype", type}}, gpu);
      out.add(kHostMemoryUtil, {{"device_index", index}, {"device_uuid", g.uuid}, {"device_type", type}},
              g.memory_percent);
    }
  }
  for (const ContainerView& c : containers) {
    for (const auto& d : c.devices) {
      const std::string index = std::to_string(d.index);
      const Labels labels = {{"namespace", c.ns},
                             {"pod", c.pod},
                             {"container", c.container},
                             {"vdevice_index", index},
                             {"device_uuid", d.uuid}};
      const Labels legacy_labels = {{"podnamespace", c.ns},
                                    {"podname", c.pod},
                                    {"ctrname", c.container},
                                    {"vdeviceid", index},
                                    {"deviceuuid", d.uuid}};
      const auto total = static_cast<double>(d.total);
      out.add(kVgpuUsed, labels, total);
      out.add(kLegacyVgpuUsed, legacy_labels, total);
      out.add(kVgpuLimit, labels, static_cast<double>(d.limit));
      out.add(kLegacyVgpuLimit, legacy_labels, static_cast<double>(d.limit));
      out.add(kCtrMemory, labels, total);
      // HAMi computes the offset label in uint64 (it wraps if the parts
      // exceed the total; the same here).
      const uint64_t offset = d.total - d.context - d.module - d.buffer;
      Labels described = legacy_labels;
      described.insert(described.end(), {{"context", std::to_string(d.context)},
                                         {"module", std::to_string(d.module)},
                                         {"data", std::to_string(d.buffer)},
                                         {"offset", std::to_string(offset)}});
      out.add(kLegacyCtrMemory, described, total);
      out.add(kCtrUtil, labels, static_cast<double>(d.sm_util));
      out.add(kLegacyCtrUtil, legacy_labels, static_cast<double>(d.sm_util));
      out.add(kCtrContext, labels, static_cast<double>(d.context));
      out.add(kCtrModule, labels, static_cast<double>(d.module));
      out.add(kCtrBuffer, labels, static_cast<double>(d.buffer));
      if (c.last_kernel_time > 0) {
        const auto elapsed = static_cast<double>(std::max<int64_t>(now - c.last_kernel_time, 0));
        out.add(kCtrLastKernel, labels, elapsed);
        out.add(kLegacyCtrLastKernel, legacy_labels, elapsed);
      }
    }
  }
  return out.render();
}

std::vector<std::string> metric_names(bool legacy) {
  std::vector<std::string> out;
  for (const Desc& d : kNew) out.push_back(d.name);
  if (legacy)
    for (const Desc& d : kLegacy) out.push_back(d.name);
  return out;
}

}  // namespace gpuslice::monitor
