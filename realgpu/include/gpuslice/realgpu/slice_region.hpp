// The accounting all processes of one slice share: the file
// CUDA_DEVICE_MEMORY_SHARED_CACHE names, in HAMi-core's layout 1.2 (see
// hami_layout.hpp), so HAMi's vGPUmonitor reads it unchanged and its
// feedback (recent_kernel, utilization_switch) reaches the shim.
//
// What HAMi-core gets wrong and this gets right:
//  - check and record are ONE step under one process-shared lock, so
//    concurrent allocators can never pass the cap together;
//  - the lock is a robust mutex (in the control slot, where HAMi's readers
//    do not look): a process killed while holding it (SIGKILL included) hands
//    it to the next locker with EOWNERDEAD, which repairs the region and goes
//    on, no stall (HAMi-core's semaphore left every process of the slice
//    waiting: "Lock shrreg timeout", HAMi-core #86, HAMi #2500); the file is
//    created under a POSIX record lock over the region (the one HAMi-core
//    takes), which the kernel drops when its holder dies;
//  - each process owns one slot keyed by pid + start time (pid reuse, also
//    across container restarts, cannot make a dead slot look alive); a dead
//    process's slot is returned before any refusal, when a process claims a
//    slot, when the view is read and at most a second after any free, and it
//    is marked exited so HAMi's monitor stops counting it (HAMi #2281);
//  - slots never move (no compaction), so no process holds a stale index;
//    proc_num is the highest slot in use + 1;
//  - sizes near 2^64 cannot wrap the check (a SIZE_MAX request is refused);
//  - a file of another layout (HAMi-core 0.x), another program's or garbage
//    is refused, never overwritten, and permissions are never widened; a
//    HAMi-core 1.2 file that a live libvgpu.so process maps is refused too
//    (one with no live user, a container restarted after the library
//    changed, is taken over);
//  - devices are keyed by UUID, in the container's NVML order, so processes
//    that see the cards in another CUDA order (CUDA_VISIBLE_DEVICES) agree.
// Each process holds a shared flock on the file while it has it open: the
// monitor's test of "a live process holds this file" (the kernel drops it
// at death).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpuslice/realgpu/uuid_text.hpp"

