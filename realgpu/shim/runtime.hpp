// The shim's process-wide state: the slice environment, the real driver
// libraries, the shared accounting region and the CUDA <-> NVML device map.
// Made on first use and never destroyed: hooks can run from any thread at
// any time, including during exit, so nothing here may be torn down.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "driver_api.hpp"
#include "gpuslice/realgpu/slice_env.hpp"
#include "gpuslice/realgpu/slice_region.hpp"

namespace gpuslice::shim {

// glibc's dlsym, found without going through the shim's own dlsym.
void* real_dlsym(void* handle, const char* name);

// True on the thread that is opening the driver libraries (their start-up
// code may call dlsym, which must not re-enter the opening).
bool binding_driver();
// Whether `address` lies in one of the driver libraries the shim opened
// (or in a library they loaded after them, e.g. a forwarder's target).
bool is_driver_object(const void* address);

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

  // Memory limit of a CUDA ordinal of this process (0 = none): the
  // environment's, or the accounting file's when that is lower or the
  // environment has none (a process started with its limit unset still
  // gets the slice's, as under libvgpu.so, which enforces the file's).
  uint64_t memory_limit(int ordinal);
  // Compute share in percent (0 = none), read the same way.
  int sm_limit(int ordinal);
  // The accounting region (null when it cannot be opened: logged). A new
  // file gets the container's devices in NVML order with their limits and
  // the task priority.
  realgpu::SliceRegion* region();
  // The region's index for a CUDA ordinal; -1 when unknown.
  int region_device(int ordinal);
  std::optional<int> current_ordinal();
  int current_ordinal_or(int fallback) { return current_ordinal().value_or(fallback); }
  std::optional<int> ordinal_of(nvmlDevice_t device);
  nvmlDevice_t nvml_device(int ordinal);
  // After a context or module is made: what the driver holds for this
  // process beyond its allocations (NVML's per-process figure) is recorded
  // as its context or module footprint, so the slice's "used" includes it.
  void measure_footprint(int ordinal, realgpu::Footprint what);

  // The bytes the driver really takes for a request of `bytes` on a device:
  // requests of at least the device's allocation granularity (asked once
  // with cuMemGetAllocationGranularity, 2 MiB when the driver cannot say)
  // are rounded up to it, smaller ones to 512 bytes. UINT64_MAX when the
  // rounded size does not fit (such a request is then refused).
  uint64_t driver_bytes(int ordinal, uint64_t bytes);

  // Host pid discovery. NVML lists processes by their pid on the host; in a
  // pid namespace (every Kubernetes pod) that is not getpid(). Around the
  // first context this process makes, NVML's process list is read before
  // and after: the one pid that appeared is ours. Every slice process on
  // the node does this one at a time, under a lock in HAMi-core's node-wide
  // lock directory (/tmp/vgpulock, which HAMi's device plugin mounts into
  // every container; GPUSLICE_HOST_LOCK_DIR overrides it), so two pods
  // starting at once cannot take each other's pid. Without that directory
  // the lock falls back to the slice's file, which orders only siblings.
  struct ProcessSnapshot {
    bool valid = false;
    int lock_fd = -1;
    std::vector<unsigned> pids;
  };
  ProcessSnapshot host_pid_before_context(int ordinal);                     // takes the discovery lock
  void host_pid_after_context(int ordinal, const ProcessSnapshot& before);  // releases it
  // The pid NVML reports for this process (getpid() until discovered).
  unsigned host_pid();
  // The host pids NVML lists as running compute processes on this CUDA
  // ordinal's card, sorted; empty when NVML cannot say.
  std::vector<unsigned> nvml_pids(int ordinal);

  void log(Level level, const char* format, ...) __attribute__((format(printf, 3, 4)));

 private:
  Runtime();
  struct Device {
    bool known = false;
    realgpu::DeviceUuid uuid{};
    int region_device = -1;
    nvmlDevice_t nvml = nullptr;
    uint64_t granularity = 0;
    uint64_t memory_limit = 0;  // effective (see memory_limit())
    int sm_limit = 0;
  };
  realgpu::RegionSetup region_setup();
  bool cuda_ready();                          // the real driver initialised (cuInit once)
  std::optional<Device> device(int ordinal);  // described on first use, then cached

  realgpu::SliceEnv env_;
  std::string env_error_;
  RealDriver real_;
  std::once_flag driver_once_, cuda_once_, nvml_once_, region_once_;
  bool cuda_ok_ = false, nvml_ok_ = false;
  realgpu::SliceRegion* region_ = nullptr;
  std::atomic<unsigned> host_pid_{0};
  std::atomic<pid_t> host_pid_owner_{0};  // the process host_pid_ was found by (a fork child has none)
  std::mutex mutex_;
  Device devices_[realgpu::kMaxDevices];
};

}  // namespace gpuslice::shim
