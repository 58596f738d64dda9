// Device memory: every allocation path charges the card in the shared
// state (CUDA_ERROR_OUT_OF_MEMORY past its free memory) and hands out a
// unique fake address that is never dereferenced. Copies and memsets do
// nothing but check their pointer.
#include "cuda_exports.hpp"
#include "driver.hpp"
#include "gpuslice/realgpu/array_format.hpp"
#include "ledger.hpp"

using gpuslice::fake::Allocation;
using gpuslice::fake::Context;
using gpuslice::fake::Driver;
using gpuslice::fake::driver;
using gpuslice::fake::Pool;
using gpuslice::fake::Stream;

namespace {

CUresult allocate_current(CUdeviceptr* dptr, std::uint64_t bytes) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  Context* context = nullptr;
  if (const CUresult rc = d.current_context(context); rc != CUDA_SUCCESS) return rc;
  return d.allocate(context, context->device, bytes, dptr);
}

CUresult free_allocation(CUdeviceptr dptr) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  if (dptr == 0) return CUDA_SUCCESS;
  const auto it = d.allocations.find(dptr);
  if (it == d.allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  d.uncharge(it->second.device, it->second.bytes);
  d.allocations.erase(it);
  return CUDA_SUCCESS;
}

// Stream-ordered allocation is modelled as immediate. It comes from a pool
// (the device's default pool unless one is named), which first reuses what
// it cached; a free hands the memory back to the pool, which keeps up to
// its release threshold charged on the card and releases the rest.
Pool* default_pool(Driver& d, int ordinal, std::size_t physical) {
  Pool*& pool = d.default_pools[static_cast<std::size_t>(ordinal)];
  if (pool == nullptr) pool = d.pools.add(std::make_unique<Pool>(Pool{ordinal, physical, true}));
  return pool;
}

void trim(Driver& d, Pool& pool, std::uint64_t keep) {
  if (pool.cached <= keep) return;
  d.uncharge(pool.device, pool.cached - keep);
  pool.cached = keep;
}

CUresult allocate_async(CUdeviceptr* dptr, std::uint64_t requested, CUmemoryPool handle, CUstream stream) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  Context* context = nullptr;
  Stream* object = nullptr;
  if (const CUresult rc = d.stream_context(stream, context, object); rc != CUDA_SUCCESS) return rc;
  Pool* pool = handle != nullptr ? d.pools.find(handle) : default_pool(d, context->ordinal, context->device);
  if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (dptr == nullptr || requested == 0) return CUDA_ERROR_INVALID_VALUE;
  const std::uint64_t bytes = gpuslice::fake::driver_rounded(requested);
  if (bytes == 0) return CUDA_ERROR_OUT_OF_MEMORY;
  const std::uint64_t reused = std::min(pool->cached, bytes);
  std::uint64_t address = 0;
  if (const CUresult rc = d.charge(pool->device, bytes - reused, address); rc != CUDA_SUCCESS) return rc;
  pool->cached -= reused;
  d.allocations[address] = Allocation{bytes, pool->device, context, pool};
  *dptr = address;
  return CUDA_SUCCESS;
}

CUresult free_async(CUdeviceptr dptr, CUstream stream) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  Context* context = nullptr;
  Stream* object = nullptr;
  if (const CUresult rc = d.stream_context(stream, context, object); rc != CUDA_SUCCESS) return rc;
  if (dptr == 0) return CUDA_SUCCESS;
  const auto it = d.allocations.find(dptr);
  if (it == d.allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  Pool* pool = it->second.pool;
  if (pool == nullptr) {
    d.uncharge(it->second.device, it->second.bytes);
  } else {
    pool->cached += it->second.bytes;
    trim(d, *pool, pool->release_threshold);
  }
  d.allocations.erase(it);
  return CUDA_SUCCESS;
}

