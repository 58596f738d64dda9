#include "driver.hpp"

#include <dlfcn.h>

#include <stdexcept>

namespace gpuslice::probe {

std::string Driver::error_name(CUresult rc) const {
  const char* name = nullptr;
  if (cuGetErrorName && cuGetErrorName(rc, &name) == CUDA_SUCCESS && name) return name;
  return "CUresult " + std::to_string(static_cast<int>(rc));
}

Driver open_driver(bool through_proc_address, bool per_thread_stream) {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (!cuda) throw std::runtime_error(std::string("cannot open libcuda.so.1: ") + dlerror());
  Driver d;
  auto* get_proc = reinterpret_cast<decltype(&::cuGetProcAddress_v2)>(dlsym(cuda, "cuGetProcAddress_v2"));
  auto* init = reinterpret_cast<decltype(&::cuInit)>(dlsym(cuda, "cuInit"));
  if (!init) throw std::runtime_error("libcuda.so.1 has no cuInit");
  if (through_proc_address && !get_proc) throw std::runtime_error("libcuda.so.1 has no cuGetProcAddress_v2");
  // Like cudart: the plain name and the CUDA version pick the entry point.
  auto resolve = [&](const char* exported, const char* plain, auto& slot) {
    void* f = nullptr;
    if (through_proc_address) {
      CUdriverProcAddressQueryResult status{};
      const cuuint64_t flags =
          per_thread_stream ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_DEFAULT;
      if (get_proc(plain, &f, 13000, flags, &status) != CUDA_SUCCESS) f = nullptr;
    } else {
      f = dlsym(cuda, exported);
    }
    if (!f) throw std::runtime_error(std::string("driver entry point missing: ") + exported);
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(f);
  };
#define RESOLVE(exported, plain) resolve(#exported, #plain, d.exported)
  RESOLVE(cuInit, cuInit);
  RESOLVE(cuDeviceGet, cuDeviceGet);
  RESOLVE(cuDeviceGetCount, cuDeviceGetCount);
  RESOLVE(cuDeviceGetName, cuDeviceGetName);
  RESOLVE(cuDeviceGetUuid_v2, cuDeviceGetUuid);
  RESOLVE(cuDeviceTotalMem_v2, cuDeviceTotalMem);
  RESOLVE(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain);
  RESOLVE(cuCtxSetCurrent, cuCtxSetCurrent);
  RESOLVE(cuCtxSynchronize, cuCtxSynchronize);
  RESOLVE(cuMemGetInfo_v2, cuMemGetInfo);
  RESOLVE(cuMemAlloc_v2, cuMemAlloc);
  RESOLVE(cuMemAllocPitch_v2, cuMemAllocPitch);
  RESOLVE(cuMemAllocManaged, cuMemAllocManaged);
  RESOLVE(cuMemAllocAsync, cuMemAllocAsync);
  RESOLVE(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync);
  RESOLVE(cuDeviceGetDefaultMemPool, cuDeviceGetDefaultMemPool);
  RESOLVE(cuMemFree_v2, cuMemFree);
  RESOLVE(cuMemFreeAsync, cuMemFreeAsync);
  RESOLVE(cuMemCreate, cuMemCreate);
  RESOLVE(cuMemRelease, cuMemRelease);
  RESOLVE(cuArrayCreate_v2, cuArrayCreate);
  RESOLVE(cuArrayDestroy, cuArrayDestroy);
  RESOLVE(cuStreamSynchronize, cuStreamSynchronize);
  RESOLVE(cuStreamCreate, cuStreamCreate);
  RESOLVE(cuEventCreate, cuEventCreate);
  RESOLVE(cuEventRecord, cuEventRecord);
  RESOLVE(cuEventSynchronize, cuEventSynchronize);
  RESOLVE(cuEventDestroy_v2, cuEventDestroy);
  RESOLVE(cuModuleLoadData, cuModuleLoadData);
  RESOLVE(cuModuleGetFunction, cuModuleGetFunction);
  RESOLVE(cuLaunchKernel, cuLaunchKernel);
  RESOLVE(cuGetErrorName, cuGetErrorName);
#undef RESOLVE
  d.resolved_by = !through_proc_address ? "dlsym"
                  : per_thread_stream   ? "cuGetProcAddress(per-thread)"
                                        : "cuGetProcAddress";

  if (void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW)) {
    auto get = [&](const char* name, auto& slot) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(nvml, name));
      return slot != nullptr;
    };
    d.has_nvml =
        get("nvmlInit_v2", d.nvmlInit_v2) &&
        get("nvmlDeviceGetHandleByIndex_v2", d.nvmlDeviceGetHandleByIndex_v2) &&
        get("nvmlDeviceGetCount_v2", d.nvmlDeviceGetCount_v2) &&
        get("nvmlDeviceGetMemoryInfo", d.nvmlDeviceGetMemoryInfo) &&
        get("nvmlDeviceGetMemoryInfo_v2", d.nvmlDeviceGetMemoryInfo_v2) &&
        get("nvmlDeviceGetName", d.nvmlDeviceGetName) && get("nvmlDeviceGetUUID", d.nvmlDeviceGetUUID) &&
        get("nvmlDeviceGetHandleByUUID", d.nvmlDeviceGetHandleByUUID) && d.nvmlInit_v2() == NVML_SUCCESS;
  }
  return d;
}

}  // namespace gpuslice::probe
