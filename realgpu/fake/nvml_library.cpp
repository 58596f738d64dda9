#include "nvml_library.hpp"

#include <pthread.h>

#include <cstring>

namespace gpuslice::fake {

namespace {

Nvml* the_nvml = nullptr;

// No thread may hold the library's mutex across fork, or the child would
// inherit it locked.
void before_fork() { the_nvml->mutex.lock(); }
void after_fork() { the_nvml->mutex.unlock(); }

}  // namespace

Nvml& nvml() {
  static const bool made = [] {
    the_nvml = new Nvml();  // never destroyed: callers may outlive static destruction
    for (std::size_t i = 0; i < kMaxDevices; ++i) the_nvml->slots[i] = i;
    pthread_atfork(before_fork, after_fork, after_fork);
    return true;
  }();
  (void)made;
  return *the_nvml;
}

nvmlReturn_t Nvml::initialise() {
  EnvSnapshot now =
      EnvSnapshot::take({kFleetVariable, kStateDirVariable, kUtilWindowVariable, kUtilAttributionVariable});
  if (state && now == environment) {
    ++init_count;
    return NVML_SUCCESS;
  }
  // Reloaded when the environment changed, as the fake CUDA library does.
  state.reset();
  fleet.clear();
  const std::string fleet_text = env_value(kFleetVariable).value_or(kDefaultFleet);
  FleetParse parsed = parse_fleet(fleet_text);
  if (!parsed.ok()) {
    report(parsed.error);
    return NVML_ERROR_UNKNOWN;
  }
  std::string error;
  const std::uint64_t window_ms = env_number(kUtilWindowVariable, kDefaultUtilWindowMs, 1, 3'600'000, error);
  if (!error.empty()) {
    report(error);
    return NVML_ERROR_UNKNOWN;
  }
  const std::string attribution = env_value(kUtilAttributionVariable).value_or("per-process");
  if (attribution != "per-process" && attribution != "time-sliced") {
    report(std::string(kUtilAttributionVariable) + "=" + attribution + ": use per-process or time-sliced");
    return NVML_ERROR_UNKNOWN;
  }
  std::unique_ptr<SharedState> attached =
      SharedState::attach(env_value(kStateDirVariable).value_or("/tmp"), fleet_text, parsed.devices, error);
  if (!attached) {
    report(error);
    return NVML_ERROR_UNKNOWN;
  }
  fleet = std::move(parsed.devices);
  state = std::move(attached);
  window_ns = static_cast<std::int64_t>(window_ms) * 1'000'000;
  time_sliced = attribution == "time-sliced";
  environment = std::move(now);
  ++init_count;
  return NVML_SUCCESS;
}

nvmlReturn_t Nvml::shutdown() {
  if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (--init_count == 0) state.reset();
  return NVML_SUCCESS;
}

nvmlReturn_t Nvml::require_initialised() const {
  return init_count > 0 && state ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

nvmlReturn_t Nvml::device(nvmlDevice_t handle, std::size_t& index) const {
  if (const nvmlReturn_t rc = require_initialised(); rc != NVML_SUCCESS) return rc;
  // Compared as integers: a foreign pointer is not part of `slots`.
  const auto address = reinterpret_cast<std::uintptr_t>(handle);
  const auto first = reinterpret_cast<std::uintptr_t>(slots.data());
  if (address < first || address >= first + fleet.size() * sizeof(std::size_t) ||
      (address - first) % sizeof(std::size_t) != 0)
    return NVML_ERROR_INVALID_ARGUMENT;
  index = (address - first) / sizeof(std::size_t);
  return NVML_SUCCESS;
}

nvmlReturn_t copy_out(const std::string& text, char* buffer, unsigned int length) {
  if (buffer == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < text.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return NVML_SUCCESS;
}

}  // namespace gpuslice::fake
