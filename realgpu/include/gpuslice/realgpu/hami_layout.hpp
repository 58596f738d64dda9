// HAMi-core's shared region, layout 1.2 (src/multiprocess/multiprocess_memory_limit.h
// on HAMi-core main; HAMi v2.10's vGPUmonitor reads it as pkg/monitor/nvidia/v1),
// byte for byte on x86-64 glibc: the file CUDA_DEVICE_MEMORY_SHARED_CACHE
// names, sizeof(SharedRegion) + 1 bytes long, mapped by every process of a
// container and by the node's monitor.
//
// gpuslice keeps its own accounting in it (realgpu/src/node/slice_region.cpp) and
// puts what it needs beyond HAMi's fields where no HAMi reader looks:
//  - process slot 1023 is the control slot: its status stays 0 (HAMi's
//    monitor skips such slots) and its pid 0, and its bytes hold gpuslice's
//    mark and robust process-shared mutex. gpuslice processes use slots
//    0..1022, so proc_num never reaches it;
//  - each process slot's two trailing unused words hold the process's start
//    time and gpuslice's slot tag (pid + start time defeat pid reuse);
//  - `sem` holds a semaphore at 0 that gpuslice never posts: a libvgpu.so
//    process that opens a gpuslice file waits there (HAMi-core's lock_shrreg)
//    instead of writing slots under a lock gpuslice does not take.
// Nothing here is HAMi-core's code; the field names follow its header so the
// two can be read side by side.
#pragma once

#include <pthread.h>
#include <semaphore.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace gpuslice::realgpu::hami {

inline constexpr int32_t kMagic = 19920718;  // initialized_flag, stored last
inline constexpr uint32_t kMajorVersion = 1;
inline constexpr uint32_t kMinorVersion = 2;
inline constexpr int kMaxDevices = 16;
inline constexpr int kMaxSlots = 1024;
inline constexpr int kUuidBytes = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

// Slot status as HAMi-core writes it.
inline constexpr int32_t kSlotExited = 0;
inline constexpr int32_t kSlotLive = 1;
inline constexpr int32_t kSlotSuspended = 2;

// HAMi-core starts a new file with utilization_switch = 1 and recent_kernel = 2.
// gpuslice starts utilization_switch at -1: "no monitor has written it yet",
// which HAMi's monitor overwrites with 0 or 1 on its first pass (it sets the
// field whenever it differs from what it decided).
inline constexpr int32_t kSwitchNoMonitor = -1;
inline constexpr int32_t kRecentKernelFresh = 2;
inline constexpr int32_t kDefaultPriority = 1;

struct DeviceMemory {
  uint64_t context_size;
  uint64_t module_size;
  uint64_t data_size;  // HAMi's monitor calls it the buffer size
  uint64_t offset;
  uint64_t total;
  uint64_t unused[3];
};

struct DeviceUtil {
  uint64_t dec_util;
  uint64_t enc_util;
  uint64_t sm_util;  // percent
  uint64_t unused[3];
};

struct ProcSlot {
  int32_t pid;      // in the container's pid namespace; 0 = free
  int32_t hostpid;  // as NVML numbers it; 0 = not found yet
  DeviceMemory used[kMaxDevices];
  uint64_t monitorused[kMaxDevices];  // NVML's per-process figure
  DeviceUtil device_util[kMaxDevices];
  int32_t status;    // kSlotLive, kSlotSuspended, kSlotExited
  uint64_t seqlock;  // HAMi-core's; gpuslice leaves it at 0 (even: no write in progress)
  // HAMi-core's unused[2]: gpuslice's pid-reuse guard and slot tag.
  uint64_t gpuslice_start_time;
  uint64_t gpuslice_tag;
};

inline constexpr uint64_t kSlotTag = 0x31746f6c73737067ULL;  // "gpsslot1"

// The bytes of process slot 1023 as gpuslice uses them. pid and status sit
// where a process slot has them and stay 0.
struct ControlSlot {
  int32_t pid;
  int32_t hostpid;
  uint64_t magic;
  uint32_t version;
  uint32_t reserved;
  pthread_mutex_t mutex;
  unsigned char padding[1928 - 24 - sizeof(pthread_mutex_t)];
  int32_t status;
  unsigned char tail[1960 - 1932];
};

inline constexpr uint64_t kControlMagic = 0x6563696c73757067ULL;  // "gpuslice"
inline constexpr uint32_t kControlVersion = 1;

struct SharedRegion {
  int32_t initialized_flag;
  uint32_t major_version;
  uint32_t minor_version;
  int32_t sm_init_flag;
  uint64_t owner_pid;
  sem_t sem;
  uint64_t device_num;
  char uuids[kMaxDevices][kUuidBytes];
  uint64_t limit[kMaxDevices];     // bytes
  uint64_t sm_limit[kMaxDevices];  // percent
  ProcSlot procs[kMaxSlots - 1];
  ControlSlot control;  // procs[1023] to HAMi's readers
  int32_t proc_num;
  int32_t utilization_switch;
  int32_t recent_kernel;
  int32_t priority;
  uint64_t last_kernel_time;  // seconds since the epoch
  sem_t sem_postinit;
};

inline constexpr size_t kRegionBytes = 2008952;
inline constexpr size_t kFileBytes = kRegionBytes + 1;  // HAMi-core writes one byte past the struct

static_assert(sizeof(sem_t) == 32, "HAMi's layout assumes glibc's 32-byte sem_t (x86-64, aarch64)");
static_assert(sizeof(DeviceMemory) == 64 && sizeof(DeviceUtil) == 48);
static_assert(sizeof(ProcSlot) == 1960 && sizeof(ControlSlot) == sizeof(ProcSlot));
static_assert(offsetof(ProcSlot, used) == 8 && offsetof(ProcSlot, monitorused) == 1032 &&
              offsetof(ProcSlot, device_util) == 1160 && offsetof(ProcSlot, status) == 1928 &&
              offsetof(ProcSlot, seqlock) == 1936);
static_assert(offsetof(ControlSlot, status) == offsetof(ProcSlot, status));
static_assert(offsetof(SharedRegion, owner_pid) == 16 && offsetof(SharedRegion, sem) == 24 &&
              offsetof(SharedRegion, device_num) == 56 && offsetof(SharedRegion, uuids) == 64 &&
              offsetof(SharedRegion, limit) == 1600 && offsetof(SharedRegion, sm_limit) == 1728 &&
              offsetof(SharedRegion, procs) == 1856);
static_assert(offsetof(SharedRegion, control) == 1856 + 1023 * 1960);
static_assert(offsetof(SharedRegion, proc_num) == 2008896 &&
              offsetof(SharedRegion, utilization_switch) == 2008900 &&
              offsetof(SharedRegion, recent_kernel) == 2008904 &&
              offsetof(SharedRegion, priority) == 2008908 &&
              offsetof(SharedRegion, last_kernel_time) == 2008912 &&
              offsetof(SharedRegion, sem_postinit) == 2008920);
static_assert(sizeof(SharedRegion) == kRegionBytes);

// Relaxed atomic access to a field other processes write (every field is
// naturally aligned, so each load and store is whole).
template <class T>
T load(const T& field) {
  return __atomic_load_n(&field, __ATOMIC_RELAXED);
}
template <class T>
void store(T& field, std::type_identity_t<T> value) {
  __atomic_store_n(&field, value, __ATOMIC_RELAXED);
}

}  // namespace gpuslice::realgpu::hami
