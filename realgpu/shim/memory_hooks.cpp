// Every path that takes device memory reserves it in the slice first (one
// atomic check-and-reserve across the slice's processes), then asks the
// driver; a driver failure gives the reservation back.
#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "allocation_map.hpp"
#include "runtime.hpp"

// Needs cuda.h as runtime.hpp configures it (the exported names).
#include "gpuslice/realgpu/array_format.hpp"

using gpuslice::shim::AllocationMap;
using gpuslice::shim::Held;
using gpuslice::shim::Level;
using gpuslice::shim::Runtime;

namespace {

AllocationMap<CUdeviceptr>& pointers() {
  static auto* m = new AllocationMap<CUdeviceptr>();
  return *m;
}
AllocationMap<CUmemGenericAllocationHandle>& physical() {
  static auto* m = new AllocationMap<CUmemGenericAllocationHandle>();
  return *m;
}
AllocationMap<CUarray>& arrays() {
  static auto* m = new AllocationMap<CUarray>();
  return *m;
}
AllocationMap<CUmipmappedArray>& mipmapped() {
  static auto* m = new AllocationMap<CUmipmappedArray>();
  return *m;
}

void log_oom(int ordinal, uint64_t needed, uint64_t limit) {
  Runtime::get().log(Level::Error, "Device %d OOM %llu / %llu", ordinal,
                     static_cast<unsigned long long>(needed), static_cast<unsigned long long>(limit));
}

// Reserve `bytes` on `ordinal`, run `allocate`, and on success hand the
// reservation to `keep`. Devices without a limit pass straight through.
// `bytes` is what was asked; the slice is charged what the driver takes
// (Runtime::driver_bytes). A size whose arithmetic overflowed arrives as
// UINT64_MAX and is refused by the region's check, which cannot wrap.
// With `exact`, `requested` is already what the driver takes (a pool's
// allocation less what the pool reuses).
template <class Allocate, class Keep>
CUresult counted(int ordinal, uint64_t requested, Allocate&& allocate, Keep&& keep, bool exact = false) {
  auto& rt = Runtime::get();
  if (!rt.env_error().empty()) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t limit = rt.memory_limit(ordinal);
  if (limit == 0) return allocate();
  const uint64_t bytes = exact ? requested : rt.driver_bytes(ordinal, requested);
  auto* region = rt.region();
  const int rdev = rt.region_device(ordinal);
  if (!region || rdev < 0) {
    // Fail closed: an allocation the slice cannot account is refused.
    rt.log(Level::Error, "Device %d: slice accounting unavailable, refusing %llu bytes", ordinal,
           static_cast<unsigned long long>(bytes));
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  const auto r = region->reserve(rdev, bytes, limit);
  if (!r.granted) {
    log_oom(ordinal, r.needed, limit);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  const CUresult rc = allocate();
  if (rc != CUDA_SUCCESS) {
    region->release(rdev, bytes);
    return rc;
  }
  keep(Held{rdev, bytes});
  return rc;
}

void give_back(const std::optional<Held>& held) {
  if (!held) return;
  if (auto* region = Runtime::get().region()) region->release(held->region_device, held->bytes);
}

// A device-pointer allocation on a device (the current one unless said),
// remembered for its free.
template <class Allocate>
CUresult counted_pointer(CUdeviceptr* dptr, uint64_t bytes, Allocate&& allocate,
                         std::optional<int> ordinal = std::nullopt) {
  return counted(ordinal ? *ordinal : Runtime::get().current_ordinal_or(0), bytes, allocate,
                 [&](Held h) { pointers().add(*dptr, h); });
}

// a * b, or UINT64_MAX when it does not fit (then refused as too large).
uint64_t times(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? UINT64_MAX : out;
}

// Which virtual ranges map which physical handles, so that a handle
// released while mapped is given back when its last mapping goes.
class Mappings {
 public:
  void map(CUdeviceptr ptr, size_t size, CUmemGenericAllocationHandle handle) {
    std::lock_guard lock(mutex_);
    ranges_[ptr] = Range{size, handle};
    ++handles_[handle].mapped;
  }
  // True when the handle's memory is free now (no mapping left).
  bool release(CUmemGenericAllocationHandle handle) {
    std::lock_guard lock(mutex_);
    const auto it = handles_.find(handle);
    if (it == handles_.end() || it->second.mapped == 0) {
      if (it != handles_.end()) handles_.erase(it);
      return true;
    }
    it->second.released = true;
    return false;
  }
  // Handles released earlier whose last mapping was in [ptr, ptr + size).
  std::vector<CUmemGenericAllocationHandle> unmap(CUdeviceptr ptr, size_t size) {
    std::lock_guard lock(mutex_);
    std::vector<CUmemGenericAllocationHandle> freed;
    for (auto it = ranges_.lower_bound(ptr); it != ranges_.end() && it->first - ptr < size;) {
      auto h = handles_.find(it->second.handle);
      if (h != handles_.end() && --h->second.mapped == 0) {
        if (h->second.released) freed.push_back(h->first);
        handles_.erase(h);
      }
      it = ranges_.erase(it);
    }
    return freed;
  }

 private:
  struct Range {
    size_t size;
    CUmemGenericAllocationHandle handle;
  };
  struct Handle {
    unsigned mapped = 0;
    bool released = false;
  };
  std::mutex mutex_;
  std::map<CUdeviceptr, Range> ranges_;
  std::unordered_map<CUmemGenericAllocationHandle, Handle> handles_;
};
Mappings& mappings() {
  static auto* m = new Mappings();
  return *m;
}

// Memory pools, as the shim learns them: the card a pool's allocations
// live on (charged there, not to the current card), its release threshold
// and what it caches. A pool keeps freed memory up to its threshold (0 by
// default; PyTorch's cudaMallocAsync backend sets UINT64_MAX) and reuses
// it: that memory stays charged to the slice until the pool releases it.
class PoolDevices {
 public:
  void remember(CUmemoryPool pool, int ordinal) {
    std::lock_guard lock(mutex_);
    pools_[pool].ordinal = ordinal;
  }
  void forget(CUmemoryPool pool) {
    std::lock_guard lock(mutex_);
    const auto it = pools_.find(pool);
    if (it == pools_.end()) return;
    release(it->second, 0);
    pools_.erase(it);
  }
  std::optional<int> ordinal(CUmemoryPool pool) {
    std::lock_guard lock(mutex_);
    const auto it = pools_.find(pool);
    return it == pools_.end() || it->second.ordinal < 0 ? std::nullopt
                                                        : std::optional<int>(it->second.ordinal);
  }
  // Takes up to `bytes` of what the pool caches on `rdev` for a new allocation.
  uint64_t reuse(CUmemoryPool pool, int rdev, uint64_t bytes) {
    std::lock_guard lock(mutex_);
    auto& p = pools_[pool];
    if (p.region_device != rdev) return 0;
    const uint64_t taken = std::min(p.cached, bytes);
    p.cached -= taken;
    return taken;
  }
  // Gives `bytes` back to the pool (a free, or a failed allocation's reuse).
  void cache(CUmemoryPool pool, int rdev, uint64_t bytes) {
    std::lock_guard lock(mutex_);
    auto& p = pools_[pool];
    if (p.cached > 0 && p.region_device != rdev) release(p, 0);
    p.region_device = rdev;
    p.cached += bytes;
    release(p, p.threshold);
  }
  void set_threshold(CUmemoryPool pool, uint64_t threshold) {
    std::lock_guard lock(mutex_);
    auto& p = pools_[pool];
    p.threshold = threshold;
    release(p, threshold);
  }
  void trim(CUmemoryPool pool, uint64_t keep) {
    std::lock_guard lock(mutex_);
    const auto it = pools_.find(pool);
    if (it != pools_.end()) release(it->second, keep);
  }

 private:
  struct State {
    int ordinal = -1;
    int region_device = -1;
    uint64_t threshold = 0;
    uint64_t cached = 0;
  };
  // What the pool caches above `keep` goes back to the slice.
  static void release(State& p, uint64_t keep) {
    if (p.cached <= keep) return;
    if (auto* region = Runtime::get().region(); region && p.region_device >= 0)
      region->release(p.region_device, p.cached - keep);
    p.cached = keep;
  }
  std::mutex mutex_;
  std::unordered_map<CUmemoryPool, State> pools_;
};
PoolDevices& pools() {
  static auto* p = new PoolDevices();
  return *p;
}

// A free the driver accepted returns what its allocation reserved.
template <class Handle>
CUresult freed(CUresult rc, AllocationMap<Handle>& map, Handle handle) {
  if (rc == CUDA_SUCCESS) give_back(map.take(handle));
  return rc;
}

// Bytes an array takes; formats without a fixed element size (block-
// compressed, video) are counted at 2 bytes a channel, above what any of
// them takes per texel.
uint64_t array_bytes(uint64_t width, uint64_t height, uint64_t depth, unsigned channels, CUarray_format f) {
  const uint64_t element = gpuslice::realgpu::array_element_bytes(f);
  return times(
      times(times(times(width, std::max<uint64_t>(height, 1)), std::max<uint64_t>(depth, 1)), channels),
      element ? element : 2);
}

}  // namespace

GPUSLICE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  return counted_pointer(dptr, bytesize, [&] { return Runtime::get().real().cuMemAlloc_v2(dptr, bytesize); });
}

// The 32-bit-era entry points (what dlsym(handle, "cuMemAlloc") finds).
GPUSLICE_EXPORT CUresult cuMemAlloc(CUdeviceptr_v1* dptr, unsigned int bytesize) {
  auto& rt = Runtime::get();
  return counted(
      rt.current_ordinal_or(0), bytesize, [&] { return rt.real().cuMemAlloc(dptr, bytesize); },
      [&](Held h) { pointers().add(static_cast<CUdeviceptr>(*dptr), h); });
}
GPUSLICE_EXPORT CUresult cuMemAllocPitch(CUdeviceptr_v1* dptr, unsigned int* pitch, unsigned int width,
                                         unsigned int height, unsigned int element_size) {
  auto& rt = Runtime::get();
  const int dev = rt.current_ordinal_or(0);
  // Rows padded to 512 bytes, as the _v2 estimate; 32-bit sizes cannot wrap 64 bits.
  const uint64_t bytes = (uint64_t{width} + 511) / 512 * 512 * std::max(height, 1u);
  return counted(
      dev, bytes, [&] { return rt.real().cuMemAllocPitch(dptr, pitch, width, height, element_size); },
      [&](Held h) { pointers().add(static_cast<CUdeviceptr>(*dptr), h); });
}
GPUSLICE_EXPORT CUresult cuArrayCreate(CUarray* array, const CUDA_ARRAY_DESCRIPTOR_v1* desc) {
  auto call = [&] { return Runtime::get().real().cuArrayCreate(array, desc); };
  if (!desc) return call();
  const uint64_t bytes = array_bytes(desc->Width, desc->Height, 1, desc->NumChannels, desc->Format);
  return counted(Runtime::get().current_ordinal_or(0), bytes, call, [&](Held h) { arrays().add(*array, h); });
}
GPUSLICE_EXPORT CUresult cuMemFree(CUdeviceptr_v1 dptr) {
  return freed(Runtime::get().real().cuMemFree(dptr), pointers(), static_cast<CUdeviceptr>(dptr));
}

GPUSLICE_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  // Managed memory can migrate; it is charged to the device current at
  // allocation, as the application would expect to find it there.
  return counted_pointer(dptr, bytesize,
                         [&] { return Runtime::get().real().cuMemAllocManaged(dptr, bytesize, flags); });
}