namespace gpuslice::realgpu {

namespace hami {
struct SharedRegion;
}

inline constexpr int kRegionDevices = 16;
// Slot 1023 is gpuslice's control slot (see hami_layout.hpp).
inline constexpr int kRegionSlots = 1023;

struct RegionError : std::exception {
  explicit RegionError(std::string what) : message(std::move(what)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

// One process's view of a live slot (for tests, tools and the limiter).
struct SlotView {
  int pid = 0;
  int host_pid = 0;   // the pid NVML reports for it; 0 = not known (then `pid`)
  uint64_t used = 0;  // bytes on the asked device: allocations + context and module footprint
};

// What a new file starts with: the container's devices in NVML order with
// their limits, and the task priority (CUDA_TASK_PRIORITY).
struct RegionSetup {
  std::vector<DeviceUuid> devices;
  std::vector<uint64_t> memory_limits;  // bytes per device; 0 = none (missing entries: 0)
  std::vector<int> sm_limits;           // percent per device; 0 = none
  int priority = 1;
};

// What a context or a module holds on the device beyond the allocations.
enum class Footprint { Context, Module };

class SliceRegion {
 public:
  // Opens (creating if needed) the region file. Throws RegionError with the
  // path and the reason when it cannot, and when the file exists but is not
  // a region this shim can share: it is then left untouched (contents and
  // permissions), never overwritten. `setup` fills a new file; an existing
  // one keeps what it has and gains the devices it lacks.
  explicit SliceRegion(const std::string& path, const RegionSetup& setup = {});
  ~SliceRegion();
  SliceRegion(const SliceRegion&) = delete;
  SliceRegion& operator=(const SliceRegion&) = delete;

  // The region's index for a device, registering it on first use (with
  // these limits); -1 when the table is full.
  int device(const DeviceUuid& uuid, uint64_t memory_limit_if_new = 0, int sm_limit_if_new = 0);
  // The limits the file holds for a device (0 = none).
  uint64_t memory_limit(int device) const;
  int sm_limit(int device) const;

  // Check and reserve in one step: adds `bytes` to this process's use of
  // `device` when the slice's total stays within `limit` (0 = no limit).
  // On refusal, returns the total the slice would have needed.
  struct Reservation {
    bool granted = false;
    uint64_t needed = 0;  // slice total including this request
  };
  Reservation reserve(int device, uint64_t bytes, uint64_t limit);
  void release(int device, uint64_t bytes);
  // Records this process's footprint on a device as measured (what the
  // driver holds for it beyond its allocations): a context measurement
  // assigns to the context what modules do not already hold, a module
  // measurement to modules what the context does not. Not refused: the
  // driver has already spent it; it only narrows what is left.
  void set_footprint(int device, uint64_t bytes, Footprint what = Footprint::Context);
  // NVML's figures for this process, for the monitor (monitorused, sm_util).
  void set_nvml_usage(int device, uint64_t bytes);
  void set_sm_util(int device, unsigned percent);

  // What the whole slice holds on a device (dead processes' slots returned first).
  uint64_t used(int device);
  std::vector<SlotView> live_slots(int device);
  // This process's own use (allocations only, without footprint).
  uint64_t own_allocated(int device) const;

  // Records the pid NVML reports for this process (its pid on the host,
  // when the slice runs in a pid namespace of its own).
  void set_host_pid(int host_pid);

  // Takes this process's slot now (it is otherwise taken on first use), so
  // that the slice's other processes count it as theirs, e.g. for the
  // compute limiter of a slice without a memory limit.
  void join();
  // After fork(): the child has no slot yet (it claims one on first use).
  void forget_slot_after_fork();
  // Drops this process's slot (normal exit).
  void leave();

  // The monitor's feedback (HAMi's vGPUmonitor or `gpuslice monitor`).
  // recent_kernel < 0: a higher-priority task is active on a shared card.
  bool blocked_by_priority() const;
  // A launch: recent_kernel = 2 (unless a monitor set it negative meanwhile)
  // and last_kernel_time = `now` (seconds since the epoch) if later. The
  // shim marks every launch and stamps the time at most once a second.
  void mark_active();
  void note_kernel_time(uint64_t now);
  void mark_launch(uint64_t now) {
    mark_active();
    note_kernel_time(now);
  }
  // utilization_switch: hami::kSwitchNoMonitor until a monitor writes it.
  int utilization_switch() const;
  int priority() const;

  const std::string& path() const { return path_; }
  // The longest this process waited for the lock so far (seconds).
  double max_lock_wait() const { return max_lock_wait_; }

  // Tests only: take the lock and never let go (the caller is then killed).
  void lock_forever_for_test();

 private:
  class Guard;
  void open_file(const RegionSetup& setup);
  void initialise(const RegionSetup& setup);
  int add_device_locked(const DeviceUuid& uuid, uint64_t limit, int sm_limit);
  int own_slot_locked();  // claims a slot on first use
  void reclaim_dead_locked();
  bool alive_locked(int32_t pid, uint64_t start_time);
  void clear_slot_locked(int slot);
  uint64_t total_locked(int device) const;
  void maybe_reclaim_locked();

  std::string path_;
  hami::SharedRegion* layout_ = nullptr;
  int fd_ = -1;  // kept open: its shared flock says "a live process uses this file"
  int slot_ = -1;
  int pid_ = 0;
  uint64_t start_time_ = 0;
  int32_t host_pid_ = 0;
  double max_lock_wait_ = 0;
  double last_reclaim_ = 0;
  std::unordered_map<int32_t, std::pair<uint64_t, double>> verified_;  // pid -> (start time, when checked)
};

}  // namespace gpuslice::realgpu
