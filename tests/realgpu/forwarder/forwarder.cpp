// A forwarding driver library in the shape of WSL2's libcuda.so.1: every
// entry point is a jump through a pointer that the library fills in when it
// is loaded, with dlsym(target, same name) on the library that really
// implements it (here the fake driver, named by GPUSLICE_FORWARD_TARGET).
// A shim whose dlsym answers that lookup with its own hook makes the hook
// call itself through this library until the stack runs out.
//
// Built twice: as libcuda.so.1 (FORWARD_CUDA) and libnvidia-ml.so.1.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#if defined(__x86_64__)
#define THUNK(name)                                                                   \
  asm(".text\n.globl " #name "\n.type " #name ",@function\n" #name ":\n  jmp *" #name \
      "_slot(%rip)\n.size " #name ", .-" #name "\n");
#elif defined(__aarch64__)
#define THUNK(name)                                                                        \
  asm(".text\n.globl " #name "\n.type " #name ",%function\n" #name ":\n  adrp x16, " #name \
      "_slot\n  ldr x16, [x16, :lo12:" #name "_slot]\n  br x16\n.size " #name ", .-" #name "\n");
#else
#error "the forwarding library's thunks are written for x86-64 and AArch64"
#endif

#define SLOT(name) __attribute__((visibility("hidden"), used)) void* name##_slot = nullptr;

// One entry a line, as the libraries list them (clang-format would reflow the lists).
// clang-format off
#if defined(FORWARD_CUDA)
#define TARGET_VARIABLE "GPUSLICE_FORWARD_TARGET_CUDA"
#define ENTRIES(X)                                                                                           \
  X(cuInit)                                                                                                  \
  X(cuDriverGetVersion)                                                                                      \
  X(cuGetErrorString)                                                                                        \
  X(cuGetErrorName)                                                                                          \
  X(cuGetProcAddress) X(cuGetProcAddress_v2) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)           \
      X(cuDeviceGetUuid) X(cuDeviceGetUuid_v2) X(cuDeviceTotalMem_v2) X(cuDeviceGetAttribute) X(             \
          cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease_v2) X(cuCtxCreate_v2) X(cuCtxDestroy_v2)     \
          X(cuCtxSetCurrent) X(cuCtxGetCurrent) X(cuCtxGetDevice) X(cuCtxSynchronize) X(cuMemGetInfo_v2)     \
              X(cuMemAlloc_v2) X(cuMemAllocPitch_v2) X(cuMemAllocManaged) X(cuMemFree_v2) X(cuMemAllocAsync) \
                  X(cuMemAllocFromPoolAsync) X(cuMemFreeAsync) X(cuDeviceGetDefaultMemPool) X(cuMemCreate)   \
                      X(cuMemRelease) X(cuArrayCreate_v2) X(cuArrayDestroy) X(cuMemGetAllocationGranularity) \
                          X(cuStreamCreate) X(cuStreamSynchronize) X(cuEventCreate) X(cuEventRecord)         \
                              X(cuEventSynchronize) X(cuEventDestroy_v2) X(cuModuleLoadData)                 \
                                  X(cuModuleGetFunction) X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree)        \
                                      X(cuMemGetInfo) X(cuDeviceTotalMem) X(cuArray3DCreate_v2)              \
                                          X(cuMipmappedArrayCreate) X(cuMipmappedArrayDestroy)               \
                                              X(cuMemPoolCreate) X(cuMemPoolDestroy) X(cuDeviceGetMemPool)   \
                                                  X(cuMemPoolSetAttribute) X(cuMemPoolTrimTo)                \
                                                      X(cuMemAddressReserve) X(cuMemAddressFree) X(cuMemMap) \
                                                          X(cuMemUnmap) X(cuMemSetAccess)
#else
#define TARGET_VARIABLE "GPUSLICE_FORWARD_TARGET_NVML"
#define ENTRIES(X)                                                                                  \
  X(nvmlInit_v2)                                                                                    \
  X(nvmlShutdown)                                                                                   \
  X(nvmlDeviceGetCount_v2)                                                                          \
  X(nvmlDeviceGetHandleByIndex_v2)                                                                  \
  X(nvmlDeviceGetHandleByUUID) X(nvmlDeviceGetName) X(nvmlDeviceGetUUID) X(nvmlDeviceGetMemoryInfo) \
      X(nvmlDeviceGetMemoryInfo_v2) X(nvmlDeviceGetProcessUtilization)                              \
          X(nvmlDeviceGetComputeRunningProcesses_v3)
#endif
// clang-format on

ENTRIES(THUNK)
extern "C" {
ENTRIES(SLOT)
}

namespace {

__attribute__((constructor)) void resolve_entries() {
  const char* path = std::getenv(TARGET_VARIABLE);
  void* target = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (target == nullptr) {
    std::fprintf(stderr, "forwarder: cannot open %s=%s\n", TARGET_VARIABLE, path ? path : "(unset)");
    std::abort();
  }
#define RESOLVE(name) name##_slot = dlsym(target, #name);
  ENTRIES(RESOLVE)
#undef RESOLVE
}

}  // namespace