GPUSLICE_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height,
                                            unsigned int element_size) {
  auto& rt = Runtime::get();
  const int dev = rt.current_ordinal_or(0);
  // The pitch is only known afterwards: reserve the usual 512-byte-aligned
  // rows, then settle the difference.
  const uint64_t row = width > UINT64_MAX - 511 ? UINT64_MAX : (uint64_t{width} + 511) / 512 * 512;
  const uint64_t estimate = rt.driver_bytes(dev, times(row, std::max<size_t>(height, 1)));
  Held held{-1, 0};
  const CUresult rc = counted(
      dev, estimate, [&] { return rt.real().cuMemAllocPitch_v2(dptr, pitch, width, height, element_size); },
      [&](Held h) { held = h; });
  if (rc != CUDA_SUCCESS || held.region_device < 0) return rc;
  const uint64_t actual = rt.driver_bytes(dev, times(*pitch, std::max<size_t>(height, 1)));
  // `held` is what `counted` charged: the estimate, as the driver rounds it.
  auto* region = rt.region();
  if (actual > held.bytes) {
    const auto extra = region->reserve(held.region_device, actual - held.bytes, rt.memory_limit(dev));
    if (!extra.granted) {
      log_oom(dev, extra.needed, rt.memory_limit(dev));
      rt.real().cuMemFree_v2(*dptr);
      region->release(held.region_device, held.bytes);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
  } else if (actual < held.bytes) {
    region->release(held.region_device, held.bytes - actual);
  }
  pointers().add(*dptr, Held{held.region_device, actual});
  return rc;
}

GPUSLICE_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  return freed(Runtime::get().real().cuMemFree_v2(dptr), pointers(), dptr);
}

