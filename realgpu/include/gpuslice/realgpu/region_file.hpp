// A container's accounting file as a node monitor sees it (HAMi's
// pkg/monitor/nvidia: loadCache + v1.Spec): mapped whole, checked (magic
// 19920718, major version 1, at least the size of layout 1.2), and read with
// HAMi's sums over the slots below proc_num whose status is not 0. Whoever
// wrote it, libvgpu.so or the gpuslice shim, it reads the same.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpuslice/realgpu/feedback.hpp"

namespace gpuslice::realgpu {

namespace hami {
struct SharedRegion;
}

class RegionFile final : public FeedbackTarget {
 public:
  // Maps the file (read-write when `writable`, for the feedback). Throws
  // RegionError naming the path and what is wrong with it.
  RegionFile(const std::string& path, bool writable);
  ~RegionFile() override;
  RegionFile(const RegionFile&) = delete;
  RegionFile& operator=(const RegionFile&) = delete;

  const std::string& path() const { return path_; }
  // The file's identity when mapped: a rescan that finds another inode at the
  // path (the device plugin made the folder anew) maps it afresh.
  dev_t device_id() const { return device_; }
  ino_t inode() const { return inode_; }
  // Written by the gpuslice shim (its control slot is set), not libvgpu.so.
  bool written_by_gpuslice() const;

  // HAMi's DeviceNum: device_num, at most 16.
  int device_count() const;
  uint64_t memory_limit(int device) const;
  uint64_t sm_limit(int device) const;
  struct Memory {
    uint64_t context = 0, module = 0, buffer = 0, offset = 0, total = 0;
  };
  // Summed over the live slots (status != 0), as HAMi sums them.
  Memory memory(int device) const;
  uint64_t sm_util(int device) const;
  int64_t last_kernel_time() const;  // seconds since the epoch; 0 = never

  struct Process {
    int slot = 0;
    int pid = 0, host_pid = 0, status = 0;
  };
  // The slots below proc_num that are not exited.
  std::vector<Process> processes() const;
  int proc_num() const;
  // Writes one slot's SM utilization (percent) on a device, as HAMi-core's
  // utilization watcher does from NVML's per-process samples.
  void set_sm_util(int slot, int device, uint64_t percent);
  // Marks every slot exited: only when no process uses the file any more
  // (their usage would otherwise stay counted: HAMi #2281).
  void mark_all_exited();

  // FeedbackTarget.
  int device_max() const override;
  bool valid_uuid(int device) const override;
  std::string uuid(int device) const override;
  int priority() const override;
  int recent_kernel() const override;
  bool replace_recent_kernel(int expected, int desired) override;
  int utilization_switch() const override;
  void set_utilization_switch(int value) override;

 private:
  std::string path_;
  hami::SharedRegion* region_ = nullptr;
  size_t mapped_ = 0;
  dev_t device_ = 0;
  ino_t inode_ = 0;
};

}  // namespace gpuslice::realgpu
