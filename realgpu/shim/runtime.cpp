#include "runtime.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "gpuslice/realgpu/hami_layout.hpp"

namespace gpuslice::shim {

void* real_dlsym(void* handle, const char* name) {
  using Dlsym = void* (*)(void*, const char*);
  static Dlsym dlsym_fn = [] {
    // dlvsym is not hooked, so this finds glibc's dlsym (2.34 moved it
    // into libc; older glibcs only have the 2.2.5 version).
    void* f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!f) f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    return reinterpret_cast<Dlsym>(f);
  }();
  return dlsym_fn ? dlsym_fn(handle, name) : nullptr;
}

namespace {

HookEntry g_hooks[] = {
#define CUDA_HOOK(name) {#name, reinterpret_cast<void*>(&::name), nullptr},
#define NVML_HOOK(name) {#name, reinterpret_cast<void*>(&::name), nullptr},
#define CUDA_REAL(name)
#define NVML_REAL(name)
#include "hook_table.def"
#undef CUDA_HOOK
#undef CUDA_REAL
#undef NVML_HOOK
#undef NVML_REAL
};

// Stands in for a driver function that is missing (no driver, or an older
// one without that entry point): the caller gets an error, never a crash.
template <class Fn>
struct Missing;
template <class R, class... Args>
struct Missing<R (*)(Args...)> {
  static R call(Args...) {
    if constexpr (std::is_same_v<R, CUresult>)
      return CUDA_ERROR_NOT_SUPPORTED;
    else
      return static_cast<R>(NVML_ERROR_FUNCTION_NOT_FOUND);
  }
};

template <class Fn>
void bind(void* library, const char* name, Fn& slot) {
  void* f = library ? real_dlsym(library, name) : nullptr;
  slot = f ? reinterpret_cast<Fn>(f) : &Missing<Fn>::call;
  for (auto& h : g_hooks)
    if (std::strcmp(h.name, name) == 0) h.real = f;
}

thread_local bool t_binding = false;
// The link maps of the driver libraries the shim opened (set once bound).
std::atomic<const void*> g_cuda_map{nullptr}, g_nvml_map{nullptr};

const void* link_map_of(void* handle) {
  link_map* map = nullptr;
  if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0) return nullptr;
  return map;
}

const char* env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace

std::span<HookEntry> hook_entries() { return g_hooks; }

bool binding_driver() { return t_binding; }

bool is_driver_object(const void* address) {
  const void* cuda = g_cuda_map.load(std::memory_order_acquire);
  const void* nvml = g_nvml_map.load(std::memory_order_acquire);
  if (!cuda && !nvml) return false;
  Dl_info info{};
  link_map* map = nullptr;
  if (!dladdr1(address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) || !map) return false;
  return map == cuda || map == nvml;
}

const HookEntry* find_hook(const char* name) {
  for (const auto& h : g_hooks)
    if (std::strcmp(h.name, name) == 0) return &h;
  return nullptr;
}

Runtime& Runtime::get() {
  static Runtime* runtime = new Runtime();  // never destroyed: hooks may run during exit
  return *runtime;
}

Runtime::Runtime() {
  try {
    env_ = realgpu::read_slice_env();
  } catch (const realgpu::EnvError& e) {
    env_error_ = e.what();
    env_.log_level = 1;
    log(Level::Error, "refusing the slice environment: %s", e.what());
  }
}

const RealDriver& Runtime::real() {
  std::call_once(driver_once_, [this] {
    t_binding = true;
    void* cuda = dlopen(env_or("GPUSLICE_REAL_LIBCUDA", "libcuda.so.1"), RTLD_NOW | RTLD_LOCAL);
    if (!cuda) log(Level::Error, "cannot open the CUDA driver: %s", dlerror());
    void* nvml = dlopen(env_or("GPUSLICE_REAL_LIBNVML", "libnvidia-ml.so.1"), RTLD_NOW | RTLD_LOCAL);
    if (!nvml)
      log(Level::Warn, "cannot open NVML (no virtualised NVML view, no compute limit): %s", dlerror());
#define CUDA_HOOK(name) bind(cuda, #name, real_.name);
#define CUDA_REAL(name) bind(cuda, #name, real_.name);
#define NVML_HOOK(name) bind(nvml, #name, real_.name);
#define NVML_REAL(name) bind(nvml, #name, real_.name);
#include "hook_table.def"
#undef CUDA_HOOK
#undef CUDA_REAL
#undef NVML_HOOK
#undef NVML_REAL
    g_cuda_map.store(link_map_of(cuda), std::memory_order_release);
    g_nvml_map.store(link_map_of(nvml), std::memory_order_release);
    t_binding = false;
  });
  return real_;
}

