// The one list of what libnvidia-ml.so.1 (fake) exports: every function of
// gpuslice/realgpu/nvml_abi.h. Each is redeclared visible here (the rest of
// the library is hidden); a listed function left undefined fails the link.
#pragma once

#include "export.hpp"
#include "gpuslice/realgpu/nvml_abi.h"

#define GPUSLICE_FAKE_NVML_EXPORTS(X)        \
  X(nvmlInit_v2)                             \
  X(nvmlInit)                                \
  X(nvmlShutdown)                            \
  X(nvmlErrorString)                         \
  X(nvmlSystemGetDriverVersion)              \
  X(nvmlDeviceGetCount_v2)                   \
  X(nvmlDeviceGetCount)                      \
  X(nvmlDeviceGetHandleByIndex_v2)           \
  X(nvmlDeviceGetHandleByIndex)              \
  X(nvmlDeviceGetHandleByUUID)               \
  X(nvmlDeviceGetIndex)                      \
  X(nvmlDeviceGetName)                       \
  X(nvmlDeviceGetUUID)                       \
  X(nvmlDeviceGetMemoryInfo)                 \
  X(nvmlDeviceGetMemoryInfo_v2)              \
  X(nvmlDeviceGetUtilizationRates)           \
  X(nvmlDeviceGetProcessUtilization)         \
  X(nvmlDeviceGetComputeRunningProcesses_v3) \
  X(nvmlDeviceGetNumaNodeId)

#define GPUSLICE_FAKE_DECLARE_NVML_EXPORT(fn) extern "C" GPUSLICE_FAKE_EXPORT decltype(fn) fn;
GPUSLICE_FAKE_NVML_EXPORTS(GPUSLICE_FAKE_DECLARE_NVML_EXPORT)
#undef GPUSLICE_FAKE_DECLARE_NVML_EXPORT
