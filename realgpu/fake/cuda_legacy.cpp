// The 32-bit-era entry points a modern libcuda still exports under the
// plain names (dlsym(handle, "cuMemAlloc") finds them): 32-bit sizes and
// addresses, the same bookkeeping as their _v2 successors.
#include <mutex>

#include "cuda_exports.hpp"
#include "driver.hpp"

using gpuslice::fake::Driver;
using gpuslice::fake::driver;

namespace {

// An allocation made by a _v2 entry point, re-keyed below 4 GiB where a
// 32-bit pointer can name it.
CUresult to_legacy(CUresult rc, CUdeviceptr address, CUdeviceptr_v1* dptr) {
  if (rc != CUDA_SUCCESS) return rc;
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  auto node = d.allocations.extract(address);
  const std::uint32_t legacy = d.next_legacy_address;
  d.next_legacy_address += 0x1000;
  node.key() = legacy;
  d.allocations.insert(std::move(node));
  *dptr = legacy;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" CUresult cuMemAlloc(CUdeviceptr_v1* dptr, unsigned int bytesize) {
  if (dptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUdeviceptr address = 0;
  const CUresult rc = cuMemAlloc_v2(&address, bytesize);  // before reading `address`
  return to_legacy(rc, address, dptr);
}

extern "C" CUresult cuMemAllocPitch(CUdeviceptr_v1* dptr, unsigned int* pPitch, unsigned int WidthInBytes,
                                    unsigned int Height, unsigned int ElementSizeBytes) {
  if (dptr == nullptr || pPitch == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUdeviceptr address = 0;
  size_t pitch = 0;
  const CUresult rc = cuMemAllocPitch_v2(&address, &pitch, WidthInBytes, Height, ElementSizeBytes);
  if (rc == CUDA_SUCCESS) *pPitch = static_cast<unsigned>(pitch);
  return to_legacy(rc, address, dptr);
}

extern "C" CUresult cuArrayCreate(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR_v1* desc) {
  if (desc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUDA_ARRAY_DESCRIPTOR wide{desc->Width, desc->Height, desc->Format, desc->NumChannels};
  return cuArrayCreate_v2(pHandle, &wide);
}

extern "C" CUresult cuMemFree(CUdeviceptr_v1 dptr) { return cuMemFree_v2(dptr); }

extern "C" CUresult cuMemGetInfo(unsigned int* free, unsigned int* total) {
  size_t f = 0, t = 0;
  if (free == nullptr || total == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUresult rc = cuMemGetInfo_v2(&f, &t);
  if (rc != CUDA_SUCCESS) return rc;
  *free = static_cast<unsigned>(std::min<size_t>(f, UINT32_MAX));
  *total = static_cast<unsigned>(std::min<size_t>(t, UINT32_MAX));
  return rc;
}

extern "C" CUresult cuDeviceTotalMem(unsigned int* bytes, CUdevice dev) {
  size_t b = 0;
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUresult rc = cuDeviceTotalMem_v2(&b, dev);
  if (rc == CUDA_SUCCESS) *bytes = static_cast<unsigned>(std::min<size_t>(b, UINT32_MAX));
  return rc;
}
