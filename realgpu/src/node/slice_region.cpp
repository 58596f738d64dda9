#include "gpuslice/realgpu/slice_region.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "gpuslice/realgpu/file_users.hpp"
#include "gpuslice/realgpu/hami_layout.hpp"
#include "gpuslice/realgpu/process_identity.hpp"

namespace gpuslice::realgpu {

namespace {

using hami::load;
using hami::store;

std::string errno_text() { return std::strerror(errno); }

double monotonic_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// a + b, or UINT64_MAX when that does not fit: a sum of byte counts that
// wraps would read as a small number and let an allocation past the cap.
uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// Whether `bytes` more fit under `limit` on top of `total`, without an
// intermediate sum that could wrap (a request of SIZE_MAX never fits).
bool fits(uint64_t total, uint64_t bytes, uint64_t limit) { return bytes <= limit && total <= limit - bytes; }

// HAMi-core writes 100 for "no compute limit".
uint64_t stored_sm_limit(int percent) {
  return percent > 0 && percent < 100 ? static_cast<uint64_t>(percent) : 100;
}

// The slot's total as HAMi's monitor reads it: context + module + data.
void update_total(hami::ProcSlot& s, int device) {
  auto& m = s.used[device];
  store(m.total, saturating_add(m.data_size, saturating_add(m.context_size, m.module_size)));
}

// The record lock HAMi-core takes around creating the file (lockf over the
// region from offset 0): taking the same one means a libvgpu.so process and
// a gpuslice process never initialise one file together. The kernel drops
// it if the holder dies.
bool record_lock(int fd, short type) {
  struct flock rl {};
  rl.l_type = type;
  rl.l_whence = SEEK_SET;
  rl.l_start = 0;
  rl.l_len = static_cast<off_t>(hami::kRegionBytes);
  while (fcntl(fd, F_SETLKW, &rl) != 0)
    if (errno != EINTR) return false;
  return true;
}

struct Header {
  int32_t flag;
  uint32_t major, minor;
};

}  // namespace

// The robust lock: a previous owner's death is repaired, not waited on.
class SliceRegion::Guard {
 public:
  explicit Guard(SliceRegion& r) : region_(r) {
    const double start = monotonic_now();
    // A wait is cut into slices of 50 ms, each a fresh attempt. When the
    // owner dies the kernel wakes one waiter; a waiter killed right after
    // that wake-up takes the wake-up with it, and the others would sleep
    // on forever, though the lock is free (the kill storm test caught two
    // workers asleep behind a dead owner). A fresh attempt sees the dead
    // owner's mark and recovers the lock as below.
    int rc = ETIMEDOUT;
    while (rc == ETIMEDOUT) {
      timespec until{};
      clock_gettime(CLOCK_MONOTONIC, &until);
      until.tv_nsec += 50'000'000;
      if (until.tv_nsec >= 1'000'000'000) {
        until.tv_sec += 1;
        until.tv_nsec -= 1'000'000'000;
      }
      rc = pthread_mutex_clocklock(&r.layout_->control.mutex, CLOCK_MONOTONIC, &until);
    }
    r.max_lock_wait_ = std::max(r.max_lock_wait_, monotonic_now() - start);
    if (rc == EOWNERDEAD) {
      // The owner died inside a critical section; its slot is stale and
      // every other field is whole (each is one aligned store), so reclaim
      // and go on.
      r.reclaim_dead_locked();
      pthread_mutex_consistent(&r.layout_->control.mutex);
    } else if (rc != 0) {
      throw RegionError(r.path_ + ": cannot take the accounting lock: " + std::strerror(rc));
    }
  }
  ~Guard() { pthread_mutex_unlock(&region_.layout_->control.mutex); }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  SliceRegion& region_;
};

SliceRegion::SliceRegion(const std::string& path, const RegionSetup& setup)
    : path_(path), pid_(static_cast<int>(getpid())), start_time_(self_process().start_time) {
  open_file(setup);
}

void SliceRegion::open_file(const RegionSetup& setup) {
  // A new file is created readable by all but writable by no one outside
  // the owner and group (as the umask allows); an existing file keeps the
  // mode its owner gave it: the shim never widens permissions (HAMi-core
  // clears the umask and makes it 0666).
  int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0664);
  if (fd < 0 && errno == EEXIST) fd = open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw RegionError(path_ + ": cannot open the shared accounting file: " + errno_text());
  auto fail = [&](const std::string& why) {
    if (layout_) munmap(layout_, hami::kRegionBytes);
    layout_ = nullptr;
    close(fd);  // drops the flock and the record lock
    throw RegionError(path_ + ": " + why);
  };
  // From here on this process uses the file; the monitor never removes a
  // file that a process holds so.
  while (flock(fd, LOCK_SH) != 0)
    if (errno != EINTR) fail("cannot lock the shared accounting file: " + errno_text());
  if (!record_lock(fd, F_WRLCK)) fail("cannot lock the shared accounting file: " + errno_text());
  struct stat st {};
  if (fstat(fd, &st) != 0) fail("cannot read the shared accounting file's size: " + errno_text());
  const auto size = static_cast<size_t>(st.st_size);
  Header header{};
  if (size >= sizeof header && pread(fd, &header, sizeof header, 0) != static_cast<ssize_t>(sizeof header))
    fail("cannot read the shared accounting file: " + errno_text());
  enum class Kind { Fresh, Ours, HamiCore } kind = Kind::Fresh;
  if (size == 0) {
    kind = Kind::Fresh;
  } else if (header.flag == hami::kMagic) {
    if (header.major != hami::kMajorVersion || header.minor != hami::kMinorVersion ||
        size != hami::kFileBytes)
      fail("a HAMi-core accounting file of layout " + std::to_string(header.major) + "." +
           std::to_string(header.minor) + " (" + std::to_string(size) + " bytes; layout 1.2 has " +
           std::to_string(hami::kFileBytes) + "); refusing to overwrite it");
    uint64_t control[2] = {};
    const off_t at = static_cast<off_t>(offsetof(hami::SharedRegion, control) + 8);
    if (pread(fd, control, sizeof control, at) != static_cast<ssize_t>(sizeof control))
      fail("cannot read the shared accounting file: " + errno_text());
    const auto version = static_cast<uint32_t>(control[1] & 0xffffffffu);
    if (control[0] == hami::kControlMagic && version == hami::kControlVersion)
      kind = Kind::Ours;
    else if (control[0] == hami::kControlMagic)
      fail("written by another gpuslice version (control " + std::to_string(version) +
           "); remove it when no process uses it");
    else if (control[0] == 0 && control[1] == 0)
      kind = Kind::HamiCore;
    else
      fail(
          "not a gpuslice accounting file (its control slot holds something else); refusing to overwrite it");
  } else if (header.flag == 0 && size == hami::kFileBytes) {
    kind = Kind::Fresh;  // the creator died before writing the magic, which comes last
  } else {
    fail("not a gpuslice accounting file (nor HAMi-core's); refusing to overwrite it");
  }
  if (size == 0 && ftruncate(fd, static_cast<off_t>(hami::kFileBytes)) != 0)
    fail("cannot size the shared accounting file: " + errno_text());
  void* p = mmap(nullptr, hami::kRegionBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) fail("cannot map the shared accounting file: " + errno_text());
  layout_ = static_cast<hami::SharedRegion*>(p);
  if (kind == Kind::HamiCore) {
    // A libvgpu.so process keeps its own books under a semaphore this shim
    // does not take, and moves slots; sharing them would lose accounting.
    // Only a file no live process of it maps (a container restarted after
    // the library changed) is taken over.
    const int slots = std::clamp(load(layout_->proc_num), 0, hami::kMaxSlots - 1);
    for (int i = 0; i < slots; ++i) {
      const int32_t pid = load(layout_->procs[i].pid);
      if (pid > 0 && load(layout_->procs[i].status) != hami::kSlotExited &&
          process_maps_file(pid, st.st_dev, st.st_ino))
        fail("a libvgpu.so (HAMi-core) process, pid " + std::to_string(pid) +
             ", uses this file; gpuslice does not share its accounting with it (remove the file once it "
             "exits)");
    }
  }
  if (kind != Kind::Ours) {
    initialise(setup);
  } else {
    Guard g(*this);
    for (size_t i = 0; i < setup.devices.size(); ++i) {
      bool known = false;
      const uint64_t n = std::min<uint64_t>(load(layout_->device_num), kRegionDevices);
      for (uint64_t d = 0; d < n && !known; ++d) {
        DeviceUuid u{};
        known = parse_uuid_text(
                    std::string_view(layout_->uuids[d], strnlen(layout_->uuids[d], hami::kUuidBytes)), u) &&
                u == setup.devices[i];
      }
      if (!known)
        add_device_locked(setup.devices[i], i < setup.memory_limits.size() ? setup.memory_limits[i] : 0,
                          i < setup.sm_limits.size() ? setup.sm_limits[i] : 0);
    }
  }
  record_lock(fd, F_UNLCK);
  fd_ = fd;
}