bool Runtime::nvml_ready() {
  std::call_once(nvml_once_, [this] {
    const auto& r = real();
    const nvmlReturn_t rc = r.nvmlInit_v2();
    nvml_ok_ = rc == NVML_SUCCESS;
    if (!nvml_ok_ && rc != NVML_ERROR_FUNCTION_NOT_FOUND) log(Level::Warn, "nvmlInit_v2 failed (%d)", rc);
  });
  return nvml_ok_;
}

namespace {
// The lower of two limits where 0 means none.
template <class T>
T tighter(T a, T b) {
  return a == 0 ? b : b == 0 ? a : std::min(a, b);
}
uint64_t env_memory_limit(const realgpu::SliceEnv& env, int ordinal) {
  return ordinal >= 0 && ordinal < realgpu::kMaxDevices ? env.memory_limit[ordinal] : 0;
}
int env_sm_limit(const realgpu::SliceEnv& env, int ordinal) {
  return ordinal >= 0 && ordinal < realgpu::kMaxDevices && env.throttles(ordinal) ? env.sm_limit[ordinal] : 0;
}
}  // namespace

uint64_t Runtime::memory_limit(int ordinal) {
  const auto d = device(ordinal);
  return d ? d->memory_limit : env_memory_limit(env_, ordinal);
}

int Runtime::sm_limit(int ordinal) {
  const auto d = device(ordinal);
  return d ? d->sm_limit : env_sm_limit(env_, ordinal);
}

realgpu::RegionSetup Runtime::region_setup() {
  realgpu::RegionSetup setup;
  setup.priority = env_.task_priority;
  int count = 0;
  if (!cuda_ready() || real().cuDeviceGetCount(&count) != CUDA_SUCCESS) return setup;
  // HAMi-core indexes the file's devices in the container's NVML order;
  // each gets the limits of the CUDA ordinal that is the same card.
  struct Card {
    unsigned nvml_index;
    int ordinal;
    realgpu::DeviceUuid uuid;
  };
  std::vector<Card> cards;
  for (int i = 0; i < std::min(count, realgpu::kMaxDevices); ++i) {
    CUdevice dev = 0;
    CUuuid uuid{};
    if (real().cuDeviceGet(&dev, i) != CUDA_SUCCESS || real().cuDeviceGetUuid_v2(&uuid, dev) != CUDA_SUCCESS)
      continue;
    Card c{static_cast<unsigned>(i), i, {}};
    std::memcpy(c.uuid.data(), uuid.bytes, c.uuid.size());
    nvmlDevice_t handle = nullptr;
    unsigned index = 0;
    if (nvml_ready() &&
        real().nvmlDeviceGetHandleByUUID(realgpu::uuid_text(c.uuid).c_str(), &handle) == NVML_SUCCESS &&
        real().nvmlDeviceGetIndex(handle, &index) == NVML_SUCCESS)
      c.nvml_index = index;
    cards.push_back(c);
  }
  std::stable_sort(cards.begin(), cards.end(),
                   [](const Card& a, const Card& b) { return a.nvml_index < b.nvml_index; });
  for (const Card& c : cards) {
    setup.devices.push_back(c.uuid);
    setup.memory_limits.push_back(env_memory_limit(env_, c.ordinal));
    setup.sm_limits.push_back(env_sm_limit(env_, c.ordinal));
  }
  return setup;
}