namespace {

// Stream-ordered allocations come from a pool: the current pool of the
// current card (cuMemAllocAsync) or the named one. They are charged to the
// pool's card when requested; a free hands them back to the pool, which
// keeps up to its release threshold charged (see PoolDevices) and returns
// the rest to the slice when the free is requested.
template <class Allocate>
CUresult pool_allocation(CUdeviceptr* dptr, uint64_t requested, CUmemoryPool pool, Allocate&& allocate) {
  auto& rt = Runtime::get();
  const int ordinal = pools().ordinal(pool).value_or(rt.current_ordinal_or(0));
  if (!rt.env_error().empty()) return CUDA_ERROR_INVALID_VALUE;
  if (rt.memory_limit(ordinal) == 0) return allocate();
  const int rdev = rt.region_device(ordinal);
  const uint64_t bytes = rt.driver_bytes(ordinal, requested);
  const uint64_t reused = rdev >= 0 && bytes != UINT64_MAX ? pools().reuse(pool, rdev, bytes) : 0;
  const CUresult rc = counted(
      ordinal, bytes - reused, allocate,
      [&](Held h) {
        pointers().add(*dptr, Held{h.region_device, bytes, reinterpret_cast<void*>(pool)});
      },
      /*exact=*/true);
  if (rc != CUDA_SUCCESS && reused > 0) pools().cache(pool, rdev, reused);
  return rc;
}

// The pool cuMemAllocAsync draws from: the current card's current pool.
CUmemoryPool current_pool() {
  auto& rt = Runtime::get();
  const int ordinal = rt.current_ordinal_or(0);
  CUmemoryPool pool = nullptr;
  if (rt.memory_limit(ordinal) == 0 || rt.real().cuDeviceGetMemPool(&pool, ordinal) != CUDA_SUCCESS)
    return nullptr;
  pools().remember(pool, ordinal);
  return pool;
}

CUresult freed_async(CUresult rc, CUdeviceptr dptr) {
  if (rc != CUDA_SUCCESS) return rc;
  const auto held = pointers().take(dptr);
  if (held && held->pool)
    pools().cache(static_cast<CUmemoryPool>(held->pool), held->region_device, held->bytes);
  else
    give_back(held);
  return rc;
}

}  // namespace

