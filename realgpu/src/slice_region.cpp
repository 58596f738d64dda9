#include "gpuslice/realgpu/slice_region.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gpuslice/realgpu/process_identity.hpp"

namespace gpuslice::realgpu {

namespace {
constexpr uint64_t kMagic = 0x6770'7573'6c69'6365ULL;  // "gpuslice"
// 2: slots record the process's host pid (what NVML reports).
constexpr uint32_t kVersion = 2;

std::string errno_text() { return std::strerror(errno); }

// a + b, or UINT64_MAX when that does not fit: a sum of byte counts that
// wraps would read as a small number and let an allocation past the cap.
uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// Whether `bytes` more fit under `limit` on top of `total`, without an
// intermediate sum that could wrap (a request of SIZE_MAX never fits).
bool fits(uint64_t total, uint64_t bytes, uint64_t limit) { return bytes <= limit && total <= limit - bytes; }

// The fixed header every version of the file starts with.
struct Header {
  uint64_t magic;
  uint32_t version;
  uint32_t device_count;
  uint64_t layout_size;
};
}  // namespace

// Plain fields: every write happens under the lock and is a single aligned
// 8-byte (or 4-byte) store, so a process killed between two stores leaves
// each field either old or new, never torn.
struct SliceRegion::Layout {
  struct Slot {
    int32_t pid;
    uint32_t host_pid;  // the pid NVML reports for it (another pid namespace); 0 = not known
    uint64_t start_time;
    uint64_t allocated[kRegionDevices];
    uint64_t footprint[kRegionDevices];
  };
  Header header;
  pthread_mutex_t mutex;
  DeviceUuid uuids[kRegionDevices];
  Slot slots[kRegionSlots];
};

// The robust lock: a previous owner's death is repaired, not waited on.
class SliceRegion::Guard {
 public:
  explicit Guard(SliceRegion& r) : region_(r) {
    const int rc = pthread_mutex_lock(&r.layout_->mutex);
    if (rc == EOWNERDEAD) {
      // The owner died inside a critical section; its slot is stale and
      // every other field is whole (see Layout), so reclaim and go on.
      r.reclaim_dead_locked();
      pthread_mutex_consistent(&r.layout_->mutex);
    } else if (rc != 0) {
      throw RegionError(r.path_ + ": cannot take the accounting lock: " + std::strerror(rc));
    }
  }
  ~Guard() { pthread_mutex_unlock(&region_.layout_->mutex); }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  SliceRegion& region_;
};

SliceRegion::SliceRegion(const std::string& path) : path_(path), pid_(static_cast<int>(getpid())) {
  // A new file is created readable by all but writable by no one outside
  // the owner and group (as the umask allows); an existing file keeps the
  // mode its owner gave it: the shim never widens permissions.
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0664);
  if (fd < 0 && errno == EEXIST) fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw RegionError(path + ": cannot open the shared accounting file: " + errno_text());
  auto fail = [&](const std::string& why) {
    close(fd);
    throw RegionError(path + ": " + why);
  };
  // Creation is serialised by flock, which the kernel releases if the
  // creator dies half-way; a half-made file has no magic and is made again.
  if (flock(fd, LOCK_EX) != 0) fail("cannot lock the shared accounting file: " + errno_text());
  struct stat st {};
  if (fstat(fd, &st) != 0) fail("cannot read the shared accounting file's size: " + errno_text());
  const auto size = sizeof(Layout);
  Header header{};
  const bool empty = st.st_size == 0;
  if (!empty && pread(fd, &header, sizeof header, 0) != static_cast<ssize_t>(sizeof header))
    fail("not a gpuslice accounting file (too short); refusing to overwrite it");
  // Ours but never finished: the creator died between sizing the file and
  // writing the magic, which it writes last.
  const bool half_made = !empty && header.magic == 0 && static_cast<size_t>(st.st_size) == size;
  const bool fresh = empty || half_made;
  if (!fresh && header.magic != kMagic)
    fail("not a gpuslice accounting file (another program's, HAMi-core's cache?); refusing to overwrite it");
  if (!fresh &&
      (header.version != kVersion || header.layout_size != size || static_cast<size_t>(st.st_size) < size))
    fail("written by another gpuslice version (layout " + std::to_string(header.version) +
         "); remove it when no process uses it");
  if (fresh && ftruncate(fd, static_cast<off_t>(size)) != 0)
    fail("cannot size the shared accounting file: " + errno_text());
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) fail("cannot map the shared accounting file: " + errno_text());
  layout_ = static_cast<Layout*>(p);
  if (fresh) {
    std::memset(static_cast<void*>(layout_), 0, size);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&layout_->mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    layout_->header.version = kVersion;
    layout_->header.layout_size = size;
    __atomic_store_n(&layout_->header.magic, kMagic, __ATOMIC_RELEASE);  // last: the file is whole
  }
  flock(fd, LOCK_UN);
  close(fd);  // the mapping stays
}

