// The machine-wide state of the fake GPUs: one file per fleet, mmap'd
// MAP_SHARED by every process using the fake (both libraries). Everything
// in it is guarded by one process-shared robust mutex, so a process killed
// at any instant never leaves it locked; whoever takes the lock next drops
// the dead process's records (memory, contexts) and carries on.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "device_table.hpp"

namespace gpuslice::fake {

// Kernel intervals remembered per device (enough for utilisation windows of
// a few hundred ms unless kernels are shorter than ~10 us).
inline constexpr std::size_t kRingSize = 16384;
inline constexpr std::size_t kMaxProcesses = 1024;
inline constexpr std::size_t kMaxFleetText = 1024;

struct BusyInterval {
  std::int64_t start_ns;
  std::int64_t end_ns;
  std::int32_t pid;
  std::uint32_t reserved;
};

struct DeviceRecord {
  std::uint64_t total_bytes;
  std::int64_t busy_until_ns;    // end of the last queued kernel
  std::uint64_t interval_count;  // intervals ever recorded; newest at (count-1) % kRingSize
  BusyInterval ring[kRingSize];  // in start order: the timeline is serial
};

// One per process that ever held a context. Card-wide used memory is the
// sum over live records, never a separate counter, so dropping a dead
// process's record is the whole repair.
struct ProcessRecord {
  std::int32_t pid;       // 0: free slot
  std::int32_t nvml_pid;  // the pid NVML reports (GPUSLICE_FAKE_PID_NAMESPACE_OFFSET); 0: `pid`
  std::uint64_t start_time;
  std::uint64_t allocated_bytes[kMaxDevices];  // user allocations
  std::uint64_t context_bytes[kMaxDevices];    // GPUSLICE_FAKE_CONTEXT_MIB footprints
  std::uint32_t context_count[kMaxDevices];    // contexts alive on the device
};

struct StateLayout {
  std::uint64_t magic;  // written last at initialisation
  std::uint32_t layout_version;
  std::uint32_t device_count;
  std::uint64_t layout_size;
  char fleet_text[kMaxFleetText];
  pthread_mutex_t mutex;
  std::uint64_t next_address;  // fake device addresses and handles, unique machine-wide
  DeviceRecord devices[kMaxDevices];
  ProcessRecord processes[kMaxProcesses];
};

// "<dir>/gpuslice-fake-<fnv1a64(fleet text) in hex>.state".
std::string state_file_path(std::string_view dir, std::string_view fleet_text);

class SharedState {
 public:
  // Opens the fleet's state file, creating and initialising it under
  // flock(LOCK_EX) when new or not fully initialised (flock, unlike the
  // mutex, needs no repair: the kernel drops it when its holder dies).
  // Returns nullptr with `error` set on failure.
  static std::unique_ptr<SharedState> attach(std::string_view dir, std::string_view fleet_text,
                                             std::span<const DeviceSpec> devices, std::string& error);
  ~SharedState();
  SharedState(const SharedState&) = delete;
  SharedState& operator=(const SharedState&) = delete;

  const std::string& path() const { return path_; }

  // Holds the state mutex for its lifetime. If the previous holder died
  // holding it, the state is marked consistent and dead processes' records
  // are dropped before the guard is handed out.
  class Guard {
   public:
    explicit Guard(SharedState& state);
    ~Guard();
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    // False only if the mutex is unrecoverable (never expected).
    explicit operator bool() const { return locked_; }
    StateLayout& operator*() const { return *layout_; }
    StateLayout* operator->() const { return layout_; }

   private:
    StateLayout* layout_;
    bool locked_ = false;
  };

  Guard lock() { return Guard(*this); }

 private:
  SharedState(std::string path, int fd, StateLayout* layout)
      : path_(std::move(path)), fd_(fd), layout_(layout) {}

  std::string path_;
  int fd_;
  StateLayout* layout_;
};

}  // namespace gpuslice::fake
