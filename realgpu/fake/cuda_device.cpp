// cuInit, the driver version and device queries.
#include <algorithm>
#include <cstring>

#include "cuda_exports.hpp"
#include "driver.hpp"

using gpuslice::fake::Driver;
using gpuslice::fake::driver;

namespace {

constexpr int kDriverVersion = 13000;

// Plausible Hopper values for attributes callers commonly size work by;
// every other valid attribute reads 0.
int attribute_value(CUdevice_attribute attribute, const gpuslice::fake::DeviceSpec& spec,
                    std::size_t physical) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      return static_cast<int>(spec.sm_count);
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      return 0;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
      return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
      return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
      return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
      return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
      return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
      return 65535;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      return 49152;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
      return 2048;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
      return 1;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
      return 1;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
      return static_cast<int>(physical) + 1;
    default:
      return 0;
  }
}

}  // namespace

extern "C" CUresult cuInit(unsigned int Flags) {
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  return d.initialise();
}

extern "C" CUresult cuDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = kDriverVersion;
  return CUDA_SUCCESS;
}

extern "C" CUresult cuDeviceGetCount(int* count) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = static_cast<int>(d.visible.size());
  return CUDA_SUCCESS;
}

extern "C" CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  std::size_t physical = 0;
  if (const CUresult rc = d.device(ordinal, physical); rc != CUDA_SUCCESS) return rc;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

extern "C" CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  std::size_t physical = 0;
  if (const CUresult rc = d.device(dev, physical); rc != CUDA_SUCCESS) return rc;
  if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  const std::string& full = d.fleet[physical].name;
  const std::size_t n = std::min(full.size(), static_cast<std::size_t>(len) - 1);
  std::memcpy(name, full.data(), n);
  name[n] = '\0';
  return CUDA_SUCCESS;
}

extern "C" CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  std::size_t physical = 0;
  if (const CUresult rc = d.device(dev, physical); rc != CUDA_SUCCESS) return rc;
  if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const gpuslice::fake::Uuid bytes = gpuslice::fake::device_uuid(physical, d.fleet[physical].name);
  static_assert(sizeof uuid->bytes == sizeof bytes);
  std::memcpy(uuid->bytes, bytes.data(), bytes.size());
  return CUDA_SUCCESS;
}

// Without MIG the two versions report the same identity.
extern "C" CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) { return cuDeviceGetUuid_v2(uuid, dev); }

extern "C" CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  std::size_t physical = 0;
  if (const CUresult rc = d.device(dev, physical); rc != CUDA_SUCCESS) return rc;
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *bytes = d.fleet[physical].memory_bytes();
  return CUDA_SUCCESS;
}

extern "C" CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  std::size_t physical = 0;
  if (const CUresult rc = d.device(dev, physical); rc != CUDA_SUCCESS) return rc;
  if (pi == nullptr || attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  *pi = attribute_value(attrib, d.fleet[physical], physical);
  return CUDA_SUCCESS;
}
