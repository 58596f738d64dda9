// gpuslice-adversary: programs nobody tuned the shim for, taking the paths
// real frameworks take and sizes no framework asks for, each printing one
// JSON line. Run under the shim (LD_PRELOAD) on the fake driver by
// tests/realgpu/shim_adversary_test.cpp; it opens the driver like an
// application does (dlopen + dlsym, or cuGetProcAddress) and checks the
// card's own figures (NVML's per-process list, which the shim leaves alone)
// against the slice's.
//   overflow LIMIT_MIB   fill the slice, then SIZE_MAX and near-limit sizes
//                        through every allocation path, four rounds
//   pool-of LIMIT_MIB    from card 0, allocate from card 1's pools
//   vmm-map LIMIT_MIB    a released handle stays charged while mapped
//   legacy               the unsuffixed 32-bit-era entry points
//   by-name LIMIT_MIB    cuMemAlloc resolved through cuGetProcAddress
//   view                 the three views of the card's size
//   granularity LIMIT_MIB  3 MiB requests take 4 MiB of a 2 MiB-page card
//   mipmap LIMIT_MIB     mipmapped arrays until refused
//   pool-threshold       a pool that keeps what is freed (PyTorch's setting)
//   code-load            a library and a fat binary, then allocate to the cap
//   cross-free           an async allocation of card 0 freed with card 1 current
//   host                 page-locked / registered host memory is not charged
//   driver-refuses       a request the card cannot hold gives its reservation back
//   start-storm N        N processes forked before any CUDA call, released at
//                        once: each times its start (cuInit, a context, a first
//                        allocation: slot, host pid, footprint) (HAMi #1662)
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpuslice/realgpu/nvml_abi.h"

using nlohmann::json;