realgpu::SliceRegion* Runtime::region() {
  std::call_once(region_once_, [this] {
    if (!env_error_.empty()) return;
    try {
      region_ = new realgpu::SliceRegion(env_.shared_cache, region_setup());
    } catch (const realgpu::RegionError& e) {
      log(Level::Error, "%s", e.what());
      return;
    }
    // A forked child is a new process: it claims its own slot when it
    // first allocates; the parent's slot stays the parent's.
    pthread_atfork(nullptr, nullptr, [] { Runtime::get().region_->forget_slot_after_fork(); });
    std::atexit([] { Runtime::get().region_->leave(); });
  });
  return region_;
}

bool Runtime::cuda_ready() {
  // An NVML-only process (nvidia-smi in the container) never calls cuInit,
  // yet the map from NVML devices to CUDA ordinals comes from the driver.
  std::call_once(cuda_once_, [this] { cuda_ok_ = real().cuInit(0) == CUDA_SUCCESS; });
  return cuda_ok_;
}

std::optional<Runtime::Device> Runtime::device(int ordinal) {
  if (ordinal < 0 || ordinal >= realgpu::kMaxDevices || !cuda_ready()) return std::nullopt;
  std::lock_guard lock(mutex_);
  Device& d = devices_[ordinal];
  if (d.known) return d;
  const auto& r = real();
  CUdevice dev = 0;
  CUuuid uuid{};
  if (r.cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS || r.cuDeviceGetUuid_v2(&uuid, dev) != CUDA_SUCCESS)
    return std::nullopt;
  std::memcpy(d.uuid.data(), uuid.bytes, d.uuid.size());
  d.memory_limit = env_memory_limit(env_, ordinal);
  d.sm_limit = env_sm_limit(env_, ordinal);
  if (auto* reg = region()) {
    d.region_device = reg->device(d.uuid, d.memory_limit, d.sm_limit);
    if (d.region_device >= 0) {
      const uint64_t file_limit = reg->memory_limit(d.region_device);
      const int file_sm = reg->sm_limit(d.region_device);
      if (tighter(d.memory_limit, file_limit) != d.memory_limit || tighter(d.sm_limit, file_sm) != d.sm_limit)
        log(Level::Warn,
            "Device %d: the slice's file holds %llu bytes / %d%%, this process's environment %llu / %d%%; "
            "the "
            "tighter applies",
            ordinal, static_cast<unsigned long long>(file_limit), file_sm,
            static_cast<unsigned long long>(d.memory_limit), d.sm_limit);
      d.memory_limit = tighter(d.memory_limit, file_limit);
      d.sm_limit = tighter(d.sm_limit, file_sm);
    }
  }
  if (nvml_ready() &&
      r.nvmlDeviceGetHandleByUUID(realgpu::uuid_text(d.uuid).c_str(), &d.nvml) != NVML_SUCCESS)
    d.nvml = nullptr;
  d.known = true;
  return d;
}

int Runtime::region_device(int ordinal) {
  const auto d = device(ordinal);
  return d ? d->region_device : -1;
}

nvmlDevice_t Runtime::nvml_device(int ordinal) {
  const auto d = device(ordinal);
  return d ? d->nvml : nullptr;
}

std::optional<int> Runtime::current_ordinal() {
  CUdevice dev = 0;
  if (real().cuCtxGetDevice(&dev) != CUDA_SUCCESS) return std::nullopt;
  return static_cast<int>(dev);
}

std::optional<int> Runtime::ordinal_of(nvmlDevice_t nvml) {
  // By UUID, never by index: NVML numbers cards in PCI order, CUDA in its
  // own order filtered by CUDA_VISIBLE_DEVICES (HAMi-core mixes the two).
  char text[NVML_DEVICE_UUID_BUFFER_SIZE] = {};
  realgpu::DeviceUuid uuid{};
  int count = 0;
  if (real().nvmlDeviceGetUUID(nvml, text, sizeof text) != NVML_SUCCESS ||
      !realgpu::parse_uuid_text(text, uuid) || !cuda_ready() ||
      real().cuDeviceGetCount(&count) != CUDA_SUCCESS)
    return std::nullopt;
  for (int i = 0; i < count; ++i)
    if (const auto d = device(i); d && d->uuid == uuid) return i;
  return std::nullopt;
}

