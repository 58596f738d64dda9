// The accounting all processes of one slice share: a small file (the
// CUDA_DEVICE_MEMORY_SHARED_CACHE path) mapped into each of them.
//
// What HAMi-core gets wrong and this gets right:
//  - check and record are ONE step under one process-shared lock, so
//    concurrent allocators can never pass the cap together;
//  - the lock is a robust mutex: a process killed while holding it (SIGKILL
//    included) hands it to the next locker with EOWNERDEAD, which repairs the
//    region and goes on, no stall; the region is created under flock, which
//    the kernel drops when its holder dies;
//  - each process owns one slot that it writes with single 8-byte stores, so
//    a death mid-update leaves nothing half-written; a dead process's slot
//    (pid and start time no longer match a live process) is returned before
//    any refusal, when a process claims a slot, and when the view is read;
//  - slots never move (no compaction), so no process holds a stale pointer;
//  - sizes near 2^64 cannot wrap the check (a SIZE_MAX request is refused);
//  - a file that is not ours (another program's, HAMi-core's cache) is
//    refused, never overwritten, and permissions are never widened;
//  - devices are keyed by UUID, not ordinal, so processes that see the cards
//    in a different order (CUDA_VISIBLE_DEVICES) still agree.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuslice/realgpu/uuid_text.hpp"

namespace gpuslice::realgpu {

inline constexpr int kRegionDevices = 16;
inline constexpr int kRegionSlots = 1024;

struct RegionError : std::exception {
  explicit RegionError(std::string what) : message(std::move(what)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

// One process's view of a live slot (for tests, tools and the limiter).
struct SlotView {
  int pid = 0;
  int host_pid = 0;   // the pid NVML reports for it; 0 = not known (then `pid`)
  uint64_t used = 0;  // bytes on the asked device: allocations + context footprint
};

class SliceRegion {
 public:
  // Opens (creating if needed) the region file. Throws RegionError with the
  // path and the reason when it cannot, and when the file exists but is not
  // a gpuslice accounting file of this version: it is then left untouched
  // (contents and permissions), never overwritten.
  explicit SliceRegion(const std::string& path);
  ~SliceRegion();
  SliceRegion(const SliceRegion&) = delete;
  SliceRegion& operator=(const SliceRegion&) = delete;

  // The region's index for a device, registering it on first use; -1 when
  // the table is full.
  int device(const DeviceUuid& uuid);

  // Check and reserve in one step: adds `bytes` to this process's use of
  // `device` when the slice's total stays within `limit` (0 = no limit).
  // On refusal, returns the total the slice would have needed.
  struct Reservation {
    bool granted = false;
    uint64_t needed = 0;  // slice total including this request
  };
  Reservation reserve(int device, uint64_t bytes, uint64_t limit);
  void release(int device, uint64_t bytes);
  // Sets this process's context/module footprint on a device (not refused:
  // the driver has already spent it; it only narrows what is left).
  void set_footprint(int device, uint64_t bytes);

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

  const std::string& path() const { return path_; }

  // Tests only: take the lock and never let go (the caller is then killed).
  void lock_forever_for_test();

 private:
  struct Layout;
  class Guard;
  int own_slot_locked();  // claims a slot on first use
  void reclaim_dead_locked();
  uint64_t total_locked(int device) const;

  std::string path_;
  Layout* layout_ = nullptr;
  int slot_ = -1;
  int pid_ = 0;
  uint32_t host_pid_ = 0;
};

}  // namespace gpuslice::realgpu
