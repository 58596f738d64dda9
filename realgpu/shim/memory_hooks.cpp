// Every path that takes device memory reserves it in the slice first (one
// atomic check-and-reserve across the slice's processes), then asks the
// driver; a driver failure gives the reservation back.
#include <algorithm>

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

void log_oom(int ordinal, uint64_t needed, uint64_t limit) {
  Runtime::get().log(Level::Error, "Device %d OOM %llu / %llu", ordinal,
                     static_cast<unsigned long long>(needed), static_cast<unsigned long long>(limit));
}

// Reserve `bytes` on `ordinal`, run `allocate`, and on success hand the
// reservation to `keep`. Devices without a limit pass straight through.
template <class Allocate, class Keep>
CUresult counted(int ordinal, uint64_t bytes, Allocate&& allocate, Keep&& keep) {
  auto& rt = Runtime::get();
  if (!rt.env_error().empty()) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t limit = rt.memory_limit(ordinal);
  if (limit == 0) return allocate();
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

// A device-pointer allocation on the current device, remembered for its free.
template <class Allocate>
CUresult counted_pointer(CUdeviceptr* dptr, uint64_t bytes, Allocate&& allocate) {
  return counted(Runtime::get().current_ordinal_or(0), bytes, allocate,
                 [&](Held h) { pointers().add(*dptr, h); });
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
  return width * std::max<uint64_t>(height, 1) * std::max<uint64_t>(depth, 1) * channels *
         (element ? element : 2);
}

}  // namespace

GPUSLICE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  return counted_pointer(dptr, bytesize, [&] { return Runtime::get().real().cuMemAlloc_v2(dptr, bytesize); });
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
  const uint64_t estimate = ((width + 511) / 512) * 512 * std::max<size_t>(height, 1);
  Held held{-1, 0};
  const CUresult rc = counted(
      dev, estimate, [&] { return rt.real().cuMemAllocPitch_v2(dptr, pitch, width, height, element_size); },
      [&](Held h) { held = h; });
  if (rc != CUDA_SUCCESS || held.region_device < 0) return rc;
  const uint64_t actual = static_cast<uint64_t>(*pitch) * std::max<size_t>(height, 1);
  auto* region = rt.region();
  if (actual > estimate) {
    const auto extra = region->reserve(held.region_device, actual - estimate, rt.memory_limit(dev));
    if (!extra.granted) {
      log_oom(dev, extra.needed, rt.memory_limit(dev));
      rt.real().cuMemFree_v2(*dptr);
      region->release(held.region_device, estimate);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
  } else if (actual < estimate) {
    region->release(held.region_device, estimate - actual);
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
GPUSLICE_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                 CUstream stream) {
  return counted_pointer(dptr, bytesize, [&] {
    return Runtime::get().real().cuMemAllocFromPoolAsync(dptr, bytesize, pool, stream);
  });
}
GPUSLICE_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                      CUstream stream) {
  return counted_pointer(dptr, bytesize, [&] {
    return Runtime::get().real().cuMemAllocFromPoolAsync_ptsz(dptr, bytesize, pool, stream);
  });
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
GPUSLICE_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  return freed(Runtime::get().real().cuMemRelease(handle), physical(), handle);
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