SliceRegion::~SliceRegion() {
  if (layout_) munmap(layout_, sizeof(Layout));
}

int SliceRegion::device(const DeviceUuid& uuid) {
  Guard g(*this);
  for (uint32_t i = 0; i < layout_->header.device_count; ++i)
    if (layout_->uuids[i] == uuid) return static_cast<int>(i);
  if (layout_->header.device_count >= kRegionDevices) return -1;
  const uint32_t i = layout_->header.device_count;
  layout_->uuids[i] = uuid;
  layout_->header.device_count = i + 1;  // after the uuid: a death in between leaves the table as it was
  return static_cast<int>(i);
}

int SliceRegion::own_slot_locked() {
  if (slot_ >= 0 && layout_->slots[slot_].pid == pid_) return slot_;
  reclaim_dead_locked();
  const ProcessId self = self_process();
  for (int i = 0; i < kRegionSlots; ++i) {
    auto& s = layout_->slots[i];
    if (s.pid != 0) continue;
    std::memset(s.allocated, 0, sizeof s.allocated);
    std::memset(s.footprint, 0, sizeof s.footprint);
    s.start_time = self.start_time;
    s.host_pid = host_pid_;
    s.pid = pid_;  // last: the slot is claimed only once it is clean
    slot_ = i;
    return i;
  }
  throw RegionError(path_ + ": all " + std::to_string(kRegionSlots) + " process slots are in use");
}

void SliceRegion::reclaim_dead_locked() {
  for (auto& s : layout_->slots) {
    if (s.pid == 0 || s.pid == pid_) continue;
    if (is_alive(ProcessId{s.pid, s.start_time})) continue;
    std::memset(s.allocated, 0, sizeof s.allocated);
    std::memset(s.footprint, 0, sizeof s.footprint);
    s.host_pid = 0;
    s.pid = 0;
  }
}

uint64_t SliceRegion::total_locked(int device) const {
  uint64_t total = 0;
  for (const auto& s : layout_->slots)
    if (s.pid != 0) total = saturating_add(total, saturating_add(s.allocated[device], s.footprint[device]));
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
  auto& own = layout_->slots[s].allocated[device];
  own = saturating_add(own, bytes);
  return {true, saturating_add(total, bytes)};
}

void SliceRegion::release(int device, uint64_t bytes) {
  Guard g(*this);
  auto& used = layout_->slots[own_slot_locked()].allocated[device];
  used -= std::min(used, bytes);
}

void SliceRegion::set_footprint(int device, uint64_t bytes) {
  Guard g(*this);
  layout_->slots[own_slot_locked()].footprint[device] = bytes;
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
  for (const auto& s : layout_->slots)
    if (s.pid != 0)
      out.push_back(
          {s.pid, static_cast<int>(s.host_pid), saturating_add(s.allocated[device], s.footprint[device])});
  return out;
}

uint64_t SliceRegion::own_allocated(int device) const {
  if (slot_ < 0) return 0;
  const auto& s = layout_->slots[slot_];
  return s.pid == pid_ ? __atomic_load_n(&s.allocated[device], __ATOMIC_RELAXED) : 0;
}

void SliceRegion::set_host_pid(int host_pid) {
  Guard g(*this);
  host_pid_ = static_cast<uint32_t>(host_pid);
  layout_->slots[own_slot_locked()].host_pid = host_pid_;
}

void SliceRegion::join() {
  Guard g(*this);
  own_slot_locked();
}

void SliceRegion::forget_slot_after_fork() {
  slot_ = -1;
  host_pid_ = 0;  // the child has a host pid of its own, found when it makes a context
  pid_ = static_cast<int>(getpid());
}

void SliceRegion::leave() {
  if (slot_ < 0) return;
  Guard g(*this);
  auto& s = layout_->slots[slot_];
  if (s.pid == pid_) {
    std::memset(s.allocated, 0, sizeof s.allocated);
    std::memset(s.footprint, 0, sizeof s.footprint);
    s.host_pid = 0;
    s.pid = 0;
  }
  slot_ = -1;
}

void SliceRegion::lock_forever_for_test() {
  pthread_mutex_lock(&layout_->mutex);
  own_slot_locked();
  for (;;) pause();
}

}  // namespace gpuslice::realgpu
