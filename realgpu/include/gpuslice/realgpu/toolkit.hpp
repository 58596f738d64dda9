// Where the realgpu pieces are: the probe, the shim and the fake driver sit
// beside the gpuslice binary (build/bin, build/lib, build/lib/fakecuda), and
// which driver the children will use.
#pragma once

#include <map>
#include <string>

namespace gpuslice::realgpu {

enum class DriverChoice { Auto, Fake, Real };

struct Toolkit {
  std::string probe;     // gpuslice-probe
  std::string shim;      // libgpuslice_shim.so
  std::string fake_dir;  // holds the fake libcuda.so.1 / libnvidia-ml.so.1
  std::string driver;    // "real" or "fake", once chosen
  std::string scratch;   // a fresh folder for slice files and the fake's state
  // The fake driver's own settings for every child (GPUSLICE_FAKE_GPUS,
  // GPUSLICE_FAKE_CONTEXT_MIB, ...): which cards it models. Unused on a real driver.
  std::map<std::string, std::string> fake_settings;
  // HAMi's hook path inside the scratch folder: each slice's accounting file
  // is <hook_path>/containers/<pod UID>_<container>/<uuid>.cache, as HAMi's
  // device plugin lays them out, so a node monitor finds them.
  std::string hook_path() const { return scratch + "/vgpu"; }
};

// Finds the pieces next to this executable and picks the driver: Auto takes
// the real one when libcuda.so.1 loads, the fake one otherwise. Throws
// std::runtime_error naming what is missing.
Toolkit locate_toolkit(DriverChoice choice);

// The environment every child gets: the chosen driver, no slice variables
// inherited from the caller (a value "" removes a variable).
std::map<std::string, std::string> driver_environment(const Toolkit& t);

// NVML for the gpuslice process itself, outside every slice (NvmlReader):
// the fake's library beside the fake driver, else the system's; and the
// settings its initialise needs (on the fake: the fleet and state of the
// children, sampling device utilisation over `fake_window_ms`; none on a
// real driver).
std::string host_nvml_library(const Toolkit& t);
std::map<std::string, std::string> host_nvml_settings(const Toolkit& t, unsigned fake_window_ms);

// A slice as HAMi's device plugin injects it, plus the shim preloaded.
struct SliceSpec {
  std::string name;         // the pod: names its UID (pod_uid_for) and so its accounting folder
  uint64_t memory_mib = 0;  // 0 = no memory limit
  int cores = 0;            // percent; 0 = no compute limit
  std::string policy = "default";
  std::string visible_devices;  // CUDA_VISIBLE_DEVICES, "" = unchanged
  int priority = -1;            // CUDA_TASK_PRIORITY; -1 = not set (HAMi-core's default, 1)
};
std::map<std::string, std::string> slice_environment(const Toolkit& t, const SliceSpec& s);

// The pod UID a slice name stands for (UUID-shaped, the same for the same
// name), and the container name every slice here has.
std::string pod_uid_for(const std::string& slice_name);
inline constexpr const char* kSliceContainer = "main";
// Where a slice's accounting file is: a folder of its own under the hook
// path, created (mode 0777, as the device plugin makes it).
std::string slice_cache_path(const Toolkit& t, const std::string& slice_name);

}  // namespace gpuslice::realgpu