CUresult check_range(CUdeviceptr address, size_t bytes) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  Context* context = nullptr;
  if (const CUresult rc = d.current_context(context); rc != CUDA_SUCCESS) return rc;
  return d.covers(address, bytes) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult create_array(CUarray* handle, std::uint64_t width, std::uint64_t height, std::uint64_t depth,
                      CUarray_format format, unsigned channels) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  Context* context = nullptr;
  if (const CUresult rc = d.current_context(context); rc != CUDA_SUCCESS) return rc;
  const std::uint64_t element = gpuslice::realgpu::array_element_bytes(format);
  if (handle == nullptr || width == 0 || element == 0 || (channels != 1 && channels != 2 && channels != 4))
    return CUDA_ERROR_INVALID_VALUE;
  std::uint64_t texels = 0, bytes = 0;
  if (__builtin_mul_overflow(width, std::max<std::uint64_t>(height, 1), &texels) ||
      __builtin_mul_overflow(texels, std::max<std::uint64_t>(depth, 1), &texels) ||
      __builtin_mul_overflow(texels, channels * element, &bytes) ||
      (bytes = gpuslice::fake::driver_rounded(bytes)) == 0)
    return CUDA_ERROR_OUT_OF_MEMORY;
  std::uint64_t address = 0;
  if (const CUresult rc = d.charge(context->device, bytes, address); rc != CUDA_SUCCESS) return rc;
  auto array = std::make_unique<gpuslice::fake::Array>();
  array->allocation = Allocation{bytes, context->device, context};
  *handle = reinterpret_cast<CUarray>(d.arrays.add(std::move(array)));
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  Context* context = nullptr;
  if (const CUresult rc = d.current_context(context); rc != CUDA_SUCCESS) return rc;
  if (free == nullptr || total == nullptr) return CUDA_ERROR_INVALID_VALUE;
  gpuslice::fake::SharedState::Guard guard = d.state->lock();
  if (!guard) return CUDA_ERROR_UNKNOWN;
  // Card-wide, like the hardware: the fake is what the shim virtualises.
  gpuslice::fake::ledger::reap_dead(*guard);
  const std::uint64_t capacity = guard->devices[context->device].total_bytes;
  const std::uint64_t used = std::min(capacity, gpuslice::fake::ledger::used_bytes(*guard, context->device));
  *total = capacity;
  *free = capacity - used;
  return CUDA_SUCCESS;
}

extern "C" CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  return allocate_current(dptr, bytesize);
}

extern "C" CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
                                       unsigned int ElementSizeBytes) {
  if (pPitch == nullptr || WidthInBytes == 0 || Height == 0 ||
      (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
    return CUDA_ERROR_INVALID_VALUE;
  // Rows are padded to 512 bytes, the real driver's texture pitch alignment.
  const std::uint64_t pitch = (WidthInBytes + 511) / 512 * 512;
  std::uint64_t bytes = 0;
  if (WidthInBytes > UINT64_MAX - 511 || __builtin_mul_overflow(pitch, Height, &bytes))
    return CUDA_ERROR_OUT_OF_MEMORY;
  const CUresult rc = allocate_current(dptr, bytes);
  if (rc == CUDA_SUCCESS) *pPitch = pitch;
  return rc;
}

// Managed memory is charged to the current device up front (a real GPU
// charges it on first touch; a fake kernel never touches anything).
extern "C" CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) return CUDA_ERROR_INVALID_VALUE;
  return allocate_current(dptr, bytesize);
}

extern "C" CUresult cuMemFree_v2(CUdeviceptr dptr) { return free_allocation(dptr); }

extern "C" CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  return allocate_async(dptr, bytesize, nullptr, hStream);
}
extern "C" CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  return allocate_async(dptr, bytesize, nullptr, hStream);
}
extern "C" CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                            CUstream hStream) {
  if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return allocate_async(dptr, bytesize, pool, hStream);
}
extern "C" CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                 CUstream hStream) {
  if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return allocate_async(dptr, bytesize, pool, hStream);
}
extern "C" CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) { return free_async(dptr, hStream); }
extern "C" CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) {
  return free_async(dptr, hStream);
}

