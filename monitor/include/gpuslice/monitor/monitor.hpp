// `gpuslice monitor`: the node daemon beside the shim, doing what HAMi's
// vGPUmonitor does for HAMi-core: every period it rescans the containers'
// accounting files (<hook path>/containers/<pod UID>_<container>/*.cache),
// runs HAMi's feedback over them (recent_kernel, utilization_switch), and
// fills each process's SM utilization from NVML; /metrics serves HAMi's
// metrics. It reads files libvgpu.so wrote as well as the shim's.
//
// Beyond HAMi's monitor: it never deletes a folder unless asked
// (--clean-stale), and then only one whose pod is gone, untouched for the
// grace period and whose file no live process holds; a gpuslice file no
// process holds any more has its slots marked exited, so a container
// killed outright stops counting (HAMi #2281).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "gpuslice/monitor/host_gpus.hpp"
#include "gpuslice/monitor/node_metrics.hpp"
#include "gpuslice/monitor/pod_source.hpp"
#include "gpuslice/realgpu/node_files.hpp"

namespace gpuslice::monitor {

struct MonitorOptions {
  std::string hook_path = "/usr/local/vgpu";
  std::string node_name;
  bool legacy_metrics = false;
  double feedback_period = 5;  // seconds, as HAMi's ticker
  bool feedback = true;        // false: the files are only read
  bool clean_stale = false;
  double stale_after = 300;  // seconds a folder must be untouched (HAMi's resync interval)
};

class Monitor {
 public:
  Monitor(MonitorOptions options, std::unique_ptr<PodSource> pods, std::unique_ptr<HostGpus> gpus);

  // One period: rescan, feedback, utilization, stale folders. Logs to stderr.
  void tick();
  // The /metrics text now.
  std::string metrics();
  // Each container's view now (what the metrics say about it).
  std::vector<ContainerView> containers();
  const MonitorOptions& options() const { return options_; }
  realgpu::FeedbackOutcome last_feedback() const;

 private:
  std::vector<ContainerView> containers_locked();
  void fill_utilization_locked();
  void release_dead_files_locked();
  void clean_stale_locked();

  MonitorOptions options_;
  std::unique_ptr<PodSource> pods_;
  std::unique_ptr<HostGpus> gpus_;
  mutable std::mutex mutex_;
  realgpu::NodeFiles files_;
  realgpu::FeedbackOutcome last_feedback_;
  bool said_nvml_ = false;
  std::set<std::string> said_kept_;  // stale folders kept for a live holder, said once
};

}  // namespace gpuslice::monitor