GPUSLICE_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream stream) {
  return pool_allocation(dptr, bytesize, current_pool(),
                         [&] { return Runtime::get().real().cuMemAllocAsync(dptr, bytesize, stream); });
}
GPUSLICE_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream stream) {
  return pool_allocation(dptr, bytesize, current_pool(),
                         [&] { return Runtime::get().real().cuMemAllocAsync_ptsz(dptr, bytesize, stream); });
}
GPUSLICE_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                 CUstream stream) {
  return pool_allocation(dptr, bytesize, pool, [&] {
    return Runtime::get().real().cuMemAllocFromPoolAsync(dptr, bytesize, pool, stream);
  });
}
GPUSLICE_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                      CUstream stream) {
  return pool_allocation(dptr, bytesize, pool, [&] {
    return Runtime::get().real().cuMemAllocFromPoolAsync_ptsz(dptr, bytesize, pool, stream);
  });
}
GPUSLICE_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
  return freed_async(Runtime::get().real().cuMemFreeAsync(dptr, stream), dptr);
}
GPUSLICE_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream) {
  return freed_async(Runtime::get().real().cuMemFreeAsync_ptsz(dptr, stream), dptr);
}
GPUSLICE_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  const CUresult rc = Runtime::get().real().cuMemPoolSetAttribute(pool, attr, value);
  if (rc == CUDA_SUCCESS && attr == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD && value)
    pools().set_threshold(pool, *static_cast<const cuuint64_t*>(value));
  return rc;
}
GPUSLICE_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) {
  const CUresult rc = Runtime::get().real().cuMemPoolTrimTo(pool, keep);
  if (rc == CUDA_SUCCESS) pools().trim(pool, keep);
  return rc;
}
GPUSLICE_EXPORT CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* props) {
  const CUresult rc = Runtime::get().real().cuMemPoolCreate(pool, props);
  if (rc == CUDA_SUCCESS && pool && props && props->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
    pools().remember(*pool, props->location.id);
  return rc;
}
GPUSLICE_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  const CUresult rc = Runtime::get().real().cuMemPoolDestroy(pool);
  if (rc == CUDA_SUCCESS) pools().forget(pool);
  return rc;
}
GPUSLICE_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice dev) {
  const CUresult rc = Runtime::get().real().cuDeviceGetDefaultMemPool(pool, dev);
  if (rc == CUDA_SUCCESS && pool) pools().remember(*pool, static_cast<int>(dev));
  return rc;
}
GPUSLICE_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
  const CUresult rc = Runtime::get().real().cuDeviceGetMemPool(pool, dev);
  if (rc == CUDA_SUCCESS && pool) pools().remember(*pool, static_cast<int>(dev));
  return rc;
}

