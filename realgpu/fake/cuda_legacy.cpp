// The 32-bit-era entry points a modern libcuda still exports under the
// plain names (dlsym(handle, "cuMemAlloc") finds them): 32-bit sizes and
// addresses, the same bookkeeping as their _v2 successors.
#include "cuda_exports.hpp"
#include "driver.hpp"

using gpuslice::fake::Context;
using gpuslice::fake::Driver;
using gpuslice::fake::driver;

extern "C" CUresult cuMemAlloc(CUdeviceptr_v1* dptr, unsigned int bytesize) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  Context* context = nullptr;
  if (const CUresult rc = d.current_context(context); rc != CUDA_SUCCESS) return rc;
  if (dptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUdeviceptr address = 0;
  if (const CUresult rc = d.allocate(context, context->device, bytesize, &address); rc != CUDA_SUCCESS)
    return rc;
  // Re-keyed below 4 GiB, where a 32-bit pointer can name it.
  auto node = d.allocations.extract(address);
  const std::uint32_t legacy = d.next_legacy_address;
  d.next_legacy_address += 0x1000;
  node.key() = legacy;
  d.allocations.insert(std::move(node));
  *dptr = legacy;
  return CUDA_SUCCESS;
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