void SliceRegion::initialise(const RegionSetup& setup) {
  auto& r = *layout_;
  std::memset(static_cast<void*>(&r), 0, hami::kRegionBytes);
  r.major_version = hami::kMajorVersion;
  r.minor_version = hami::kMinorVersion;
  // HAMi-core's semaphore stays at 0: a libvgpu.so process that opens this
  // file waits in lock_shrreg (and gives up after its 5 minutes) rather than
  // writing slots beside a lock it does not know.
  sem_init(&r.sem, 1, 0);
  sem_init(&r.sem_postinit, 1, 1);
  for (auto& l : r.sm_limit) l = 100;
  r.priority = setup.priority;
  r.utilization_switch = hami::kSwitchNoMonitor;
  r.recent_kernel = hami::kRecentKernelFresh;
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&r.control.mutex, &attr);
  pthread_mutexattr_destroy(&attr);
  r.control.magic = hami::kControlMagic;
  r.control.version = hami::kControlVersion;
  for (size_t i = 0; i < setup.devices.size(); ++i)
    add_device_locked(setup.devices[i], i < setup.memory_limits.size() ? setup.memory_limits[i] : 0,
                      i < setup.sm_limits.size() ? setup.sm_limits[i] : 0);
  __atomic_store_n(&r.initialized_flag, hami::kMagic, __ATOMIC_RELEASE);  // last: the file is whole
}