void Runtime::measure_footprint(int ordinal, realgpu::Footprint what) {
  if (memory_limit(ordinal) == 0) return;
  auto* reg = region();
  const int rdev = region_device(ordinal);
  nvmlDevice_t dev = nvml_device(ordinal);
  if (!reg || rdev < 0 || !dev) return;
  nvmlProcessInfo_t infos[256];
  unsigned count = 256;
  if (real().nvmlDeviceGetComputeRunningProcesses_v3(dev, &count, infos) != NVML_SUCCESS) return;
  const unsigned pid = host_pid();  // NVML's numbering, not this namespace's
  for (unsigned i = 0; i < count; ++i) {
    if (infos[i].pid != pid) continue;
    const uint64_t own = reg->own_allocated(rdev);
    reg->set_footprint(rdev, infos[i].usedGpuMemory > own ? infos[i].usedGpuMemory - own : 0, what);
    reg->set_nvml_usage(rdev, infos[i].usedGpuMemory);
    return;
  }
}

uint64_t Runtime::driver_bytes(int ordinal, uint64_t bytes) {
  constexpr uint64_t kSmallAlignment = 512;
  constexpr uint64_t kDefaultGranularity = 2ULL << 20;
  uint64_t granularity = kDefaultGranularity;
  if (ordinal >= 0 && ordinal < realgpu::kMaxDevices) {
    uint64_t& cached = devices_[ordinal].granularity;  // benign race: every thread computes the same
    if (__atomic_load_n(&cached, __ATOMIC_RELAXED) == 0) {
      CUmemAllocationProp prop{};
      prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
      prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      prop.location.id = ordinal;
      size_t g = 0;
      const bool asked =
          real().cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS &&
          g > 0 && (g & (g - 1)) == 0;
      __atomic_store_n(&cached, asked ? g : kDefaultGranularity, __ATOMIC_RELAXED);
    }
    granularity = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  }
  const uint64_t unit = bytes >= granularity ? granularity : kSmallAlignment;
  if (bytes > UINT64_MAX - (unit - 1)) return UINT64_MAX;
  return (bytes + unit - 1) / unit * unit;
}

std::vector<unsigned> Runtime::nvml_pids(int ordinal) {
  std::vector<unsigned> pids;
  nvmlDevice_t dev = nvml_device(ordinal);
  if (!dev) return pids;
  std::vector<nvmlProcessInfo_t> infos(256);
  unsigned count = static_cast<unsigned>(infos.size());
  nvmlReturn_t rc = real().nvmlDeviceGetComputeRunningProcesses_v3(dev, &count, infos.data());
  if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
    infos.resize(count + 32);
    count = static_cast<unsigned>(infos.size());
    rc = real().nvmlDeviceGetComputeRunningProcesses_v3(dev, &count, infos.data());
  }
  if (rc != NVML_SUCCESS) return {};
  for (unsigned i = 0; i < count; ++i) pids.push_back(infos[i].pid);
  std::sort(pids.begin(), pids.end());
  return pids;
}

unsigned Runtime::host_pid() {
  if (host_pid_owner_ == getpid()) {
    const unsigned found = host_pid_.load(std::memory_order_acquire);
    if (found != 0) return found;
  }
  return static_cast<unsigned>(getpid());
}

namespace {
// HAMi-core's node-wide lock directory: a hostPath HAMi's device plugin
// mounts into every container (created here, sticky and world-writable as
// the device plugin makes it, when a local run has none).
int open_node_lock() {
  const char* dir = std::getenv("GPUSLICE_HOST_LOCK_DIR");
  const std::string path = std::string(dir && *dir ? dir : "/tmp/vgpulock");
  if (mkdir(path.c_str(), 01777) == 0) chmod(path.c_str(), 01777);
  // Read-only suffices for flock, and lets a process of another user lock a
  // file the first one created (whatever its umask made of 0666).
  const int fd = open((path + "/gpuslice-hostpid.lock").c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd >= 0) fchmod(fd, 0666);  // only the creator can; others need not
  return fd;
}
}  // namespace

