// The fake NVML's process-local side: configuration, init count and the
// device handles. NVML sees every device in physical order (it ignores
// CUDA_VISIBLE_DEVICES) and only reads the shared state, except that it
// reclaims dead processes' memory when it reports memory or processes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "device_table.hpp"
#include "environment.hpp"
#include "nvml_exports.hpp"
#include "shared_state.hpp"

namespace gpuslice::fake {

inline constexpr std::uint64_t kDefaultUtilWindowMs = 200;

class Nvml {
 public:
  std::mutex mutex;
  unsigned init_count = 0;
  EnvSnapshot environment;
  std::vector<DeviceSpec> fleet;
  std::unique_ptr<SharedState> state;
  std::int64_t window_ns = static_cast<std::int64_t>(kDefaultUtilWindowMs) * 1'000'000;
  // GPUSLICE_FAKE_UTIL_ATTRIBUTION=time-sliced: each sampling period's
  // process sample goes wholly to one process, reading the device's busy
  // share, as an H100 time-slicing two contexts reports it (each process's
  // own share otherwise).
  bool time_sliced = false;
  // nvmlDevice_t points at one of these; the index is the physical one.
  std::array<std::size_t, kMaxDevices> slots{};

  // nvmlInit: counts, and (re)loads the configuration when the environment
  // changed since the last load.
  nvmlReturn_t initialise();
  nvmlReturn_t shutdown();
  nvmlReturn_t require_initialised() const;
  nvmlReturn_t device(nvmlDevice_t handle, std::size_t& index) const;
  nvmlDevice_t handle(std::size_t index) { return reinterpret_cast<nvmlDevice_t>(&slots[index]); }
};

Nvml& nvml();

// Copies `text` with its terminator into a caller buffer of `length`.
nvmlReturn_t copy_out(const std::string& text, char* buffer, unsigned int length);

}  // namespace gpuslice::fake