// Virtual memory management: the physical allocation is what takes memory.
GPUSLICE_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                                     const CUmemAllocationProp* prop, unsigned long long flags) {
  auto call = [&] { return Runtime::get().real().cuMemCreate(handle, size, prop, flags); };
  if (!prop || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE) return call();
  return counted(prop->location.id, size, call, [&](Held h) { physical().add(*handle, h); });
}
// A released handle that is still mapped keeps its memory until its last
// mapping goes (the driver's rule): the reservation is given back then.
GPUSLICE_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  const CUresult rc = Runtime::get().real().cuMemRelease(handle);
  if (rc == CUDA_SUCCESS && mappings().release(handle)) give_back(physical().take(handle));
  return rc;
}
GPUSLICE_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                  CUmemGenericAllocationHandle handle, unsigned long long flags) {
  const CUresult rc = Runtime::get().real().cuMemMap(ptr, size, offset, handle, flags);
  if (rc == CUDA_SUCCESS) mappings().map(ptr, size, handle);
  return rc;
}
GPUSLICE_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  const CUresult rc = Runtime::get().real().cuMemUnmap(ptr, size);
  if (rc == CUDA_SUCCESS)
    for (const auto handle : mappings().unmap(ptr, size)) give_back(physical().take(handle));
  return rc;
}

GPUSLICE_EXPORT CUresult cuArrayCreate_v2(CUarray* array, const CUDA_ARRAY_DESCRIPTOR* desc) {
  auto call = [&] { return Runtime::get().real().cuArrayCreate_v2(array, desc); };
  if (!desc) return call();
  const uint64_t bytes = array_bytes(desc->Width, desc->Height, 1, desc->NumChannels, desc->Format);
  return counted(Runtime::get().current_ordinal_or(0), bytes, call, [&](Held h) { arrays().add(*array, h); });
}
GPUSLICE_EXPORT CUresult cuArray3DCreate_v2(CUarray* array, const CUDA_ARRAY3D_DESCRIPTOR* desc) {
  auto call = [&] { return Runtime::get().real().cuArray3DCreate_v2(array, desc); };
  if (!desc) return call();
  const uint64_t bytes = array_bytes(desc->Width, desc->Height, desc->Depth, desc->NumChannels, desc->Format);
  return counted(Runtime::get().current_ordinal_or(0), bytes, call, [&](Held h) { arrays().add(*array, h); });
}
GPUSLICE_EXPORT CUresult cuArrayDestroy(CUarray array) {
  return freed(Runtime::get().real().cuArrayDestroy(array), arrays(), array);
}

// Every level of a mipmapped array: level l is the base halved l times in
// each dimension (at least 1).
GPUSLICE_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray* array, const CUDA_ARRAY3D_DESCRIPTOR* desc,
                                                unsigned int levels) {
  auto call = [&] { return Runtime::get().real().cuMipmappedArrayCreate(array, desc, levels); };
  if (!desc) return call();
  uint64_t bytes = 0;
  for (unsigned l = 0; l < std::max(levels, 1u) && l < 64; ++l) {
    auto level = [l](uint64_t extent) { return extent ? std::max<uint64_t>(extent >> l, 1) : 0; };
    const uint64_t b = array_bytes(level(desc->Width), level(desc->Height), level(desc->Depth),
                                   desc->NumChannels, desc->Format);
    bytes = bytes > UINT64_MAX - b ? UINT64_MAX : bytes + b;
  }
  return counted(Runtime::get().current_ordinal_or(0), bytes, call,
                 [&](Held h) { mipmapped().add(*array, h); });
}
GPUSLICE_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray array) {
  return freed(Runtime::get().real().cuMipmappedArrayDestroy(array), mipmapped(), array);
}
