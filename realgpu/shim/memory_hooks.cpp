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
template <class Allocate, class Keep>
CUresult counted(int ordinal, uint64_t requested, Allocate&& allocate, Keep&& keep) {
  auto& rt = Runtime::get();
  if (!rt.env_error().empty()) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t limit = rt.memory_limit(ordinal);
  if (limit == 0) return allocate();
  const uint64_t bytes = rt.driver_bytes(ordinal, requested);
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

// Which device a memory pool's allocations live on, learnt when the
// application gets the pool; allocations from it are charged there, not
// to the current device.
class PoolDevices {
 public:
  void remember(CUmemoryPool pool, int ordinal) {
    std::lock_guard lock(mutex_);
    ordinals_[pool] = ordinal;
  }
  void forget(CUmemoryPool pool) {
    std::lock_guard lock(mutex_);
    ordinals_.erase(pool);
  }
  std::optional<int> ordinal(CUmemoryPool pool) {
    std::lock_guard lock(mutex_);
    const auto it = ordinals_.find(pool);
    return it == ordinals_.end() ? std::nullopt : std::optional<int>(it->second);
  }

 private:
  std::mutex mutex_;
  std::unordered_map<CUmemoryPool, int> ordinals_;
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
  const uint64_t estimate =
      rt.driver_bytes(dev, times((uint64_t{width} + 511) / 512 * 512, std::max<size_t>(height, 1)));
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

// Stream-ordered allocations are charged when requested and returned when
// the free is requested: from then on the application no longer holds them
// (a pool may keep the pages cached; they are the driver's, reusable by
// this slice's next request).
GPUSLICE_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream stream) {
  return counted_pointer(dptr, bytesize,
                         [&] { return Runtime::get().real().cuMemAllocAsync(dptr, bytesize, stream); });
}
GPUSLICE_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream stream) {
  return counted_pointer(dptr, bytesize,
                         [&] { return Runtime::get().real().cuMemAllocAsync_ptsz(dptr, bytesize, stream); });
}
// A pool's allocations are charged to the pool's device (a pool the shim
// did not see made, e.g. imported from another process: the current one).
GPUSLICE_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                 CUstream stream) {
  return counted_pointer(
      dptr, bytesize,
      [&] { return Runtime::get().real().cuMemAllocFromPoolAsync(dptr, bytesize, pool, stream); },
      pools().ordinal(pool));
}
GPUSLICE_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                      CUstream stream) {
  return counted_pointer(
      dptr, bytesize,
      [&] { return Runtime::get().real().cuMemAllocFromPoolAsync_ptsz(dptr, bytesize, pool, stream); },
      pools().ordinal(pool));
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
GPUSLICE_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
  return freed(Runtime::get().real().cuMemFreeAsync(dptr, stream), pointers(), dptr);
}
GPUSLICE_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream) {
  return freed(Runtime::get().real().cuMemFreeAsync_ptsz(dptr, stream), pointers(), dptr);
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
