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
#include <string>

#include "runtime.hpp"

using gpuslice::shim::find_hook;
using gpuslice::shim::hook_entries;
using gpuslice::shim::HookEntry;
using gpuslice::shim::real_dlsym;
using gpuslice::shim::Runtime;

namespace {

// The driver's base name of an exported symbol: "cuMemAlloc_v2_ptsz" and
// "cuMemAlloc_v2" are both "cuMemAlloc".
std::string base_name(const char* name) {
  std::string s = name;
  for (const char* tail : {"_ptsz", "_ptds"})
    if (s.size() > 5 && s.compare(s.size() - 5, 5, tail) == 0) s.resize(s.size() - 5);
  const auto v = s.rfind("_v");
  if (v != std::string::npos && v + 2 < s.size() &&
      s.find_first_not_of("0123456789", v + 2) == std::string::npos)
    s.resize(v);
  return s;
}

bool per_thread(const char* name) {
  const size_t n = std::strlen(name);
  return n > 5 && (std::strcmp(name + n - 5, "_ptsz") == 0 || std::strcmp(name + n - 5, "_ptds") == 0);
}

// The CUDA version that introduced each versioned variant the shim hooks
// (cuda.h's history); used only by the by-name fallback below to pick the
// variant the driver would have picked for the requested version.
int introduced(const char* name) {
  static const std::pair<const char*, int> table[] = {
      {"cuMemAlloc_v2", 3020},      {"cuMemFree_v2", 3020},        {"cuMemAllocPitch_v2", 3020},
      {"cuMemGetInfo_v2", 3020},    {"cuDeviceTotalMem_v2", 3020}, {"cuArrayCreate_v2", 3020},
      {"cuArray3DCreate_v2", 3020}, {"cuCtxCreate_v2", 3020},      {"cuCtxCreate_v3", 11040},
      {"cuCtxCreate_v4", 12050},    {"cuGetProcAddress_v2", 12000}};
  for (const auto& [n, v] : table)
    if (std::strcmp(n, name) == 0) return v;
  return 0;
}

// The hook for what cuGetProcAddress answered. By address first (the
// driver's answer is one of its exported functions: exact for every
// version and stream flavour). When the driver answers with an address it
// does not export under a hooked name, by name: the symbol the address is
// exported as (dladdr, exact address only), else the requested base name
// when exactly one hook of that name and stream flavour exists. An answer
// that matches nothing is left alone.
void substitute_hook(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  if (!pfn || !*pfn) return;
  for (const auto& h : hook_entries())
    if (h.real == *pfn) {
      *pfn = h.hook;
      return;
    }
  Dl_info info{};
  if (dladdr(*pfn, &info) && info.dli_sname && info.dli_saddr == *pfn) {
    // Exported under a name: that name decides (an unhooked variant, say a
    // newer _vN, is left alone rather than guessed).
    if (const auto* h = find_hook(info.dli_sname)) *pfn = h->hook;
    return;
  }
  if (!symbol) return;
  const bool want_per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const HookEntry* match = nullptr;
  for (const auto& h : hook_entries()) {
    if (base_name(h.name) != symbol) continue;
    // A hook with a _ptsz twin answers only its own flavour.
    const bool has_twin =
        find_hook((std::string(h.name) + (per_thread(h.name) ? "" : "_ptsz")).c_str()) != nullptr;
    if (has_twin && per_thread(h.name) != want_per_thread) continue;
    if (h.hook == *pfn) return;
    // The newest variant not newer than the requested version.
    if (introduced(h.name) > version) continue;
    if (!match || introduced(h.name) > introduced(match->name)) match = &h;
  }
  if (match) *pfn = match->hook;
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
  if (rc == CUDA_SUCCESS) substitute_hook(symbol, pfn, version, flags);
  return rc;
}

GPUSLICE_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                             CUdriverProcAddressQueryResult* status) {
  const CUresult rc = Runtime::get().real().cuGetProcAddress_v2(symbol, pfn, version, flags, status);
  if (rc == CUDA_SUCCESS) substitute_hook(symbol, pfn, version, flags);
  return rc;
}

// dlsym(handle, "cu...") hands out the hook only for the driver's own
// definition (the one the shim forwards to) or the shim's. Any other
// definition is returned as it is: a forwarding libcuda (WSL2's shape)
// looks its target up with dlsym(target, same name), and answering that
// with the hook would make the hook call itself until the stack runs out.
// Lookups made while the shim opens the driver, or by the driver libraries
// themselves, get the real symbol for the same reason.
extern "C" __attribute__((visibility("default"))) void* dlsym(void* __restrict handle,
                                                              const char* __restrict name) noexcept {
  const void* caller = __builtin_return_address(0);
  void* symbol = handle == RTLD_NEXT ? next_after(caller, name) : real_dlsym(handle, name);
  if (!symbol || !driver_name(name)) return symbol;
  const auto* hook = find_hook(name);
  if (!hook || symbol == hook->hook || gpuslice::shim::binding_driver()) return symbol;
  if (gpuslice::shim::is_driver_object(caller)) return symbol;
  Runtime::get().real();  // binds hook->real (once)
  return symbol == hook->real ? hook->hook : symbol;
}
