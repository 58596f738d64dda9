// The probe's handle on the CUDA driver and NVML: opened with dlopen and
// resolved at run time (through dlsym, or through cuGetProcAddress as the
// CUDA runtime and PyTorch do), so the same binary runs on the real driver,
// on the fake one, and under the shim.
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <string>

#include "gpuslice/realgpu/nvml_abi.h"

namespace gpuslice::probe {

struct Driver {
  decltype(&::cuInit) cuInit = nullptr;
  decltype(&::cuDeviceGet) cuDeviceGet = nullptr;
  decltype(&::cuDeviceGetCount) cuDeviceGetCount = nullptr;
  decltype(&::cuDeviceGetName) cuDeviceGetName = nullptr;
  decltype(&::cuDeviceGetUuid_v2) cuDeviceGetUuid_v2 = nullptr;
  decltype(&::cuDeviceTotalMem_v2) cuDeviceTotalMem_v2 = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) cuDevicePrimaryCtxRetain = nullptr;
  decltype(&::cuCtxSetCurrent) cuCtxSetCurrent = nullptr;
  decltype(&::cuCtxSynchronize) cuCtxSynchronize = nullptr;
  decltype(&::cuMemGetInfo_v2) cuMemGetInfo_v2 = nullptr;
  decltype(&::cuMemAlloc_v2) cuMemAlloc_v2 = nullptr;
  decltype(&::cuMemAllocPitch_v2) cuMemAllocPitch_v2 = nullptr;
  decltype(&::cuMemAllocManaged) cuMemAllocManaged = nullptr;
  decltype(&::cuMemAllocAsync) cuMemAllocAsync = nullptr;
  decltype(&::cuMemAllocFromPoolAsync) cuMemAllocFromPoolAsync = nullptr;
  decltype(&::cuDeviceGetDefaultMemPool) cuDeviceGetDefaultMemPool = nullptr;
  decltype(&::cuMemFree_v2) cuMemFree_v2 = nullptr;
  decltype(&::cuMemFreeAsync) cuMemFreeAsync = nullptr;
  decltype(&::cuMemCreate) cuMemCreate = nullptr;
  decltype(&::cuMemRelease) cuMemRelease = nullptr;
  decltype(&::cuArrayCreate_v2) cuArrayCreate_v2 = nullptr;
  decltype(&::cuArrayDestroy) cuArrayDestroy = nullptr;
  decltype(&::cuStreamSynchronize) cuStreamSynchronize = nullptr;
  decltype(&::cuStreamCreate) cuStreamCreate = nullptr;
  decltype(&::cuEventCreate) cuEventCreate = nullptr;
  decltype(&::cuEventRecord) cuEventRecord = nullptr;
  decltype(&::cuEventSynchronize) cuEventSynchronize = nullptr;
  decltype(&::cuEventDestroy_v2) cuEventDestroy_v2 = nullptr;
  decltype(&::cuModuleLoadData) cuModuleLoadData = nullptr;
  decltype(&::cuModuleGetFunction) cuModuleGetFunction = nullptr;
  decltype(&::cuLaunchKernel) cuLaunchKernel = nullptr;
  decltype(&::cuGetErrorName) cuGetErrorName = nullptr;

  decltype(&::nvmlInit_v2) nvmlInit_v2 = nullptr;
  decltype(&::nvmlDeviceGetHandleByIndex_v2) nvmlDeviceGetHandleByIndex_v2 = nullptr;
  decltype(&::nvmlDeviceGetCount_v2) nvmlDeviceGetCount_v2 = nullptr;
  decltype(&::nvmlDeviceGetMemoryInfo) nvmlDeviceGetMemoryInfo = nullptr;
  decltype(&::nvmlDeviceGetMemoryInfo_v2) nvmlDeviceGetMemoryInfo_v2 = nullptr;
  decltype(&::nvmlDeviceGetName) nvmlDeviceGetName = nullptr;
  decltype(&::nvmlDeviceGetUUID) nvmlDeviceGetUUID = nullptr;
  decltype(&::nvmlDeviceGetHandleByUUID) nvmlDeviceGetHandleByUUID = nullptr;

  bool has_nvml = false;
  std::string resolved_by;  // "dlsym" or "cuGetProcAddress"
  std::string error_name(CUresult rc) const;
};

// Opens the driver; throws std::runtime_error saying what is missing.
// With `per_thread_stream`, lookups ask for the per-thread default stream
// variants (_ptsz/_ptds), as code built with --default-stream per-thread does.
Driver open_driver(bool through_proc_address, bool per_thread_stream = false);

}  // namespace gpuslice::probe
