// Lookups that would hand the application the driver's functions and so
// bypass the hooks: cuGetProcAddress (how CUDA 11.3+ runtimes, and so
// PyTorch, find every driver entry point) and dlsym on libcuda's handle.
//
// cuGetProcAddress: the driver resolves the name, the requested version and
// the per-thread-stream flag to one of its functions; if that function is
// one the shim hooks, the shim's hook is returned instead. Comparing
// addresses, not names, answers every version and _ptsz/_ptds choice the
// driver makes without the shim re-implementing its rules.
#include <dlfcn.h>
#include <link.h>

#include <cstring>

#include "runtime.hpp"

using gpuslice::shim::find_hook;
using gpuslice::shim::hook_entries;
using gpuslice::shim::real_dlsym;
using gpuslice::shim::Runtime;

namespace {

void substitute_hook(void** pfn) {
  if (!pfn || !*pfn) return;
  for (const auto& h : hook_entries())
    if (h.real == *pfn) {
      *pfn = h.hook;
      return;
    }
}

bool driver_name(const char* name) {
  return name && ((name[0] == 'c' && name[1] == 'u') || std::strncmp(name, "nvml", 4) == 0);
}

// dlsym(RTLD_NEXT, name) asked on behalf of `caller`: glibc resolves
// RTLD_NEXT relative to the object that calls it, which would now be the
// shim; walk the objects loaded after the caller's instead.
void* next_after(const void* caller, const char* name) {
  Dl_info info{};
  link_map* map = nullptr;
  if (!dladdr1(caller, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) || !map) return nullptr;
  for (link_map* m = map->l_next; m; m = m->l_next) {
    void* handle = dlopen(m->l_name && *m->l_name ? m->l_name : nullptr, RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) continue;
    void* symbol = real_dlsym(handle, name);
    dlclose(handle);
    if (!symbol) continue;
    // The handle searches the object's dependencies too; keep only a
    // definition that lives in this object itself.
    Dl_info owner{};
    link_map* owner_map = nullptr;
    if (dladdr1(symbol, &owner, reinterpret_cast<void**>(&owner_map), RTLD_DL_LINKMAP) && owner_map == m)
      return symbol;
  }
  return nullptr;
}

}  // namespace

GPUSLICE_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  const CUresult rc = Runtime::get().real().cuGetProcAddress(symbol, pfn, version, flags);
  if (rc == CUDA_SUCCESS) substitute_hook(pfn);
  return rc;
}

GPUSLICE_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                             CUdriverProcAddressQueryResult* status) {
  const CUresult rc = Runtime::get().real().cuGetProcAddress_v2(symbol, pfn, version, flags, status);
  if (rc == CUDA_SUCCESS) substitute_hook(pfn);
  return rc;
}

extern "C" __attribute__((visibility("default"))) void* dlsym(void* __restrict handle,
                                                              const char* __restrict name) noexcept {
  void* symbol =
      handle == RTLD_NEXT ? next_after(__builtin_return_address(0), name) : real_dlsym(handle, name);
  if (symbol && driver_name(name))
    if (const auto* hook = find_hook(name)) return hook->hook;
  return symbol;
}