SliceRegion::~SliceRegion() {
  if (layout_) munmap(layout_, hami::kRegionBytes);
  if (fd_ >= 0) close(fd_);
}

int SliceRegion::add_device_locked(const DeviceUuid& uuid, uint64_t limit, int sm_limit) {
  const uint64_t i = load(layout_->device_num);
  if (i >= kRegionDevices) return -1;
  const std::string text = uuid_text(uuid);
  std::memset(layout_->uuids[i], 0, hami::kUuidBytes);
  std::memcpy(layout_->uuids[i], text.data(), std::min<size_t>(text.size(), hami::kUuidBytes - 1));
  store(layout_->limit[i], limit);
  store(layout_->sm_limit[i], stored_sm_limit(sm_limit));
  store(layout_->device_num, i + 1);  // after the entry: a death in between leaves the table as it was
  return static_cast<int>(i);
}

int SliceRegion::device(const DeviceUuid& uuid, uint64_t memory_limit_if_new, int sm_limit_if_new) {
  Guard g(*this);
  const uint64_t n = std::min<uint64_t>(load(layout_->device_num), kRegionDevices);
  for (uint64_t i = 0; i < n; ++i) {
    DeviceUuid u{};
    if (parse_uuid_text(std::string_view(layout_->uuids[i], strnlen(layout_->uuids[i], hami::kUuidBytes)),
                        u) &&
        u == uuid)
      return static_cast<int>(i);
  }
  return add_device_locked(uuid, memory_limit_if_new, sm_limit_if_new);
}

uint64_t SliceRegion::memory_limit(int device) const {
  return device >= 0 && device < kRegionDevices ? load(layout_->limit[device]) : 0;
}

int SliceRegion::sm_limit(int device) const {
  if (device < 0 || device >= kRegionDevices) return 0;
  const uint64_t v = load(layout_->sm_limit[device]);
  return v > 0 && v < 100 ? static_cast<int>(v) : 0;
}

void SliceRegion::clear_slot_locked(int i) {
  auto& s = layout_->procs[i];
  store(s.status, hami::kSlotExited);  // first: HAMi's monitor stops counting it
  std::memset(static_cast<void*>(s.used), 0, sizeof s.used);
  std::memset(static_cast<void*>(s.monitorused), 0, sizeof s.monitorused);
  std::memset(static_cast<void*>(s.device_util), 0, sizeof s.device_util);
  store(s.hostpid, 0);
  store(s.gpuslice_start_time, uint64_t{0});
  store(s.gpuslice_tag, uint64_t{0});
  __atomic_store_n(&s.pid, 0, __ATOMIC_RELEASE);  // last: free only once clean
  int n = load(layout_->proc_num);
  while (n > 0 && load(layout_->procs[n - 1].pid) == 0) --n;
  store(layout_->proc_num, n);
}