extern "C" CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  if (pool == nullptr || poolProps == nullptr || poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return CUDA_ERROR_INVALID_VALUE;
  std::size_t physical = 0;
  if (d.device(poolProps->location.id, physical) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
  *pool = reinterpret_cast<CUmemoryPool>(
      d.pools.add(std::make_unique<Pool>(Pool{poolProps->location.id, physical, false})));
  return CUDA_SUCCESS;
}

extern "C" CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  Pool* found = d.pools.find(pool);
  if (found == nullptr || found->is_default) return CUDA_ERROR_INVALID_VALUE;
  trim(d, *found, 0);
  for (auto& [address, allocation] : d.allocations)
    if (allocation.pool == found) allocation.pool = nullptr;  // freed to the card from now on
  d.pools.erase(pool);
  return CUDA_SUCCESS;
}

extern "C" CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  std::size_t physical = 0;
  if (const CUresult rc = d.device(dev, physical); rc != CUDA_SUCCESS) return rc;
  if (pool_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pool_out = reinterpret_cast<CUmemoryPool>(default_pool(d, dev, physical));
  return CUDA_SUCCESS;
}

// Physical allocations of the virtual memory API: charged on create, held
// until release (they belong to the process, not to a context).
extern "C" CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                                const CUmemAllocationProp* prop, unsigned long long flags) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  // The size must be a multiple of the granularity, as the real driver demands.
  if (handle == nullptr || prop == nullptr || size == 0 || flags != 0 ||
      prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || size % gpuslice::fake::kGranularity != 0)
    return CUDA_ERROR_INVALID_VALUE;
  std::size_t physical = 0;
  if (const CUresult rc = d.device(prop->location.id, physical); rc != CUDA_SUCCESS) return rc;
  std::uint64_t address = 0;
  if (const CUresult rc = d.charge(physical, size, address); rc != CUDA_SUCCESS) return rc;
  d.handles[address] = Allocation{size, physical, nullptr};
  *handle = address;
  return CUDA_SUCCESS;
}

extern "C" CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  const auto it = d.handles.find(handle);
  if (it == d.handles.end() || d.released_handles.count(handle)) return CUDA_ERROR_INVALID_VALUE;
  if (d.mapped_count[handle] > 0) {
    d.released_handles[handle] = true;  // freed by its last cuMemUnmap
    return CUDA_SUCCESS;
  }
  d.mapped_count.erase(handle);
  d.uncharge(it->second.device, it->second.bytes);
  d.handles.erase(it);
  return CUDA_SUCCESS;
}

extern "C" CUresult cuArrayCreate_v2(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* pAllocateArray) {
  if (pAllocateArray == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return create_array(pHandle, pAllocateArray->Width, pAllocateArray->Height, 1, pAllocateArray->Format,
                      pAllocateArray->NumChannels);
}

extern "C" CUresult cuArray3DCreate_v2(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* pAllocateArray) {
  if (pAllocateArray == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return create_array(pHandle, pAllocateArray->Width, pAllocateArray->Height, pAllocateArray->Depth,
                      pAllocateArray->Format, pAllocateArray->NumChannels);
}

extern "C" CUresult cuArrayDestroy(CUarray hArray) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  const gpuslice::fake::Array* array = d.arrays.find(hArray);
  if (array == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  d.uncharge(array->allocation.device, array->allocation.bytes);
  d.arrays.erase(hArray);
  return CUDA_SUCCESS;
}

extern "C" CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) {
  if (srcHost == nullptr && ByteCount > 0) return CUDA_ERROR_INVALID_VALUE;
  return check_range(dstDevice, ByteCount);
}
extern "C" CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) {
  return cuMemcpyHtoD_v2(dstDevice, srcHost, ByteCount);
}
extern "C" CUresult cuMemcpyDtoH_v2(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
  if (dstHost == nullptr && ByteCount > 0) return CUDA_ERROR_INVALID_VALUE;
  return check_range(srcDevice, ByteCount);
}
extern "C" CUresult cuMemcpyDtoH_v2_ptds(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
  return cuMemcpyDtoH_v2(dstHost, srcDevice, ByteCount);
}
extern "C" CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char /*uc*/, size_t N) {
  return check_range(dstDevice, N);
}
extern "C" CUresult cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return cuMemsetD8_v2(dstDevice, uc, N);
}

