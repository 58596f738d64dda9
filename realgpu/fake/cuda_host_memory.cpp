// Page-locked host memory: real host memory (the application writes to
// it), never charged to a card.
#include <cstdlib>
#include <cstring>

#include "cuda_exports.hpp"
#include "driver.hpp"

using gpuslice::fake::Driver;
using gpuslice::fake::driver;

namespace {

CUresult host_alloc(void** pp, std::uint64_t bytes) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  if (pp == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  void* p = std::malloc(bytes);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  d.host_allocations[p] = bytes;
  *pp = p;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) { return host_alloc(pp, bytesize); }

extern "C" CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int flags) {
  constexpr unsigned kKnown =
      CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
  if ((flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
  return host_alloc(pp, bytesize);
}

extern "C" CUresult cuMemFreeHost(void* p) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  const auto it = d.host_allocations.find(p);
  if (it == d.host_allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  std::free(p);
  d.host_allocations.erase(it);
  return CUDA_SUCCESS;
}

extern "C" CUresult cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int /*flags*/) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  if (p == nullptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  if (d.host_registrations.count(p)) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  d.host_registrations[p] = bytesize;
  return CUDA_SUCCESS;
}

extern "C" CUresult cuMemHostUnregister(void* p) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  if (d.host_registrations.erase(p) == 0) return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  return CUDA_SUCCESS;
}
