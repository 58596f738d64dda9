#include "shared_state.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "ledger.hpp"
#include "timeline.hpp"

namespace gpuslice::fake {

namespace {

constexpr std::uint64_t kMagic = 0x6b61664563696c73ULL;  // "slicEfak"
constexpr std::uint32_t kLayoutVersion = 1;

static_assert(std::is_trivially_copyable_v<StateLayout>);
static_assert(std::is_standard_layout_v<StateLayout>);

std::string errno_text(const char* what, const std::string& path) {
  return std::string(what) + " " + path + ": " + std::strerror(errno);
}

// Bounded: the file may be stale or foreign.
std::string_view stored_fleet(const StateLayout& layout) {
  return {layout.fleet_text, ::strnlen(layout.fleet_text, kMaxFleetText)};
}

bool initialised_for(const StateLayout& layout, std::string_view fleet_text) {
  return layout.magic == kMagic && layout.layout_version == kLayoutVersion &&
         layout.layout_size == sizeof(StateLayout) && stored_fleet(layout) == fleet_text;
}

bool initialise(StateLayout& layout, bool fresh, std::string_view fleet_text,
                std::span<const DeviceSpec> devices) {
  // Only reached under flock with no initialised layout: nobody else is
  // using the mutex, so it may be (re)made from scratch. A file this call
  // just extended reads as zeros already; clearing it would only make the
  // sparse file (mostly an unused interval ring) take real disk space.
  if (!fresh) std::memset(static_cast<void*>(&layout), 0, sizeof layout);
  pthread_mutexattr_t attr;
  if (pthread_mutexattr_init(&attr) != 0) return false;
  bool ok = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) == 0 &&
            pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST) == 0 &&
            pthread_mutex_init(&layout.mutex, &attr) == 0;
  pthread_mutexattr_destroy(&attr);
  if (!ok) return false;
  layout.layout_version = kLayoutVersion;
  layout.layout_size = sizeof(StateLayout);
  layout.device_count = static_cast<std::uint32_t>(devices.size());
  std::memcpy(layout.fleet_text, fleet_text.data(), fleet_text.size());
  // Far from 0 so a zero or small integer is never a valid device pointer.
  layout.next_address = 0x7f0000000000ULL;
  for (std::size_t i = 0; i < devices.size(); ++i) layout.devices[i].total_bytes = devices[i].memory_bytes();
  __atomic_store_n(&layout.magic, kMagic, __ATOMIC_RELEASE);
  return true;
}

}  // namespace

std::string state_file_path(std::string_view dir, std::string_view fleet_text) {
  char name[64];
  std::snprintf(name, sizeof name, "gpuslice-fake-%016llx.state",
                static_cast<unsigned long long>(fnv1a64(fleet_text)));
  std::string path(dir);
  if (path.empty()) path = "/tmp";
  if (path.back() != '/') path += '/';
  return path + name;
}

std::unique_ptr<SharedState> SharedState::attach(std::string_view dir, std::string_view fleet_text,
                                                 std::span<const DeviceSpec> devices, std::string& error) {
  if (fleet_text.size() >= kMaxFleetText) {
    error = std::string(kFleetVariable) + " longer than " + std::to_string(kMaxFleetText - 1) + " characters";
    return nullptr;
  }
  const std::string path = state_file_path(dir, fleet_text);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    error = errno_text("cannot open state file", path);
    return nullptr;
  }
  auto fail = [&](const char* what) -> std::unique_ptr<SharedState> {
    error = errno_text(what, path);
    ::close(fd);  // also drops the flock
    return nullptr;
  };
  if (::flock(fd, LOCK_EX) != 0) return fail("cannot flock state file");
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail("cannot stat state file");
  // The file only ever grows to the one layout size; ftruncate leaves the
  // new part zero (and sparse).
  const bool fresh = st.st_size == 0;
  if (static_cast<std::uint64_t>(st.st_size) < sizeof(StateLayout) &&
      ::ftruncate(fd, sizeof(StateLayout)) != 0)
    return fail("cannot size state file");
  void* mapped = ::mmap(nullptr, sizeof(StateLayout), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) return fail("cannot map state file");
  auto* layout = static_cast<StateLayout*>(mapped);
  if (__atomic_load_n(&layout->magic, __ATOMIC_ACQUIRE) != kMagic || !initialised_for(*layout, fleet_text)) {
    // A hash collision between two fleets would land here with a live,
    // different fleet: refuse rather than wipe someone else's state.
    if (layout->magic == kMagic && layout->layout_version == kLayoutVersion &&
        layout->layout_size == sizeof(StateLayout) && stored_fleet(*layout) != fleet_text) {
      ::munmap(mapped, sizeof(StateLayout));
      ::close(fd);
      error =
          "state file " + path + " belongs to another fleet (\"" + std::string(stored_fleet(*layout)) + "\")";
      return nullptr;
    }
    if (!initialise(*layout, fresh, fleet_text, devices)) {
      ::munmap(mapped, sizeof(StateLayout));
      return fail("cannot initialise mutex in state file");
    }
  }
  ::flock(fd, LOCK_UN);
  return std::unique_ptr<SharedState>(new SharedState(path, fd, layout));
}

SharedState::~SharedState() {
  ::munmap(layout_, sizeof(StateLayout));
  ::close(fd_);
}

SharedState::Guard::Guard(SharedState& state) : layout_(state.layout_) {
  const int rc = pthread_mutex_lock(&layout_->mutex);
  if (rc == 0) {
    locked_ = true;
  } else if (rc == EOWNERDEAD) {
    // The holder died mid-update. A death can only leave the dead
    // process's own record half-changed (used memory is derived from the
    // records, so dropping it is the repair) or a launch half-recorded
    // (timeline::repair), so both together restore every invariant.
    pthread_mutex_consistent(&layout_->mutex);
    locked_ = true;
    ledger::reap_dead(*layout_);
    timeline::repair(*layout_);
  }
}

SharedState::Guard::~Guard() {
  if (locked_) pthread_mutex_unlock(&layout_->mutex);
}

}  // namespace gpuslice::fake
