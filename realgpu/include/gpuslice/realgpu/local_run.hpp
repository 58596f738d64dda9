// `gpuslice realgpu run SCENARIO.yaml`: this machine as one node. Its GPUs
// (listed through NVML) become a HAMi registration, the scenario's pods are
// placed by the same core as `gpuslice place`, and each placed pod's command
// runs as a process with the shim preloaded and the environment HAMi's
// device plugin would inject (CUDA_DEVICE_MEMORY_LIMIT_<i>, CUDA_DEVICE_SM_LIMIT_<i>,
// CUDA_DEVICE_MEMORY_SHARED_CACHE, GPU_CORE_UTILIZATION_POLICY, visible devices).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gpuslice/realgpu/toolkit.hpp"

namespace gpuslice::realgpu {

struct LocalPod {
  std::string name;
  int gpu = 1;
  int64_t gpumem_mib = 0;  // 0: HAMi's default (the whole card)
  int gpucores = 0;
  std::string core_policy = "default";
  int priority = -1;                 // CUDA_TASK_PRIORITY (HAMi's nvidia.com/priority); -1: not set
  std::vector<std::string> command;  // "{probe}" stands for gpuslice-probe
  std::string expect = "placed";     // placed | unschedulable
  std::optional<int> expect_exit;
  int line = 0;
};

struct LocalScenario {
  std::string name, description, source;
  int split = 10;  // slots per card in the registration (HAMi deviceSplitCount)
  // The fake driver's cards (GPUSLICE_FAKE_GPUS, name:MiB:SMs;...) when the
  // fake driver runs the scenario; ignored on a real GPU.
  std::string fake_gpus;
  // A node monitor's feedback (HAMi's vGPUmonitor rules, as `gpuslice
  // monitor` runs them) while the pods run, every feedback_period seconds:
  // `default` and priorities then behave as on a HAMi node.
  bool monitor = false;
  double feedback_period = 5;
  std::vector<LocalPod> pods;
};

// Throws core::InputError naming the file, line and field.
LocalScenario load_local_scenario(const std::string& path);

struct PodOutcome {
  std::string name;
  bool placed = false;
  std::string reason;      // why not, in HAMi's words
  std::string allocation;  // hami.io/vgpu-devices-allocated
  std::vector<std::string> cards;
  bool started = false;  // placed and its command started (a placed pod without one is not)
  int exit_code = 0;
  double seconds = 0;
  std::string output_tail, shim_lines;
  std::string output;  // all of its stdout, for callers that read it (not in the JSON)
  bool as_expected = false;
  // With `monitor`: what the monitor read in the pod's accounting file while
  // it ran (peak memory, limit, passes it was held to its share or blocked).
  nlohmann::json monitor;
};

struct RunReport {
  std::string scenario, driver, node;
  nlohmann::json registration;
  std::vector<PodOutcome> pods;
  bool all_as_expected() const;
  nlohmann::json to_json() const;
  void print(std::ostream& out) const;
};

RunReport run_locally(const LocalScenario& scenario, DriverChoice driver);
// On a toolkit the caller holds (and cleans up); a pod still running after
// `timeout_seconds` (0: no limit) is killed and reported as timed out.
RunReport run_locally(const LocalScenario& scenario, const Toolkit& toolkit, double timeout_seconds = 0);

}  // namespace gpuslice::realgpu
