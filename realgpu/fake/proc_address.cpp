// cuGetProcAddress over the export list (cuda_exports.hpp). The rules,
// modelled on the real driver's:
//  - `symbol` is a base name ("cuMemAlloc", not "cuMemAlloc_v2");
//  - of that name's variants, those introduced at or before `cudaVersion`
//    qualify; the newest of them wins ("cuCtxCreate" gives cuCtxCreate_v4
//    from 12050 on, cuCtxCreate_v2 before);
//  - CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM picks the _ptsz/_ptds
//    variant where there is one; LEGACY_STREAM or no flag (the driver's
//    default) the legacy one; the stream flavour outranks the version;
//  - unknown name: CUDA_ERROR_NOT_FOUND, *pfn = nullptr,
//    CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND; known but every variant newer
//    than `cudaVersion`: the same, with VERSION_NOT_SUFFICIENT.
#include <cstdlib>
#include <cstring>

#include "cuda_exports.hpp"

namespace {

// GPUSLICE_FAKE_PROC_ADDRESS_PRIVATE=1: cuGetProcAddress answers the
// allocation and view entry points with private functions of the library
// (exported under no name), as a real driver is free to; an interposer
// that recognises answers only by comparing addresses with dlsym's then
// misses them.
CUresult private_mem_alloc(CUdeviceptr* dptr, size_t bytes) { return cuMemAlloc_v2(dptr, bytes); }
CUresult private_mem_get_info(size_t* free, size_t* total) { return cuMemGetInfo_v2(free, total); }

void* private_answer(const void* exported) {
  const char* mode = std::getenv("GPUSLICE_FAKE_PROC_ADDRESS_PRIVATE");
  if (mode == nullptr || std::strcmp(mode, "1") != 0) return nullptr;
  if (exported == reinterpret_cast<const void*>(&cuMemAlloc_v2))
    return reinterpret_cast<void*>(&private_mem_alloc);
  if (exported == reinterpret_cast<const void*>(&cuMemGetInfo_v2))
    return reinterpret_cast<void*>(&private_mem_get_info);
  return nullptr;
}

enum class StreamFlavour { any, legacy, per_thread };

struct Entry {
  const char* base;
  int since;
  StreamFlavour stream;
  void* function;
};

const Entry kEntries[] = {
#define GPUSLICE_FAKE_PROC_ROW(fn, base, since, stream) \
  {#base, since, StreamFlavour::stream, reinterpret_cast<void*>(&fn)},
    GPUSLICE_FAKE_CUDA_EXPORTS(GPUSLICE_FAKE_PROC_ROW)
#undef GPUSLICE_FAKE_PROC_ROW
};

CUresult lookup(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                CUdriverProcAddressQueryResult* status) {
  if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  constexpr cuuint64_t kKnownFlags =
      CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  if ((flags & ~kKnownFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
  const StreamFlavour wanted = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0
                                   ? StreamFlavour::per_thread
                                   : StreamFlavour::legacy;
  const auto fits = [&](const Entry& entry) {
    return entry.stream == StreamFlavour::any || entry.stream == wanted;
  };
  bool known = false;
  const Entry* best = nullptr;
  for (const Entry& entry : kEntries) {
    if (std::strcmp(entry.base, symbol) != 0) continue;
    known = true;
    if (entry.since > cudaVersion) continue;
    // The wanted stream flavour first (the other only if it is all there
    // is at this version), then the newest.
    if (best == nullptr || (fits(entry) && !fits(*best)) ||
        (fits(entry) == fits(*best) && entry.since > best->since))
      best = &entry;
  }
  *pfn = best != nullptr ? best->function : nullptr;
  if (void* other = best != nullptr ? private_answer(best->function) : nullptr) *pfn = other;
  if (status != nullptr) {
    *status = best != nullptr ? CU_GET_PROC_ADDRESS_SUCCESS
              : known         ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                              : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  }
  return best != nullptr ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

}  // namespace

// Both work before cuInit, as the real ones do.
extern "C" CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  return lookup(symbol, pfn, cudaVersion, flags, nullptr);
}

extern "C" CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                                        CUdriverProcAddressQueryResult* symbolStatus) {
  return lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}