int SliceRegion::own_slot_locked() {
  if (slot_ >= 0) {
    const auto& s = layout_->procs[slot_];
    if (s.pid == pid_ && s.gpuslice_start_time == start_time_) return slot_;
  }
  // A free slot is taken as it is: reclaiming first would read /proc for
  // every live sibling, which hundreds of processes starting at once pay
  // for quadratically (HAMi #1662). Dead slots are reclaimed when none is
  // free, before any refusal, and within a second of any free or view.
  int free_slot = -1;
  for (int pass = 0; pass < 2 && free_slot < 0; ++pass) {
    if (pass == 1) reclaim_dead_locked();
    for (int i = 0; i < kRegionSlots && free_slot < 0; ++i)
      if (load(layout_->procs[i].pid) == 0) free_slot = i;
  }
  if (free_slot >= 0) {
    const int i = free_slot;
    auto& s = layout_->procs[i];
    std::memset(static_cast<void*>(s.used), 0, sizeof s.used);
    std::memset(static_cast<void*>(s.monitorused), 0, sizeof s.monitorused);
    std::memset(static_cast<void*>(s.device_util), 0, sizeof s.device_util);
    store(s.seqlock, uint64_t{0});
    store(s.hostpid, host_pid_);
    store(s.gpuslice_start_time, start_time_);
    store(s.gpuslice_tag, hami::kSlotTag);
    store(s.status, hami::kSlotLive);
    __atomic_store_n(&s.pid, pid_, __ATOMIC_RELEASE);  // last: the slot is claimed only once it is clean
    if (load(layout_->proc_num) < i + 1) store(layout_->proc_num, i + 1);
    slot_ = i;
    return i;
  }
  throw RegionError(path_ + ": all " + std::to_string(kRegionSlots) + " process slots are in use");
}

void SliceRegion::reclaim_dead_locked() {
  const int n = std::clamp(load(layout_->proc_num), 0, kRegionSlots);
  for (int i = n - 1; i >= 0; --i) {
    const auto& s = layout_->procs[i];
    const int32_t pid = load(s.pid);
    if (pid == 0 || i == slot_) continue;
    if (alive_locked(pid, load(s.gpuslice_start_time))) continue;
    clear_slot_locked(i);
  }
  last_reclaim_ = monotonic_now();
}

bool SliceRegion::alive_locked(int32_t pid, uint64_t start_time) {
  // A vanished pid is dead for sure (one syscall). A pid that exists is
  // checked against its start time (a /proc read) at most once a second:
  // the views and the compute limiter look often, and a reused pid is rare.
  if (kill(pid, 0) != 0 && errno == ESRCH) {
    verified_.erase(pid);
    return false;
  }
  const double now = monotonic_now();
  if (const auto it = verified_.find(pid);
      it != verified_.end() && it->second.first == start_time && now - it->second.second < 1.0)
    return true;
  if (!is_alive(ProcessId{pid, start_time})) {
    verified_.erase(pid);
    return false;
  }
  verified_[pid] = {start_time, now};
  return true;
}

void SliceRegion::maybe_reclaim_locked() {
  // Often enough that HAMi's monitor stops counting a killed sibling within
  // a second of any activity; rarely enough to stay off the allocation path.
  if (monotonic_now() - last_reclaim_ >= 1.0) reclaim_dead_locked();
}

uint64_t SliceRegion::total_locked(int device) const {
  uint64_t total = 0;
  const int n = std::clamp(load(layout_->proc_num), 0, kRegionSlots);
  for (int i = 0; i < n; ++i) {
    const auto& s = layout_->procs[i];
    if (s.pid != 0) total = saturating_add(total, s.used[device].total);
  }
  return total;
}

SliceRegion::Reservation SliceRegion::reserve(int device, uint64_t bytes, uint64_t limit) {
  Guard g(*this);
  const int s = own_slot_locked();
  uint64_t total = total_locked(device);
  if (limit != 0 && !fits(total, bytes, limit)) {
    // Before refusing, give back what dead processes still hold.
    reclaim_dead_locked();
    total = total_locked(device);
    if (!fits(total, bytes, limit)) return {false, saturating_add(total, bytes)};
  }
  auto& slot = layout_->procs[s];
  store(slot.used[device].data_size, saturating_add(slot.used[device].data_size, bytes));
  update_total(slot, device);
  return {true, saturating_add(total, bytes)};
}

