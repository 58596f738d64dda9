// The shim's process-wide state: the slice environment, the real driver
// libraries, the shared accounting region and the CUDA <-> NVML device map.
// Made on first use and never destroyed: hooks can run from any thread at
// any time, including during exit, so nothing here may be torn down.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "driver_api.hpp"
#include "gpuslice/realgpu/slice_env.hpp"
#include "gpuslice/realgpu/slice_region.hpp"

namespace gpuslice::shim {

// glibc's dlsym, found without going through the shim's own dlsym.
void* real_dlsym(void* handle, const char* name);

// The hooked symbols (hook_table.def's *_HOOK lines); `real` is filled in
// once the driver is open.
std::span<HookEntry> hook_entries();
const HookEntry* find_hook(const char* name);

enum class Level { Error = 0, Warn = 1, Info = 2, Debug = 4 };

class Runtime {
 public:
  static Runtime& get();

  // The environment; when malformed, the message saying why (the shim then
  // refuses cuInit and every allocation instead of guessing a limit).
  const realgpu::SliceEnv& env() const { return env_; }
  const std::string& env_error() const { return env_error_; }

  // The real driver's entry points (opened on first use).
  const RealDriver& real();
  bool nvml_ready();  // NVML opened and initialised

  // Memory limit of a CUDA ordinal of this process (0 = none).
  uint64_t memory_limit(int ordinal) const;
  int sm_limit(int ordinal) const;
  // The accounting region (null when it cannot be opened: logged).
  realgpu::SliceRegion* region();
  // The region's index for a CUDA ordinal; -1 when unknown.
  int region_device(int ordinal);
  std::optional<int> current_ordinal();
  int current_ordinal_or(int fallback) { return current_ordinal().value_or(fallback); }
  std::optional<int> ordinal_of(nvmlDevice_t device);
  nvmlDevice_t nvml_device(int ordinal);
  // After a context or module is made: what the driver holds for this
  // process beyond its allocations (NVML's per-process figure) is recorded
  // as its footprint, so the slice's "used" includes it.
  void measure_footprint(int ordinal);

  void log(Level level, const char* format, ...) __attribute__((format(printf, 3, 4)));

 private:
  Runtime();
  struct Device {
    bool known = false;
    realgpu::DeviceUuid uuid{};
    int region_device = -1;
    nvmlDevice_t nvml = nullptr;
  };
  bool cuda_ready();                          // the real driver initialised (cuInit once)
  std::optional<Device> device(int ordinal);  // described on first use, then cached

  realgpu::SliceEnv env_;
  std::string env_error_;
  RealDriver real_;
  std::once_flag driver_once_, cuda_once_, nvml_once_, region_once_;
  bool cuda_ok_ = false, nvml_ok_ = false;
  realgpu::SliceRegion* region_ = nullptr;
  std::mutex mutex_;
  Device devices_[realgpu::kMaxDevices];
};

}  // namespace gpuslice::shim
