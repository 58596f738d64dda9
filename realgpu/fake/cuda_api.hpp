// cuda.h as a driver sees it: with __CUDA_API_VERSION_INTERNAL the header
// declares the real exported names (cuMemAlloc_v2, cuLaunchKernel_ptsz,
// legacy cuLaunchKernel, ...) instead of remapping the plain names by macro.
#pragma once

#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL 1
#endif
#include <cuda.h>

// Exported names cuda.h declares only under their plain names.
extern "C" {
CUresult CUDAAPI cuMemAllocHost_v2(void** pp, size_t bytesize);
CUresult CUDAAPI cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags);
}