Runtime::ProcessSnapshot Runtime::host_pid_before_context(int ordinal) {
  ProcessSnapshot snapshot;
  // Only slices need it (a limit makes the shim compare NVML's pids), and
  // only once per process.
  if (!env_error_.empty() || (memory_limit(ordinal) == 0 && sm_limit(ordinal) == 0)) return snapshot;
  if (host_pid_owner_ == getpid() && host_pid_.load() != 0) return snapshot;
  if (!nvml_device(ordinal)) return snapshot;
  // One process at a time: flock on the node-wide discovery lock (dropped
  // by the kernel if this process dies in between). Two pods that lock only
  // their own slice's file can start together, and one can take the
  // other's pid for its own: it then counts its own kernels as a foreign
  // tenant's and the other's as its own, and is never held to its share.
  if (!region()) return snapshot;
  int fd = open_node_lock();
  if (fd >= 0) {
    if (flock(fd, LOCK_EX) != 0) {
      close(fd);
      return snapshot;
    }
  } else if ((fd = open(env_.shared_cache.c_str(), O_RDWR | O_CLOEXEC)) >= 0) {
    // No node lock folder: an open-file-description lock on a byte past the
    // slice's region (its processes hold shared flocks on the file itself,
    // and HAMi-core's record lock covers the region).
    struct flock past {};
    past.l_type = F_WRLCK;
    past.l_whence = SEEK_SET;
    past.l_start = static_cast<off_t>(realgpu::hami::kFileBytes);
    past.l_len = 1;
    while (fcntl(fd, F_OFD_SETLKW, &past) != 0)
      if (errno != EINTR) {
        close(fd);
        return snapshot;
      }
  }
  snapshot.lock_fd = fd;
  snapshot.pids = nvml_pids(ordinal);
  snapshot.valid = true;
  return snapshot;
}

void Runtime::host_pid_after_context(int ordinal, const ProcessSnapshot& before) {
  if (!before.valid) return;
  struct Unlock {
    int fd;
    ~Unlock() {
      if (fd >= 0) close(fd);  // closing the last descriptor drops the flock
    }
  } unlock{before.lock_fd};
  const std::vector<unsigned> after = nvml_pids(ordinal);
  std::vector<unsigned> appeared;
  std::set_difference(after.begin(), after.end(), before.pids.begin(), before.pids.end(),
                      std::back_inserter(appeared));
  // Pids already claimed by the slice's other processes are not ours.
  if (appeared.size() > 1)
    if (auto* reg = region()) {
      const int rdev = region_device(ordinal);
      if (rdev >= 0)
        for (const auto& s : reg->live_slots(rdev)) std::erase(appeared, static_cast<unsigned>(s.host_pid));
    }
  unsigned found = 0;
  if (appeared.size() == 1) {
    found = appeared.front();
  } else if (std::binary_search(after.begin(), after.end(), static_cast<unsigned>(getpid()))) {
    // No single newcomer (the context existed already, or another tenant
    // started at the same instant): fall back to our own pid if NVML
    // lists it, as it does outside a pid namespace.
    found = static_cast<unsigned>(getpid());
  }
  if (found != 0) {
    host_pid_owner_ = getpid();
    host_pid_.store(found, std::memory_order_release);
    if (auto* reg = region()) reg->set_host_pid(static_cast<int>(found));
    log(Level::Info, "host pid %u (NVML's numbering)", found);
  } else {
    log(Level::Warn,
        "host pid not found (%zu new processes on the device); the compute limit treats this "
        "process's NVML records as another tenant's",
        appeared.size());
  }
}

void Runtime::log(Level level, const char* format, ...) {
  if (static_cast<int>(level) > env_.log_level && level != Level::Error) return;
  static const char* names[] = {"ERROR", "WARN", "INFO", "INFO", "DEBUG"};
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  std::fprintf(stderr, "[gpuslice %s pid=%d]: %s\n", names[static_cast<int>(level)],
               static_cast<int>(getpid()), message);
}

}  // namespace gpuslice::shim
