// The one list of what libcuda.so.1 (fake) exports. From it come both the
// export attributes (below: each listed function is redeclared visible, the
// rest of the library is hidden) and cuGetProcAddress's table
// (proc_address.cpp). A listed function that is not defined fails the link
// (-Wl,--no-undefined); a defined one that is not listed stays hidden.
//
// X(exported symbol, base name for cuGetProcAddress, CUDA version that
// introduced this variant, stream flavour):
//   any        - no default-stream semantics;
//   legacy     - the legacy-default-stream variant;
//   per_thread - the _ptsz/_ptds variant (per-thread default stream).
// The versions follow the real driver's history closely enough for
// cuGetProcAddress to pick the same variant the real one would.
#pragma once

#include "cuda_api.hpp"
#include "export.hpp"

#define GPUSLICE_FAKE_CUDA_EXPORTS(X)                                            \
  X(cuInit, cuInit, 2000, any)                                                   \
  X(cuDriverGetVersion, cuDriverGetVersion, 2020, any)                           \
  X(cuGetErrorString, cuGetErrorString, 6000, any)                               \
  X(cuGetErrorName, cuGetErrorName, 6000, any)                                   \
  X(cuGetProcAddress, cuGetProcAddress, 11030, any)                              \
  X(cuGetProcAddress_v2, cuGetProcAddress, 12000, any)                           \
  X(cuDeviceGetCount, cuDeviceGetCount, 2000, any)                               \
  X(cuDeviceGet, cuDeviceGet, 2000, any)                                         \
  X(cuDeviceGetName, cuDeviceGetName, 2000, any)                                 \
  X(cuDeviceGetUuid, cuDeviceGetUuid, 9020, any)                                 \
  X(cuDeviceGetUuid_v2, cuDeviceGetUuid, 11040, any)                             \
  X(cuDeviceTotalMem_v2, cuDeviceTotalMem, 3020, any)                            \
  X(cuDeviceGetAttribute, cuDeviceGetAttribute, 2000, any)                       \
  X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000, any)               \
  X(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease, 11000, any)         \
  X(cuCtxCreate_v2, cuCtxCreate, 3020, any)                                      \
  X(cuCtxCreate_v4, cuCtxCreate, 12050, any)                                     \
  X(cuCtxDestroy_v2, cuCtxDestroy, 4000, any)                                    \
  X(cuCtxSetCurrent, cuCtxSetCurrent, 4000, any)                                 \
  X(cuCtxGetCurrent, cuCtxGetCurrent, 4000, any)                                 \
  X(cuCtxGetDevice, cuCtxGetDevice, 2000, any)                                   \
  X(cuCtxPushCurrent_v2, cuCtxPushCurrent, 4000, any)                            \
  X(cuCtxPopCurrent_v2, cuCtxPopCurrent, 4000, any)                              \
  X(cuCtxSynchronize, cuCtxSynchronize, 2000, any)                               \
  X(cuMemGetInfo, cuMemGetInfo, 2000, any)                                       \
  X(cuMemGetInfo_v2, cuMemGetInfo, 3020, any)                                    \
  X(cuMemAlloc, cuMemAlloc, 2000, any)                                           \
  X(cuMemFree, cuMemFree, 2000, any)                                             \
  X(cuMemAllocPitch, cuMemAllocPitch, 2000, any)                                 \
  X(cuArrayCreate, cuArrayCreate, 2000, any)                                     \
  X(cuDeviceTotalMem, cuDeviceTotalMem, 2000, any)                               \
  X(cuMemAllocHost_v2, cuMemAllocHost, 3020, any)                                \
  X(cuMemHostAlloc, cuMemHostAlloc, 2020, any)                                   \
  X(cuMemFreeHost, cuMemFreeHost, 2000, any)                                     \
  X(cuMemHostRegister_v2, cuMemHostRegister, 6050, any)                          \
  X(cuMemHostUnregister, cuMemHostUnregister, 4000, any)                         \
  X(cuMemGetAllocationGranularity, cuMemGetAllocationGranularity, 10020, any)    \
  X(cuMemAddressReserve, cuMemAddressReserve, 10020, any)                        \
  X(cuMemAddressFree, cuMemAddressFree, 10020, any)                              \
  X(cuMemMap, cuMemMap, 10020, any)                                              \
  X(cuMemUnmap, cuMemUnmap, 10020, any)                                          \
  X(cuMemSetAccess, cuMemSetAccess, 10020, any)                                  \
  X(cuDeviceGetMemPool, cuDeviceGetMemPool, 11020, any)                          \
  X(cuMipmappedArrayCreate, cuMipmappedArrayCreate, 5000, any)                   \
  X(cuMipmappedArrayDestroy, cuMipmappedArrayDestroy, 5000, any)                 \
  X(cuLibraryLoadFromFile, cuLibraryLoadFromFile, 12000, any)                    \
  X(cuModuleLoadFatBinary, cuModuleLoadFatBinary, 2000, any)                     \
  X(cuMemAlloc_v2, cuMemAlloc, 3020, any)                                        \
  X(cuMemAllocPitch_v2, cuMemAllocPitch, 3020, any)                              \
  X(cuMemAllocManaged, cuMemAllocManaged, 6000, any)                             \
  X(cuMemFree_v2, cuMemFree, 3020, any)                                          \
  X(cuMemAllocAsync, cuMemAllocAsync, 11020, legacy)                             \
  X(cuMemAllocAsync_ptsz, cuMemAllocAsync, 11020, per_thread)                    \
  X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, 11020, legacy)             \
  X(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync, 11020, per_thread)    \
  X(cuMemFreeAsync, cuMemFreeAsync, 11020, legacy)                               \
  X(cuMemFreeAsync_ptsz, cuMemFreeAsync, 11020, per_thread)                      \
  X(cuMemPoolCreate, cuMemPoolCreate, 11020, any)                                \
  X(cuMemPoolDestroy, cuMemPoolDestroy, 11020, any)                              \
  X(cuMemPoolSetAttribute, cuMemPoolSetAttribute, 11020, any)                    \
  X(cuMemPoolGetAttribute, cuMemPoolGetAttribute, 11020, any)                    \
  X(cuMemPoolTrimTo, cuMemPoolTrimTo, 11020, any)                                \
  X(cuDeviceGetDefaultMemPool, cuDeviceGetDefaultMemPool, 11020, any)            \
  X(cuMemCreate, cuMemCreate, 10020, any)                                        \
  X(cuMemRelease, cuMemRelease, 10020, any)                                      \
  X(cuArrayCreate_v2, cuArrayCreate, 3020, any)                                  \
  X(cuArray3DCreate_v2, cuArray3DCreate, 3020, any)                              \
  X(cuArrayDestroy, cuArrayDestroy, 2000, any)                                   \
  X(cuMemcpyHtoD_v2, cuMemcpyHtoD, 3020, legacy)                                 \
  X(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD, 7000, per_thread)                        \
  X(cuMemcpyDtoH_v2, cuMemcpyDtoH, 3020, legacy)                                 \
  X(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH, 7000, per_thread)                        \
  X(cuMemsetD8_v2, cuMemsetD8, 3020, legacy)                                     \
  X(cuMemsetD8_v2_ptds, cuMemsetD8, 7000, per_thread)                            \
  X(cuModuleLoad, cuModuleLoad, 2000, any)                                       \
  X(cuModuleLoadData, cuModuleLoadData, 2000, any)                               \
  X(cuModuleLoadDataEx, cuModuleLoadDataEx, 2010, any)                           \
  X(cuModuleUnload, cuModuleUnload, 2000, any)                                   \
  X(cuModuleGetFunction, cuModuleGetFunction, 2000, any)                         \
  X(cuLibraryLoadData, cuLibraryLoadData, 12000, any)                            \
  X(cuLibraryUnload, cuLibraryUnload, 12000, any)                                \
  X(cuLibraryGetKernel, cuLibraryGetKernel, 12000, any)                          \
  X(cuStreamCreate, cuStreamCreate, 2000, any)                                   \
  X(cuStreamDestroy_v2, cuStreamDestroy, 4000, any)                              \
  X(cuStreamSynchronize, cuStreamSynchronize, 2000, legacy)                      \
  X(cuStreamSynchronize_ptsz, cuStreamSynchronize, 7000, per_thread)             \
  X(cuStreamQuery, cuStreamQuery, 2000, legacy)                                  \
  X(cuStreamQuery_ptsz, cuStreamQuery, 7000, per_thread)                         \
  X(cuEventCreate, cuEventCreate, 2000, any)                                     \
  X(cuEventDestroy_v2, cuEventDestroy, 4000, any)                                \
  X(cuEventRecord, cuEventRecord, 2000, legacy)                                  \
  X(cuEventRecord_ptsz, cuEventRecord, 7000, per_thread)                         \
  X(cuEventSynchronize, cuEventSynchronize, 2000, any)                           \
  X(cuEventQuery, cuEventQuery, 2000, any)                                       \
  X(cuLaunchKernel, cuLaunchKernel, 4000, legacy)                                \
  X(cuLaunchKernel_ptsz, cuLaunchKernel, 7000, per_thread)                       \
  X(cuLaunchKernelEx, cuLaunchKernelEx, 11060, legacy)                           \
  X(cuLaunchKernelEx_ptsz, cuLaunchKernelEx, 11060, per_thread)                  \
  X(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel, 9000, legacy)          \
  X(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel, 9000, per_thread) \
  X(cuGraphCreate, cuGraphCreate, 10000, any)                                    \
  X(cuGraphAddKernelNode_v2, cuGraphAddKernelNode, 12000, any)                   \
  X(cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags, 11040, any)        \
  /* For CUDA >= 12 the real driver answers "cuGraphInstantiate" with this. */   \
  X(cuGraphInstantiateWithFlags, cuGraphInstantiate, 12000, any)                 \
  X(cuGraphLaunch, cuGraphLaunch, 10000, legacy)                                 \
  X(cuGraphLaunch_ptsz, cuGraphLaunch, 10000, per_thread)                        \
  X(cuGraphExecDestroy, cuGraphExecDestroy, 10000, any)                          \
  X(cuGraphDestroy, cuGraphDestroy, 10000, any)

// Redeclaring with decltype keeps the exact signature from cuda.h (a typo
// in a definition's signature is then a compile error, not an ABI bug).
#define GPUSLICE_FAKE_DECLARE_EXPORT(fn, base, since, stream) extern "C" GPUSLICE_FAKE_EXPORT decltype(fn) fn;
GPUSLICE_FAKE_CUDA_EXPORTS(GPUSLICE_FAKE_DECLARE_EXPORT)
#undef GPUSLICE_FAKE_DECLARE_EXPORT