namespace {

constexpr uint64_t MiB = 1ULL << 20;

void* cuda_library() {
  static void* h = dlopen("libcuda.so.1", RTLD_NOW);
  return h;
}
void* nvml_library() {
  static void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  return h;
}

template <class F>
F cu(const char* name) {
  void* f = dlsym(cuda_library(), name);
  if (!f) {
    std::printf("{\"error\":\"missing %s\"}\n", name);
    std::exit(3);
  }
  return reinterpret_cast<F>(f);
}
template <class F>
F nv(const char* name) {
  void* f = dlsym(nvml_library(), name);
  if (!f) {
    std::printf("{\"error\":\"missing %s\"}\n", name);
    std::exit(3);
  }
  return reinterpret_cast<F>(f);
}

#define CU(name) cu<decltype(&::name)>(#name)
#define NV(name) nv<decltype(&::name)>(#name)

void must(CUresult rc, const char* what) {
  if (rc != CUDA_SUCCESS) {
    std::printf("{\"error\":\"%s failed: %d\"}\n", what, static_cast<int>(rc));
    std::exit(3);
  }
}

CUcontext open_device(int ordinal) {
  must(CU(cuInit)(0), "cuInit");
  CUcontext ctx{};
  must(CU(cuDevicePrimaryCtxRetain)(&ctx, ordinal), "cuDevicePrimaryCtxRetain");
  must(CU(cuCtxSetCurrent)(ctx), "cuCtxSetCurrent");
  return ctx;
}

// What the card itself says every process holds on it (NVML's per-process
// list: not virtualised by the shim).
uint64_t card_bytes(int physical) {
  static bool init = NV(nvmlInit_v2)() == NVML_SUCCESS;
  if (!init) return 0;
  nvmlDevice_t dev{};
  if (NV(nvmlDeviceGetHandleByIndex_v2)(physical, &dev) != NVML_SUCCESS) return 0;
  nvmlProcessInfo_t infos[64];
  unsigned n = 64;
  if (NV(nvmlDeviceGetComputeRunningProcesses_v3)(dev, &n, infos) != NVML_SUCCESS) return 0;
  uint64_t total = 0;
  for (unsigned i = 0; i < n; ++i) total += infos[i].usedGpuMemory;
  return total;
}

// The slice's view of the current device: used = total - free.
uint64_t view_used() {
  size_t free = 0, total = 0;
  must(CU(cuMemGetInfo_v2)(&free, &total), "cuMemGetInfo_v2");
  return total - free;
}

// One allocation path: allocate `bytes` (true when granted), remembering
// what to free.
struct Held {
  std::function<void()> free;
};

bool allocate(const std::string& path, uint64_t bytes, std::vector<Held>& held) {
  CUdevice dev = 0;
  CU(cuCtxGetDevice)(&dev);
  if (path == "alloc") {
    CUdeviceptr p{};
    if (CU(cuMemAlloc_v2)(&p, bytes) != CUDA_SUCCESS) return false;
    held.push_back({[p] { CU(cuMemFree_v2)(p); }});
    return true;
  }
  if (path == "legacy") {
    CUdeviceptr_v1 p{};
    if (bytes > UINT32_MAX || CU(cuMemAlloc)(&p, static_cast<unsigned>(bytes)) != CUDA_SUCCESS) return false;
    held.push_back({[p] { CU(cuMemFree)(p); }});
    return true;
  }
  if (path == "managed") {
    CUdeviceptr p{};
    if (CU(cuMemAllocManaged)(&p, bytes, CU_MEM_ATTACH_GLOBAL) != CUDA_SUCCESS) return false;
    held.push_back({[p] { CU(cuMemFree_v2)(p); }});
    return true;
  }
  if (path == "async" || path == "pool") {
    CUdeviceptr p{};
    CUresult rc;
    if (path == "async") {
      rc = CU(cuMemAllocAsync)(&p, bytes, nullptr);
    } else {
      CUmemoryPool pool{};
      must(CU(cuDeviceGetDefaultMemPool)(&pool, dev), "cuDeviceGetDefaultMemPool");
      rc = CU(cuMemAllocFromPoolAsync)(&p, bytes, pool, nullptr);
    }
    if (rc != CUDA_SUCCESS) return false;
    held.push_back({[p] { CU(cuMemFreeAsync)(p, nullptr); }});
    return true;
  }
  if (path == "vmm") {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    CUmemGenericAllocationHandle h{};
    const uint64_t size = bytes / (2 * MiB) * (2 * MiB);  // whole pages, as the driver demands
    if (size == 0 || CU(cuMemCreate)(&h, size, &prop, 0) != CUDA_SUCCESS) return false;
    held.push_back({[h] { CU(cuMemRelease)(h); }});
    return true;
  }
  if (path == "pitch") {
    // Width x height whose product wraps: as wide as asked, 2^32 rows.
    CUdeviceptr p{};
    size_t pitch = 0;
    const size_t width = bytes >> 32 ? bytes : 1 << 20;
    const size_t height = bytes >> 32 ? 1ULL << 32 : bytes >> 20;
    if (CU(cuMemAllocPitch_v2)(&p, &pitch, width, height, 4) != CUDA_SUCCESS) return false;
    held.push_back({[p] { CU(cuMemFree_v2)(p); }});
    return true;
  }
  if (path == "array" || path == "array3d" || path == "mipmap") {
    CUDA_ARRAY3D_DESCRIPTOR d{};
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 4;                                  // 16 bytes a texel
    d.Width = bytes >> 32 ? bytes : 65536;              // 1 MiB a row
    d.Height = bytes >> 32 ? 1ULL << 40 : bytes >> 20;  // wraps for huge sizes
    d.Depth = path == "array" ? 0 : 1;
    CUarray a{};
    if (path == "array") {
      CUDA_ARRAY_DESCRIPTOR d2{d.Width, d.Height, d.Format, d.NumChannels};
      if (CU(cuArrayCreate_v2)(&a, &d2) != CUDA_SUCCESS) return false;
    } else if (path == "array3d") {
      if (CU(cuArray3DCreate_v2)(&a, &d) != CUDA_SUCCESS) return false;
    } else {
      CUmipmappedArray m{};
      if (CU(cuMipmappedArrayCreate)(&m, &d, 1) != CUDA_SUCCESS) return false;
      held.push_back({[m] { CU(cuMipmappedArrayDestroy)(m); }});
      return true;
    }
    held.push_back({[a] { CU(cuArrayDestroy)(a); }});
    return true;
  }
  std::printf("{\"error\":\"unknown path %s\"}\n", path.c_str());
  std::exit(2);
}

uint64_t fill(const std::string& path, uint64_t chunk, std::vector<Held>& held) {
  uint64_t total = 0;
  while (allocate(path, chunk, held)) total += chunk;
  return total;
}

json overflow(uint64_t limit) {
  open_device(0);
  const std::vector<std::string> paths = {"alloc", "legacy", "managed", "async",   "pool",
                                          "vmm",   "pitch",  "array",   "array3d", "mipmap"};
  json out = {{"command", "overflow"}, {"limit_bytes", limit}};
  uint64_t granted_past_cap = 0, worst_card = 0, worst_gap = 0;
  json rounds = json::array();
  for (int round = 0; round < 4; ++round) {
    std::vector<Held> held;
    const uint64_t filled = fill("alloc", 100 * MiB, held);
    for (const auto& path : paths) {
      const uint64_t used = view_used();
      for (uint64_t bytes : std::initializer_list<uint64_t>{
               UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - used + 1, UINT64_MAX - 2 * MiB + 2, 1ULL << 63,
               (1ULL << 63) + (1ULL << 62), limit - used + 1, limit + 1}) {
        if (allocate(path, bytes, held)) ++granted_past_cap;
        const uint64_t card = card_bytes(0), seen = view_used();
        worst_card = std::max(worst_card, card);
        worst_gap = std::max(worst_gap, card > seen ? card - seen : seen - card);
      }
    }
    // The slot still holds what was filled: one more chunk is refused.
    std::vector<Held> extra;
    const bool one_more = allocate("alloc", 100 * MiB, extra);
    rounds.push_back({{"filled_bytes", filled},
                      {"view_used_bytes", view_used()},
                      {"card_bytes", card_bytes(0)},
                      {"one_more_granted", one_more}});
    for (auto& h : extra) h.free();
    for (auto& h : held) h.free();
  }
  out["rounds"] = rounds;
  out["granted_past_cap"] = granted_past_cap;
  out["max_card_bytes"] = worst_card;
  out["max_view_card_gap_bytes"] = worst_gap;
  out["final_view_used_bytes"] = view_used();
  return out;
}

json pool_of(uint64_t limit) {
  (void)limit;
  open_device(1);
  CUcontext ctx0 = open_device(0);
  std::vector<Held> held;
  auto from_pool = [&](CUmemoryPool pool) {
    uint64_t n = 0;
    for (int i = 0; i < 6; ++i) {
      CUdeviceptr p{};
      if (CU(cuMemAllocFromPoolAsync)(&p, 300 * MiB, pool, nullptr) != CUDA_SUCCESS) break;
      held.push_back({[p] { CU(cuMemFreeAsync)(p, nullptr); }});
      ++n;
    }
    return n;
  };
  CUmemoryPool default1{};
  must(CU(cuDeviceGetDefaultMemPool)(&default1, 1), "cuDeviceGetDefaultMemPool");
  const uint64_t from_default = from_pool(default1);
  const uint64_t card1_after_default = card_bytes(1);
  for (auto& h : held) h.free();
  held.clear();
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 1;
  CUmemoryPool created{};
  must(CU(cuMemPoolCreate)(&created, &props), "cuMemPoolCreate");
  const uint64_t from_created = from_pool(created);
  const uint64_t card1_after_created = card_bytes(1);
  const uint64_t card0 = card_bytes(0), view0 = view_used();
  (void)ctx0;
  for (auto& h : held) h.free();
  return {{"command", "pool-of"},
          {"chunks_from_default_pool", from_default},
          {"card1_bytes_default_pool", card1_after_default},
          {"chunks_from_created_pool", from_created},
          {"card1_bytes_created_pool", card1_after_created},
          {"card0_bytes", card0},
          {"card0_view_used_bytes", view0}};
}

json vmm_map(uint64_t limit) {
  open_device(0);
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  const uint64_t size = limit / 2 / (2 * MiB) * (2 * MiB) + 2 * MiB;  // just over half the slice
  CUmemGenericAllocationHandle h{};
  must(CU(cuMemCreate)(&h, size, &prop, 0), "cuMemCreate");
  CUdeviceptr va{};
  must(CU(cuMemAddressReserve)(&va, size, 0, 0, 0), "cuMemAddressReserve");
  must(CU(cuMemMap)(va, size, 0, h, 0), "cuMemMap");
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  must(CU(cuMemSetAccess)(va, size, &access, 1), "cuMemSetAccess");
  must(CU(cuMemRelease)(h), "cuMemRelease");  // still mapped: still allocated
  std::vector<Held> held;
  const bool second_half_while_mapped = allocate("alloc", size, held);
  const uint64_t used_while_mapped = view_used(), card_while_mapped = card_bytes(0);
  for (auto& x : held) x.free();
  held.clear();
  must(CU(cuMemUnmap)(va, size), "cuMemUnmap");
  must(CU(cuMemAddressFree)(va, size), "cuMemAddressFree");
  const uint64_t used_after_unmap = view_used();
  const bool second_half_after_unmap = allocate("alloc", size, held);
  for (auto& x : held) x.free();
  return {{"command", "vmm-map"},
          {"mapped_bytes", size},
          {"granted_while_mapped", second_half_while_mapped},
          {"view_used_while_mapped", used_while_mapped},
          {"card_bytes_while_mapped", card_while_mapped},
          {"view_used_after_unmap", used_after_unmap},
          {"granted_after_unmap", second_half_after_unmap}};
}

json legacy() {
  open_device(0);
  unsigned free = 0, total = 0, device_total = 0;
  must(CU(cuMemGetInfo)(&free, &total), "cuMemGetInfo");
  must(CU(cuDeviceTotalMem)(&device_total, 0), "cuDeviceTotalMem");
  std::vector<Held> held;
  const uint64_t allocated = fill("legacy", 100 * MiB, held);
  const uint64_t card_full = card_bytes(0);
  for (auto& h : held) h.free();
  held.clear();
  uint64_t pitched = 0;  // cuMemAllocPitch (32-bit): 1 MiB rows
  for (CUdeviceptr_v1 p{}; pitched < 4000 * MiB; pitched += 100 * MiB) {
    unsigned pitch = 0;
    if (CU(cuMemAllocPitch)(&p, &pitch, 1 << 20, 100, 4) != CUDA_SUCCESS) break;
    held.push_back({[p] { CU(cuMemFree)(p); }});
  }
  for (auto& h : held) h.free();
  held.clear();
  uint64_t arrayed = 0;  // cuArrayCreate (32-bit descriptor): 65536 x 4 floats = 1 MiB rows
  for (; arrayed < 4000 * MiB; arrayed += 100 * MiB) {
    CUDA_ARRAY_DESCRIPTOR_v1 d{65536, 100, CU_AD_FORMAT_FLOAT, 4};
    CUarray a{};
    if (CU(cuArrayCreate)(&a, &d) != CUDA_SUCCESS) break;
    held.push_back({[a] { CU(cuArrayDestroy)(a); }});
  }
  json out = {{"command", "legacy"},
              {"total_bytes", total},
              {"free_bytes", free},
              {"device_total_bytes", device_total},
              {"allocated_bytes", allocated},
              {"card_bytes", card_full},
              {"pitch_allocated_bytes", pitched},
              {"array_allocated_bytes", arrayed}};
  for (auto& h : held) h.free();
  return out;
}

json by_name() {
  open_device(0);
  auto get_proc = CU(cuGetProcAddress_v2);
  void* f = nullptr;
  CUdriverProcAddressQueryResult status{};
  must(get_proc("cuMemAlloc", &f, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status), "cuGetProcAddress_v2");
  auto alloc = reinterpret_cast<decltype(&::cuMemAlloc_v2)>(f);
  uint64_t allocated = 0;
  std::vector<CUdeviceptr> ptrs;
  for (CUdeviceptr p{}; ptrs.size() < 30 && alloc(&p, 100 * MiB) == CUDA_SUCCESS; allocated += 100 * MiB)
    ptrs.push_back(p);
  Dl_info info{};
  const bool named = dladdr(f, &info) && info.dli_sname && info.dli_saddr == f;
  json out = {{"command", "by-name"},
              {"answer_exported_as", named ? info.dli_sname : ""},
              {"allocated_bytes", allocated},
              {"card_bytes", card_bytes(0)}};
  for (auto p : ptrs) CU(cuMemFree_v2)(p);
  return out;
}

json view() {
  open_device(0);
  size_t free = 0, total = 0, device_total = 0;
  must(CU(cuMemGetInfo_v2)(&free, &total), "cuMemGetInfo_v2");
  must(CU(cuDeviceTotalMem_v2)(&device_total, 0), "cuDeviceTotalMem_v2");
  NV(nvmlInit_v2)();
  nvmlDevice_t dev{};
  NV(nvmlDeviceGetHandleByIndex_v2)(0, &dev);
  nvmlMemory_t m{};
  NV(nvmlDeviceGetMemoryInfo)(dev, &m);
  return {{"command", "view"},           {"cuda_total_bytes", total},
          {"cuda_free_bytes", free},     {"device_total_bytes", device_total},
          {"nvml_total_bytes", m.total}, {"nvml_free_bytes", m.free}};
}

json granularity() {
  open_device(0);
  std::vector<Held> held;
  uint64_t n = 0;
  while (allocate("alloc", 3 * MiB, held)) ++n;
  json out = {{"command", "granularity"},
              {"granted", n},
              {"view_used_bytes", view_used()},
              {"card_bytes", card_bytes(0)}};
  for (auto& h : held) h.free();
  return out;
}

json mipmap() {
  open_device(0);
  std::vector<Held> held;
  uint64_t n = 0;
  while (allocate("mipmap", 256 * MiB, held)) ++n;
  json out = {
      {"command", "mipmap"}, {"granted", n}, {"view_used_bytes", view_used()}, {"card_bytes", card_bytes(0)}};
  for (auto& h : held) h.free();
  return out;
}

// PyTorch's cudaMallocAsync backend: the default pool's release threshold
// at UINT64_MAX, so freed memory stays with the pool (and on the card).
json pool_threshold() {
  open_device(0);
  CUmemoryPool pool{};
  must(CU(cuDeviceGetDefaultMemPool)(&pool, 0), "cuDeviceGetDefaultMemPool");
  cuuint64_t keep_all = UINT64_MAX;
  must(CU(cuMemPoolSetAttribute)(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_all),
       "cuMemPoolSetAttribute");
  CUdeviceptr p{};
  must(CU(cuMemAllocAsync)(&p, 600 * MiB, nullptr), "cuMemAllocAsync");
  must(CU(cuMemFreeAsync)(p, nullptr), "cuMemFreeAsync");
  const uint64_t cached_view = view_used(), cached_card = card_bytes(0);
  std::vector<Held> held;
  const bool plain_while_cached = allocate("alloc", 600 * MiB, held);
  must(CU(cuMemAllocAsync)(&p, 300 * MiB, nullptr), "cuMemAllocAsync");  // from the cache
  const uint64_t reuse_view = view_used(), reuse_card = card_bytes(0);
  must(CU(cuMemFreeAsync)(p, nullptr), "cuMemFreeAsync");
  must(CU(cuMemPoolTrimTo)(pool, 0), "cuMemPoolTrimTo");
  const uint64_t trimmed_view = view_used(), trimmed_card = card_bytes(0);
  const bool plain_after_trim = allocate("alloc", 600 * MiB, held);
  for (auto& h : held) h.free();
  return {{"command", "pool-threshold"},
          {"cached_view_used", cached_view},
          {"cached_card_bytes", cached_card},
          {"plain_granted_while_cached", plain_while_cached},
          {"reuse_view_used", reuse_view},
          {"reuse_card_bytes", reuse_card},
          {"trimmed_view_used", trimmed_view},
          {"trimmed_card_bytes", trimmed_card},
          {"plain_granted_after_trim", plain_after_trim}};
}

// Code loaded the ways cudart 12+ and old toolchains load it: a library
// (cuLibraryLoadData) and a fat binary (cuModuleLoadFatBinary). What the
// driver takes for them must count toward the slice.
json code_load() {
  open_device(0);
  static const char image[] = "fake image";
  CUlibrary library{};
  must(CU(cuLibraryLoadData)(&library, image, nullptr, nullptr, 0, nullptr, nullptr, 0), "cuLibraryLoadData");
  CUmodule module{};
  must(CU(cuModuleLoadFatBinary)(&module, image), "cuModuleLoadFatBinary");
  std::vector<Held> held;
  const uint64_t allocated = fill("alloc", 100 * MiB, held);
  json out = {{"command", "code-load"},
              {"allocated_bytes", allocated},
              {"view_used_bytes", view_used()},
              {"card_bytes", card_bytes(0)}};
  for (auto& h : held) h.free();
  return out;
}

// HAMi-core's issue #310 scenario: an async allocation of card 0 freed
// while card 1's context is current must be returned to card 0.
json cross_free() {
  CUcontext ctx1 = open_device(1);
  CUcontext ctx0 = open_device(0);
  CUdeviceptr p{};
  must(CU(cuMemAllocAsync)(&p, 32 * MiB, nullptr), "cuMemAllocAsync");
  const uint64_t used0_allocated = view_used();
  must(CU(cuCtxSetCurrent)(ctx1), "cuCtxSetCurrent");
  must(CU(cuMemFreeAsync)(p, nullptr), "cuMemFreeAsync");
  const uint64_t used1_after_free = view_used();
  CUdeviceptr q{};
  must(CU(cuMemAllocAsync)(&q, 32 * MiB, nullptr), "cuMemAllocAsync");
  const uint64_t used1_allocated = view_used();
  must(CU(cuCtxSetCurrent)(ctx0), "cuCtxSetCurrent");
  const uint64_t used0_after_free = view_used();
  CU(cuMemFreeAsync)(q, nullptr);
  return {{"command", "cross-free"},
          {"card0_used_allocated", used0_allocated},
          {"card0_used_after_free", used0_after_free},
          {"card1_used_after_free", used1_after_free},
          {"card1_used_allocated", used1_allocated}};
}

// Page-locked and registered host memory is the host's: never charged.
json host() {
  open_device(0);
  void* a = nullptr;
  void* b = nullptr;
  const bool alloc_host = CU(cuMemAllocHost_v2)(&a, 512 * MiB) == CUDA_SUCCESS;
  const bool host_alloc = CU(cuMemHostAlloc)(&b, 512 * MiB, CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS;
  std::vector<char> buffer(1 * MiB);
  const bool registered = CU(cuMemHostRegister_v2)(buffer.data(), buffer.size(), 0) == CUDA_SUCCESS;
  if (alloc_host) static_cast<char*>(a)[512 * MiB - 1] = 1;  // real host memory, writable
  const uint64_t used = view_used();
  std::vector<Held> held;
  const uint64_t device = fill("alloc", 100 * MiB, held);
  for (auto& h : held) h.free();
  json out = {{"command", "host"},
              {"alloc_host", alloc_host},
              {"host_alloc", host_alloc},
              {"registered", registered},
              {"view_used_bytes", used},
              {"device_allocated_bytes", device},
              {"unregistered", CU(cuMemHostUnregister)(buffer.data()) == CUDA_SUCCESS},
              {"freed", CU(cuMemFreeHost)(a) == CUDA_SUCCESS && CU(cuMemFreeHost)(b) == CUDA_SUCCESS}};
  return out;
}

// The slice lets a request through that the card itself cannot hold: the
// driver refuses, and the reservation must come back (nothing leaks).
json driver_refuses() {
  open_device(0);
  size_t free = 0, total = 0;
  must(CU(cuMemGetInfo_v2)(&free, &total), "cuMemGetInfo_v2");
  std::vector<Held> held;
  int refused = 0;
  for (int i = 0; i < 4; ++i) refused += allocate("alloc", total + 2 * MiB, held) ? 0 : 1;
  const uint64_t used = view_used();
  const uint64_t whole = fill("alloc", total, held);
  for (auto& h : held) h.free();
  return {{"command", "driver-refuses"},
          {"refused", refused},
          {"view_used_bytes", used},
          {"whole_card_bytes", whole}};
}

}  // namespace

double monotonic() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

json start_storm(int processes) {
  auto cuInit = CU(cuInit);
  auto cuDeviceGet = CU(cuDeviceGet);
  auto cuDevicePrimaryCtxRetain = CU(cuDevicePrimaryCtxRetain);
  auto cuCtxSetCurrent = CU(cuCtxSetCurrent);
  auto cuMemAlloc = CU(cuMemAlloc_v2);
  // Shared with the children: when they were let go, and when each was ready.
  void* shared = mmap(nullptr, sizeof(double) * (static_cast<size_t>(processes) + 1), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return json{{"error", "mmap"}};
  auto* times = static_cast<volatile double*>(shared);
  int go[2], hold[2];
  if (pipe(go) != 0 || pipe(hold) != 0) return json{{"error", "pipe"}};
  std::vector<pid_t> children;
  for (int i = 0; i < processes; ++i) {
    const pid_t pid = fork();
    if (pid < 0) return json{{"error", "fork"}};
    if (pid == 0) {
      close(go[1]);
      close(hold[1]);
      char c;
      (void)!read(go[0], &c, 1);
      CUdevice dev{};
      CUcontext ctx{};
      CUdeviceptr p{};
      const bool ok = cuInit(0) == CUDA_SUCCESS && cuDeviceGet(&dev, 0) == CUDA_SUCCESS &&
                      cuDevicePrimaryCtxRetain(&ctx, dev) == CUDA_SUCCESS &&
                      cuCtxSetCurrent(ctx) == CUDA_SUCCESS && cuMemAlloc(&p, MiB) == CUDA_SUCCESS;
      times[i + 1] = ok ? monotonic() - times[0] : -1;
      (void)!read(hold[0], &c, 1);  // all alive at once until the parent has counted
      _exit(0);
    }
    children.push_back(pid);
  }
  close(go[0]);
  close(hold[0]);
  usleep(200000);  // every child is waiting
  times[0] = monotonic();
  close(go[1]);
  const double deadline = monotonic() + 60;
  for (;;) {
    int done = 0;
    for (int i = 0; i < processes; ++i) done += times[i + 1] != 0;
    if (done == processes || monotonic() > deadline) break;
    usleep(2000);
  }
  std::vector<double> t;
  int failed = 0;
  for (int i = 0; i < processes; ++i) {
    if (times[i + 1] > 0)
      t.push_back(static_cast<double>(times[i + 1]));
    else
      ++failed;
  }
  close(hold[1]);
  for (pid_t c : children) waitpid(c, nullptr, 0);
  std::sort(t.begin(), t.end());
  return json{{"processes", processes},
              {"started", t.size()},
              {"failed", failed},
              {"median_seconds", t.empty() ? -1.0 : t[t.size() / 2]},
              {"max_seconds", t.empty() ? -1.0 : t.back()}};
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gpuslice-adversary COMMAND [LIMIT_MIB]\n");
    return 2;
  }
  const std::string command = argv[1];
  const uint64_t limit = argc > 2 ? std::strtoull(argv[2], nullptr, 10) * MiB : 0;
  json out;
  if (command == "overflow")
    out = overflow(limit);
  else if (command == "pool-of")
    out = pool_of(limit);
  else if (command == "vmm-map")
    out = vmm_map(limit);
  else if (command == "legacy")
    out = legacy();
  else if (command == "by-name")
    out = by_name();
  else if (command == "view")
    out = view();
  else if (command == "granularity")
    out = granularity();
  else if (command == "mipmap")
    out = mipmap();
  else if (command == "pool-threshold")
    out = pool_threshold();
  else if (command == "code-load")
    out = code_load();
  else if (command == "cross-free")
    out = cross_free();
  else if (command == "host")
    out = host();
  else if (command == "driver-refuses")
    out = driver_refuses();
  else if (command == "start-storm")
    out = start_storm(argc > 2 ? std::atoi(argv[2]) : 256);
  else {
    std::fprintf(stderr, "unknown command %s\n", command.c_str());
    return 2;
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