void SliceRegion::release(int device, uint64_t bytes) {
  Guard g(*this);
  auto& slot = layout_->procs[own_slot_locked()];
  const uint64_t data = slot.used[device].data_size;
  store(slot.used[device].data_size, data - std::min(data, bytes));
  update_total(slot, device);
  maybe_reclaim_locked();
}

void SliceRegion::set_footprint(int device, uint64_t bytes, Footprint what) {
  Guard g(*this);
  auto& m = layout_->procs[own_slot_locked()].used[device];
  if (what == Footprint::Context)
    store(m.context_size, bytes > m.module_size ? bytes - m.module_size : 0);
  else
    store(m.module_size, bytes > m.context_size ? bytes - m.context_size : 0);
  update_total(layout_->procs[slot_], device);
}

void SliceRegion::set_nvml_usage(int device, uint64_t bytes) {
  Guard g(*this);
  store(layout_->procs[own_slot_locked()].monitorused[device], bytes);
}

void SliceRegion::set_sm_util(int device, unsigned percent) {
  Guard g(*this);
  store(layout_->procs[own_slot_locked()].device_util[device].sm_util, uint64_t{percent});
}

uint64_t SliceRegion::used(int device) {
  Guard g(*this);
  reclaim_dead_locked();
  return total_locked(device);
}

std::vector<SlotView> SliceRegion::live_slots(int device) {
  Guard g(*this);
  reclaim_dead_locked();
  std::vector<SlotView> out;
  const int n = std::clamp(load(layout_->proc_num), 0, kRegionSlots);
  for (int i = 0; i < n; ++i) {
    const auto& s = layout_->procs[i];
    if (s.pid != 0) out.push_back({s.pid, s.hostpid, s.used[device].total});
  }
  return out;
}

uint64_t SliceRegion::own_allocated(int device) const {
  if (slot_ < 0) return 0;
  const auto& s = layout_->procs[slot_];
  return load(s.pid) == pid_ ? load(s.used[device].data_size) : 0;
}

void SliceRegion::set_host_pid(int host_pid) {
  Guard g(*this);
  host_pid_ = host_pid;
  store(layout_->procs[own_slot_locked()].hostpid, host_pid_);
}

void SliceRegion::join() {
  Guard g(*this);
  own_slot_locked();
}

void SliceRegion::forget_slot_after_fork() {
  slot_ = -1;
  host_pid_ = 0;  // the child has a host pid of its own, found when it makes a context
  pid_ = static_cast<int>(getpid());
  start_time_ = self_process().start_time;
}

void SliceRegion::leave() {
  if (slot_ < 0) return;
  Guard g(*this);
  const auto& s = layout_->procs[slot_];
  if (s.pid == pid_ && s.gpuslice_start_time == start_time_) clear_slot_locked(slot_);
  slot_ = -1;
}

bool SliceRegion::blocked_by_priority() const { return load(layout_->recent_kernel) < 0; }

void SliceRegion::mark_active() {
  // Only a non-negative value is replaced: a monitor that has just blocked
  // this task (-1) is not overruled by a launch that raced it. Usually the
  // value is 2 already and nothing is written (no cache line bounces).
  int32_t v = load(layout_->recent_kernel);
  while (v >= 0 && v != hami::kRecentKernelFresh &&
         !__atomic_compare_exchange_n(&layout_->recent_kernel, &v, hami::kRecentKernelFresh, true,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

void SliceRegion::note_kernel_time(uint64_t now) {
  uint64_t t = load(layout_->last_kernel_time);
  while (t < now && !__atomic_compare_exchange_n(&layout_->last_kernel_time, &t, now, true, __ATOMIC_RELAXED,
                                                 __ATOMIC_RELAXED)) {
  }
}

int SliceRegion::utilization_switch() const { return load(layout_->utilization_switch); }

int SliceRegion::priority() const { return load(layout_->priority); }

void SliceRegion::lock_forever_for_test() {
  pthread_mutex_lock(&layout_->control.mutex);
  own_slot_locked();
  for (;;) pause();
}

}  // namespace gpuslice::realgpu
