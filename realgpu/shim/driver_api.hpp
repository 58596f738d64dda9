// The driver's own declarations, under the names it exports. With
// __CUDA_API_VERSION_INTERNAL, cuda.h declares every versioned and
// per-thread-stream symbol (cuMemAlloc_v2, cuLaunchKernel_ptsz, ...) as
// itself instead of mapping the plain names onto the newest version, which
// is what an interposer must define.
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "gpuslice/realgpu/nvml_abi.h"

namespace gpuslice::shim {

// Pointers to the real driver's functions, one per line of hook_table.def,
// each with the exact type of the declaration above.
struct RealDriver {
#define CUDA_HOOK(name) decltype(&::name) name = nullptr;
#define CUDA_REAL(name) decltype(&::name) name = nullptr;
#define NVML_HOOK(name) decltype(&::name) name = nullptr;
#define NVML_REAL(name) decltype(&::name) name = nullptr;
#include "hook_table.def"
#undef CUDA_HOOK
#undef CUDA_REAL
#undef NVML_HOOK
#undef NVML_REAL
};

// One entry per hooked symbol: its name, the shim's definition, and (once
// the driver is open) the driver's definition.
struct HookEntry {
  const char* name;
  void* hook;
  void* real;
};

}  // namespace gpuslice::shim

#define GPUSLICE_EXPORT extern "C" __attribute__((visibility("default")))
