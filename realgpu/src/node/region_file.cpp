#include "gpuslice/realgpu/region_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "gpuslice/realgpu/hami_layout.hpp"
#include "gpuslice/realgpu/slice_region.hpp"

namespace gpuslice::realgpu {

using hami::load;
using hami::store;

RegionFile::RegionFile(const std::string& path, bool writable) : path_(path) {
  const int fd = open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw RegionError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    close(fd);
    throw RegionError(path + ": cannot stat: " + std::strerror(e));
  }
  device_ = st.st_dev;
  inode_ = st.st_ino;
  const auto size = static_cast<size_t>(st.st_size);
  // HAMi reads a file of at least its layout's size whose major version is
  // 1 (the minor is not checked); a smaller file is layout 0 (HAMi-core
  // 0.x), which gpuslice does not read.
  if (size < 12) {
    close(fd);
    throw RegionError(path + ": " + std::to_string(size) + " bytes, too small for an accounting file");
  }
  void* p = mmap(nullptr, size, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
  close(fd);  // the mapping stays
  if (p == MAP_FAILED) throw RegionError(path + ": cannot map: " + std::strerror(errno));
  region_ = static_cast<hami::SharedRegion*>(p);
  mapped_ = size;
  const int32_t flag = load(region_->initialized_flag);
  const uint32_t major = load(region_->major_version), minor = load(region_->minor_version);
  std::string problem;
  if (flag != hami::kMagic)
    problem = "magic flag not matched (not initialised yet, or not an accounting file)";
  else if (major != hami::kMajorVersion || size < hami::kRegionBytes)
    problem = "layout " + std::to_string(major) + "." + std::to_string(minor) + " of " +
              std::to_string(size) + " bytes; only layout 1.x (" + std::to_string(hami::kRegionBytes) +
              "+ bytes) is read";
  if (!problem.empty()) {
    munmap(region_, mapped_);
    region_ = nullptr;
    throw RegionError(path + ": " + problem);
  }
}

RegionFile::~RegionFile() {
  if (region_) munmap(region_, mapped_);
}

bool RegionFile::written_by_gpuslice() const { return load(region_->control.magic) == hami::kControlMagic; }

int RegionFile::device_count() const {
  return static_cast<int>(std::min<uint64_t>(load(region_->device_num), hami::kMaxDevices));
}

uint64_t RegionFile::memory_limit(int device) const { return load(region_->limit[device]); }

uint64_t RegionFile::sm_limit(int device) const { return load(region_->sm_limit[device]); }

int RegionFile::proc_num() const { return std::clamp(load(region_->proc_num), 0, hami::kMaxSlots); }

// Slot i as HAMi's reader sees it: procs[1023] is gpuslice's control slot,
// whose status field is where a process slot has it (always 0).
namespace {
hami::ProcSlot& slot_at(hami::SharedRegion& r, int i) {
  return reinterpret_cast<hami::ProcSlot*>(&r.procs[0])[i];
}
}  // namespace

RegionFile::Memory RegionFile::memory(int device) const {
  Memory m;
  for (int i = 0; i < proc_num(); ++i) {
    const auto& s = slot_at(*region_, i);
    if (load(s.status) == hami::kSlotExited) continue;
    const auto& u = s.used[device];
    m.context += load(u.context_size);
    m.module += load(u.module_size);
    m.buffer += load(u.data_size);
    m.offset += load(u.offset);
    m.total += load(u.total);
  }
  return m;
}

uint64_t RegionFile::sm_util(int device) const {
  uint64_t v = 0;
  for (int i = 0; i < proc_num(); ++i) {
    const auto& s = slot_at(*region_, i);
    if (load(s.status) != hami::kSlotExited) v += load(s.device_util[device].sm_util);
  }
  return v;
}

int64_t RegionFile::last_kernel_time() const { return static_cast<int64_t>(load(region_->last_kernel_time)); }

std::vector<RegionFile::Process> RegionFile::processes() const {
  std::vector<Process> out;
  for (int i = 0; i < proc_num(); ++i) {
    const auto& s = slot_at(*region_, i);
    const int status = load(s.status);
    if (status != hami::kSlotExited) out.push_back({i, load(s.pid), load(s.hostpid), status});
  }
  return out;
}

void RegionFile::set_sm_util(int slot, int device, uint64_t percent) {
  if (slot < 0 || slot >= proc_num() || device < 0 || device >= hami::kMaxDevices) return;
  store(slot_at(*region_, slot).device_util[device].sm_util, percent);
}

void RegionFile::mark_all_exited() {
  for (int i = 0; i < proc_num(); ++i) store(slot_at(*region_, i).status, hami::kSlotExited);
}

int RegionFile::device_max() const { return hami::kMaxDevices; }

bool RegionFile::valid_uuid(int device) const { return load(region_->uuids[device][0]) != 0; }

std::string RegionFile::uuid(int device) const {
  return std::string(region_->uuids[device], strnlen(region_->uuids[device], hami::kUuidBytes));
}

int RegionFile::priority() const { return load(region_->priority); }

int RegionFile::recent_kernel() const { return load(region_->recent_kernel); }

bool RegionFile::replace_recent_kernel(int expected, int desired) {
  int32_t e = expected;
  return __atomic_compare_exchange_n(&region_->recent_kernel, &e, desired, false, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED);
}

int RegionFile::utilization_switch() const { return load(region_->utilization_switch); }

void RegionFile::set_utilization_switch(int value) { store(region_->utilization_switch, value); }

}  // namespace gpuslice::realgpu
