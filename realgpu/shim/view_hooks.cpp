// The virtualised view: inside a slice, the card is as large as the slice.
// total = limit, used = what the slice's processes hold (allocations and
// context footprints), free = limit - used, never negative and never more
// than the card really has free.
#include <algorithm>

#include "runtime.hpp"

using gpuslice::shim::Runtime;

namespace {

struct SliceView {
  uint64_t total, used, free;
};

// nullopt when the device has no memory limit (the real view stands). A
// limit above the card's size is the card's size: every view (cuMemGetInfo,
// cuDeviceTotalMem, NVML) then says the same.
std::optional<SliceView> slice_view(int ordinal, uint64_t real_free, uint64_t real_total) {
  auto& rt = Runtime::get();
  const uint64_t limit = std::min(rt.memory_limit(ordinal), real_total);
  if (limit == 0) return std::nullopt;
  auto* region = rt.region();
  const int rdev = rt.region_device(ordinal);
  const uint64_t used = region && rdev >= 0 ? region->used(rdev) : 0;
  const uint64_t left = used < limit ? limit - used : 0;
  return SliceView{limit, used, std::min(left, real_free)};
}

}  // namespace

GPUSLICE_EXPORT CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
  auto& rt = Runtime::get();
  size_t real_free = 0, real_total = 0;
  const CUresult rc = rt.real().cuMemGetInfo_v2(&real_free, &real_total);
  if (rc != CUDA_SUCCESS) return rc;
  const auto ordinal = rt.current_ordinal();
  const auto view = ordinal ? slice_view(*ordinal, real_free, real_total) : std::nullopt;
  if (free) *free = view ? view->free : real_free;
  if (total) *total = view ? view->total : real_total;
  return rc;
}

GPUSLICE_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  auto& rt = Runtime::get();
  const CUresult rc = rt.real().cuDeviceTotalMem_v2(bytes, dev);
  if (rc == CUDA_SUCCESS && bytes) {
    const uint64_t limit = rt.memory_limit(static_cast<int>(dev));
    if (limit != 0) *bytes = std::min<uint64_t>(limit, *bytes);
  }
  return rc;
}

// The 32-bit-era entry points: the same view, saturated to 32 bits as the
// driver saturates them.
GPUSLICE_EXPORT CUresult cuMemGetInfo(unsigned int* free, unsigned int* total) {
  size_t f = 0, t = 0;
  const CUresult rc = cuMemGetInfo_v2(&f, &t);
  if (rc != CUDA_SUCCESS) return rc;
  if (free) *free = static_cast<unsigned>(std::min<size_t>(f, UINT32_MAX));
  if (total) *total = static_cast<unsigned>(std::min<size_t>(t, UINT32_MAX));
  return rc;
}
GPUSLICE_EXPORT CUresult cuDeviceTotalMem(unsigned int* bytes, CUdevice dev) {
  size_t b = 0;
  const CUresult rc = cuDeviceTotalMem_v2(&b, dev);
  if (rc == CUDA_SUCCESS && bytes) *bytes = static_cast<unsigned>(std::min<size_t>(b, UINT32_MAX));
  return rc;
}

GPUSLICE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  auto& rt = Runtime::get();
  const nvmlReturn_t rc = rt.real().nvmlDeviceGetMemoryInfo(device, memory);
  if (rc != NVML_SUCCESS || !memory) return rc;
  if (const auto ordinal = rt.ordinal_of(device)) {
    if (const auto view = slice_view(*ordinal, memory->free, memory->total)) {
      memory->total = view->total;
      memory->used = view->used;
      memory->free = view->free;
    }
  }
  return rc;
}

GPUSLICE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  auto& rt = Runtime::get();
  const nvmlReturn_t rc = rt.real().nvmlDeviceGetMemoryInfo_v2(device, memory);
  if (rc != NVML_SUCCESS || !memory) return rc;
  if (const auto ordinal = rt.ordinal_of(device)) {
    if (const auto view = slice_view(*ordinal, memory->free, memory->total)) {
      memory->total = view->total;
      memory->reserved = 0;  // the slice has no driver reserve of its own
      memory->used = view->used;
      memory->free = view->free;
    }
  }
  return rc;
}
