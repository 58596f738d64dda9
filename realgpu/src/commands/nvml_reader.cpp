#include "gpuslice/realgpu/nvml_reader.hpp"

#include <dlfcn.h>
#include <stdlib.h>

#include <stdexcept>

#include "gpuslice/realgpu/nvml_abi.h"

namespace gpuslice::realgpu {

struct NvmlReader::Api {
  decltype(&::nvmlInit_v2) init = nullptr;
  decltype(&::nvmlSystemGetDriverVersion) driver_version = nullptr;
  decltype(&::nvmlDeviceGetHandleByIndex_v2) by_index = nullptr;
  decltype(&::nvmlDeviceGetHandleByUUID) by_uuid = nullptr;
  decltype(&::nvmlDeviceGetName) name = nullptr;
  decltype(&::nvmlDeviceGetUUID) uuid = nullptr;
  decltype(&::nvmlDeviceGetMemoryInfo) memory = nullptr;
  decltype(&::nvmlDeviceGetUtilizationRates) utilization = nullptr;
};

namespace {

template <class F>
void bind(void* handle, F& slot, const char* name) {
  slot = reinterpret_cast<F>(dlsym(handle, name));
  if (!slot) throw std::runtime_error(std::string("NVML has no ") + name);
}

nvmlDevice_t handle_for(const auto& api, const std::string& uuid) {
  nvmlDevice_t h{};
  const nvmlReturn_t rc = uuid.empty() ? api.by_index(0, &h) : api.by_uuid(uuid.c_str(), &h);
  return rc == NVML_SUCCESS ? h : nullptr;
}

}  // namespace

NvmlReader::NvmlReader(const std::string& library) {
  // Never closed: a driver library does not expect to be unloaded, and
  // leak checkers must still see what it allocated as reachable.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw std::runtime_error("cannot load " + library + ": " + dlerror());
  api_ = std::make_unique<Api>();
  bind(handle, api_->init, "nvmlInit_v2");
  bind(handle, api_->driver_version, "nvmlSystemGetDriverVersion");
  bind(handle, api_->by_index, "nvmlDeviceGetHandleByIndex_v2");
  bind(handle, api_->by_uuid, "nvmlDeviceGetHandleByUUID");
  bind(handle, api_->name, "nvmlDeviceGetName");
  bind(handle, api_->uuid, "nvmlDeviceGetUUID");
  bind(handle, api_->memory, "nvmlDeviceGetMemoryInfo");
  bind(handle, api_->utilization, "nvmlDeviceGetUtilizationRates");
}

NvmlReader::~NvmlReader() = default;

void NvmlReader::initialise(const std::map<std::string, std::string>& settings) {
  std::map<std::string, std::optional<std::string>> saved;
  for (const auto& [name, value] : settings) {
    const char* old = getenv(name.c_str());
    saved[name] = old ? std::optional<std::string>(old) : std::nullopt;
    if (value.empty())
      unsetenv(name.c_str());
    else
      setenv(name.c_str(), value.c_str(), 1);
  }
  const nvmlReturn_t rc = api_->init();
  for (const auto& [name, value] : saved) {
    if (value)
      setenv(name.c_str(), value->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
  if (rc != NVML_SUCCESS) throw std::runtime_error("nvmlInit_v2 failed (" + std::to_string(rc) + ")");
}

std::string NvmlReader::driver_version() const {
  char text[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  return api_->driver_version(text, sizeof text) == NVML_SUCCESS ? text : "?";
}

std::optional<NvmlReader::Device> NvmlReader::device(const std::string& uuid) const {
  nvmlDevice_t h = handle_for(*api_, uuid);
  if (!h) return std::nullopt;
  Device d;
  char name[NVML_DEVICE_NAME_BUFFER_SIZE] = {}, id[NVML_DEVICE_UUID_BUFFER_SIZE] = {};
  api_->name(h, name, sizeof name);
  api_->uuid(h, id, sizeof id);
  d.name = name;
  d.uuid = id;
  nvmlMemory_t m{};
  if (api_->memory(h, &m) == NVML_SUCCESS) {
    d.total_bytes = m.total;
    d.used_bytes = m.used;
  }
  return d;
}

std::optional<unsigned> NvmlReader::utilization(const std::string& uuid) const {
  nvmlDevice_t h = handle_for(*api_, uuid);
  nvmlUtilization_t u{};
  if (!h || api_->utilization(h, &u) != NVML_SUCCESS) return std::nullopt;
  return u.gpu;
}

}  // namespace gpuslice::realgpu