// Until cuDeviceSetMemPool exists in the fake, a device's current pool is
// its default pool.
extern "C" CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
  return cuDeviceGetDefaultMemPool(pool, dev);
}

// Every level of the mipmap: level l is the base halved l times (at least 1).
extern "C" CUresult cuMipmappedArrayCreate(CUmipmappedArray* handle, const CUDA_ARRAY3D_DESCRIPTOR* desc,
                                           unsigned int levels) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  Context* context = nullptr;
  if (const CUresult rc = d.current_context(context); rc != CUDA_SUCCESS) return rc;
  if (handle == nullptr || desc == nullptr || levels == 0 || levels > 32 || desc->Width == 0)
    return CUDA_ERROR_INVALID_VALUE;
  const std::uint64_t element = gpuslice::realgpu::array_element_bytes(desc->Format);
  if (element == 0) return CUDA_ERROR_INVALID_VALUE;
  std::uint64_t total = 0;
  for (unsigned l = 0; l < levels; ++l) {
    auto level = [l](std::uint64_t extent) { return std::max<std::uint64_t>(extent >> l, 1); };
    std::uint64_t b = 0;
    if (__builtin_mul_overflow(level(desc->Width) * level(desc->Height), level(desc->Depth), &b) ||
        __builtin_mul_overflow(b, desc->NumChannels * element, &b) ||
        __builtin_add_overflow(total, b, &total))
      return CUDA_ERROR_OUT_OF_MEMORY;
  }
  const std::uint64_t bytes = gpuslice::fake::driver_rounded(total);
  if (bytes == 0) return CUDA_ERROR_OUT_OF_MEMORY;
  std::uint64_t address = 0;
  if (const CUresult rc = d.charge(context->device, bytes, address); rc != CUDA_SUCCESS) return rc;
  auto array = std::make_unique<gpuslice::fake::Array>();
  array->allocation = Allocation{bytes, context->device, context};
  *handle = reinterpret_cast<CUmipmappedArray>(d.mipmapped_arrays.add(std::move(array)));
  return CUDA_SUCCESS;
}

extern "C" CUresult cuMipmappedArrayDestroy(CUmipmappedArray handle) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  const gpuslice::fake::Array* array = d.mipmapped_arrays.find(handle);
  if (array == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  d.uncharge(array->allocation.device, array->allocation.bytes);
  d.mipmapped_arrays.erase(handle);
  return CUDA_SUCCESS;
}

// Only the release threshold is modelled (the attribute frameworks set).
extern "C" CUresult cuMemPoolSetAttribute(CUmemoryPool handle, CUmemPool_attribute attr, void* value) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  Pool* pool = d.pools.find(handle);
  if (pool == nullptr || value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (attr != CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) return CUDA_ERROR_NOT_SUPPORTED;
  pool->release_threshold = *static_cast<const cuuint64_t*>(value);
  trim(d, *pool, pool->release_threshold);
  return CUDA_SUCCESS;
}

extern "C" CUresult cuMemPoolGetAttribute(CUmemoryPool handle, CUmemPool_attribute attr, void* value) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  const Pool* pool = d.pools.find(handle);
  if (pool == nullptr || value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (attr != CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) return CUDA_ERROR_NOT_SUPPORTED;
  *static_cast<cuuint64_t*>(value) = pool->release_threshold;
  return CUDA_SUCCESS;
}

extern "C" CUresult cuMemPoolTrimTo(CUmemoryPool handle, size_t minBytesToKeep) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (const CUresult rc = d.require_initialised(); rc != CUDA_SUCCESS) return rc;
  Pool* pool = d.pools.find(handle);
  if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
  trim(d, *pool, minBytesToKeep);
  return CUDA_SUCCESS;
}
