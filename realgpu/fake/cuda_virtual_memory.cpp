// The virtual memory API beyond cuMemCreate/cuMemRelease: address ranges,
// mappings and access. A physical handle released while mapped keeps its
// memory until its last mapping is unmapped, as on the real driver.
#include "cuda_exports.hpp"
#include "driver.hpp"
#include "ledger.hpp"

using gpuslice::fake::Driver;
using gpuslice::fake::driver;

extern "C" CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                                  CUmemAllocationGranularity_flags option) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  if (granularity == nullptr || prop == nullptr || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
      (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
    return CUDA_ERROR_INVALID_VALUE;
  std::size_t physical = 0;
  if (const CUresult rc = d.device(prop->location.id, physical); rc != CUDA_SUCCESS) return rc;
  *granularity = gpuslice::fake::kGranularity;
  return CUDA_SUCCESS;
}

extern "C" CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t /*alignment*/,
                                        CUdeviceptr /*addr*/, unsigned long long flags) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  if (ptr == nullptr || size == 0 || flags != 0 || size % gpuslice::fake::kGranularity != 0)
    return CUDA_ERROR_INVALID_VALUE;
  gpuslice::fake::SharedState::Guard guard = d.state->lock();
  if (!guard) return CUDA_ERROR_UNKNOWN;
  *ptr = gpuslice::fake::ledger::reserve_address(*guard, size);
  d.reserved_ranges[*ptr] = size;
  return CUDA_SUCCESS;
}

extern "C" CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  const auto it = d.reserved_ranges.find(ptr);
  if (it == d.reserved_ranges.end() || it->second != size) return CUDA_ERROR_INVALID_VALUE;
  d.reserved_ranges.erase(it);
  return CUDA_SUCCESS;
}

extern "C" CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                             unsigned long long flags) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  const auto h = d.handles.find(handle);
  if (h == d.handles.end() || d.released_handles.count(handle) || flags != 0 || offset != 0 ||
      size != h->second.bytes || d.mappings.count(ptr))
    return CUDA_ERROR_INVALID_VALUE;
  // The range must lie inside one reserved range.
  auto r = d.reserved_ranges.upper_bound(ptr);
  if (r == d.reserved_ranges.begin()) return CUDA_ERROR_INVALID_VALUE;
  --r;
  if (ptr - r->first > r->second || size > r->second - (ptr - r->first)) return CUDA_ERROR_INVALID_VALUE;
  d.mappings[ptr] = handle;
  ++d.mapped_count[handle];
  return CUDA_SUCCESS;
}

extern "C" CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  auto it = d.mappings.lower_bound(ptr);
  if (it == d.mappings.end() || it->first != ptr) return CUDA_ERROR_INVALID_VALUE;
  while (it != d.mappings.end() && it->first - ptr < size) {
    const CUmemGenericAllocationHandle handle = it->second;
    if (--d.mapped_count[handle] == 0 && d.released_handles.count(handle)) {
      const auto h = d.handles.find(handle);
      if (h != d.handles.end()) {
        d.uncharge(h->second.device, h->second.bytes);
        d.handles.erase(h);
      }
      d.released_handles.erase(handle);
      d.mapped_count.erase(handle);
    }
    it = d.mappings.erase(it);
  }
  return CUDA_SUCCESS;
}

extern "C" CUresult cuMemSetAccess(CUdeviceptr ptr, size_t /*size*/, const CUmemAccessDesc* desc,
                                   size_t count) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  if (desc == nullptr || count == 0 || !d.mappings.count(ptr)) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}
