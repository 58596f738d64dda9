// The slice a container gets, read from the environment HAMi's device plugin
// injects (HAMi-core's contract, so the shim can stand in for libvgpu.so):
//   CUDA_DEVICE_MEMORY_LIMIT[_<i>]   bytes, or with k/m/g suffix (binary); 0 = no limit
//   CUDA_DEVICE_SM_LIMIT[_<i>]       percent of compute; 0 or >= 100 = no throttling
//   CUDA_DEVICE_MEMORY_SHARED_CACHE  the file all the container's processes share
//   GPU_CORE_UTILIZATION_POLICY      default | force | disable
//   CUDA_TASK_PRIORITY               0 (highest) .. 100; default 1 (HAMi's webhook sets it
//                                    from the nvidia.com/priority limit)
//   LIBCUDA_LOG_LEVEL                0 errors .. 4 debug
// Unlike HAMi-core, malformed values ("1.5g", "abc", "-1") are refused with a
// message naming the variable, never read as something else.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuslice::realgpu {

inline constexpr int kMaxDevices = 16;

enum class CorePolicy { Default, Force, Disable };

struct SliceEnv {
  uint64_t memory_limit[kMaxDevices] = {};  // bytes per visible device ordinal; 0 = none
  int sm_limit[kMaxDevices] = {};           // percent; 0 = none
  CorePolicy core_policy = CorePolicy::Default;
  std::string shared_cache = "/tmp/cudevshr.cache";
  int task_priority = 1;
  int log_level = 1;
  bool any_memory_limit() const;
  bool throttles(int device) const { return sm_limit[device] > 0 && sm_limit[device] < 100; }
};

struct EnvError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A byte size as HAMi writes it: digits with an optional k/m/g (KiB, MiB,
// GiB) suffix, either case. Throws EnvError naming `variable`.
uint64_t parse_bytes(std::string_view text, std::string_view variable);
// A percentage 0..100 (a whole number). Throws EnvError.
int parse_percent(std::string_view text, std::string_view variable);

// Reads the slice from a getenv-like lookup (tests pass their own).
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
SliceEnv read_slice_env(const EnvLookup& lookup);
SliceEnv read_slice_env();  // from the process environment

}  // namespace gpuslice::realgpu
