// The shared accounting under real processes: fork, race, SIGKILL.
#include "gpuslice/realgpu/slice_region.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace gpuslice::realgpu;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t MiB = 1ULL << 20;

// A region file in a folder of its own, removed when the test ends.
struct FreshPath {
  std::string dir;
  std::string file;
  FreshPath() {
    char tmpl[] = "/tmp/gpuslice-region-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    file = dir + "/slice.cache";
  }
  ~FreshPath() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  operator const std::string&() const { return file; }
};

DeviceUuid uuid(unsigned char seed) {
  DeviceUuid u{};
  u.fill(seed);
  return u;
}

// Forks a child running `body`, which must end in _exit.
template <class Body>
pid_t spawn(Body body) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    body();
    _exit(0);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("check and reserve: within the limit granted, past it refused with the total needed") {
  const FreshPath path;
  SliceRegion region(path);
  const int dev = region.device(uuid(1));
  CHECK(region.reserve(dev, 3000 * MiB, 4000 * MiB).granted);
  const auto refused = region.reserve(dev, 1001 * MiB, 4000 * MiB);
  CHECK_FALSE(refused.granted);
  CHECK(refused.needed == 4001 * MiB);
  CHECK(region.reserve(dev, 1000 * MiB, 4000 * MiB).granted);  // exactly at the cap
  CHECK(region.used(dev) == 4000 * MiB);
  region.release(dev, 4000 * MiB);
  CHECK(region.used(dev) == 0);
  CHECK(region.reserve(dev, 1ULL << 40, 0).granted);  // 0 = no limit
}

TEST_CASE("devices are keyed by UUID, the same in every process") {
  const FreshPath path;
  SliceRegion region(path);
  CHECK(region.device(uuid(7)) == 0);
  CHECK(region.device(uuid(9)) == 1);
  const pid_t child = spawn([&] {
    SliceRegion other(path);
    _exit(other.device(uuid(9)) == 1 && other.device(uuid(7)) == 0 ? 0 : 1);
  });
  CHECK(wait_exit(child) == 0);
}

TEST_CASE("footprints count toward the slice - the view sums every live process") {
  const FreshPath path;
  SliceRegion region(path);
  const int dev = region.device(uuid(1));
  region.set_footprint(dev, 300 * MiB);
  CHECK(region.reserve(dev, 3700 * MiB, 4000 * MiB).granted);
  CHECK_FALSE(region.reserve(dev, 1, 4000 * MiB).granted);
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  const pid_t child = spawn([&] {
    SliceRegion other(path);
    other.join();
    const bool refused = !other.reserve(dev, MiB, 4000 * MiB).granted;
    char c = refused ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    pause();
  });
  char c = 0;
  REQUIRE(read(ready[0], &c, 1) == 1);
  CHECK(c == 'y');
  CHECK(region.live_slots(dev).size() == 2);
  kill(child, SIGKILL);
  wait_exit(child);
  CHECK(region.live_slots(dev).size() == 1);
}

TEST_CASE("N processes racing to allocate never pass the cap together") {
  const FreshPath path;
  SliceRegion region(path);
  const int dev = region.device(uuid(1));
  constexpr int kProcesses = 8;
  constexpr uint64_t kLimit = 1000 * MiB, kChunk = 3 * MiB;
  int results[2];
  REQUIRE(pipe(results) == 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p)
    children.push_back(spawn([&] {
      SliceRegion mine(path);
      uint64_t granted = 0;
      while (mine.reserve(dev, kChunk, kLimit).granted) granted += kChunk;
      (void)!write(results[1], &granted, sizeof granted);
      pause();  // hold it until the parent has looked
    }));
  uint64_t total = 0;
  for (int p = 0; p < kProcesses; ++p) {
    uint64_t g = 0;
    REQUIRE(read(results[0], &g, sizeof g) == sizeof g);
    total += g;
  }
  CHECK(total <= kLimit);
  CHECK(total > kLimit - kChunk);  // and nothing was refused that fitted
  CHECK(region.used(dev) == total);
  for (pid_t c : children) kill(c, SIGKILL);
  for (pid_t c : children) wait_exit(c);
  CHECK(region.used(dev) == 0);  // all of it returned
}

TEST_CASE("a process SIGKILLed while holding the lock stalls nobody and leaves nothing behind") {
  const FreshPath path;
  SliceRegion region(path);
  const int dev = region.device(uuid(1));
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  const pid_t child = spawn([&] {
    SliceRegion mine(path);
    mine.reserve(dev, 900 * MiB, 1000 * MiB);
    char c = 'r';
    (void)!write(ready[1], &c, 1);
    mine.lock_forever_for_test();
  });
  char c = 0;
  REQUIRE(read(ready[0], &c, 1) == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // it now holds the lock
  kill(child, SIGKILL);
  wait_exit(child);
  const auto start = std::chrono::steady_clock::now();
  CHECK(region.reserve(dev, 1000 * MiB, 1000 * MiB).granted);  // its 900 MiB came back
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  CHECK(region.used(dev) == 1000 * MiB);
}

TEST_CASE("SIGKILL at random points during allocation: the slice always recovers in full") {
  const FreshPath path;
  SliceRegion region(path);
  const int dev = region.device(uuid(1));
  srand(12345);
  for (int round = 0; round < 20; ++round) {
    const pid_t child = spawn([&] {
      SliceRegion mine(path);
      for (;;) {
        if (mine.reserve(dev, MiB, 64 * MiB).granted)
          mine.release(dev, MiB / 2);
        else
          mine.release(dev, 8 * MiB);
      }
    });
    std::this_thread::sleep_for(std::chrono::microseconds(200 + rand() % 5000));
    kill(child, SIGKILL);
    wait_exit(child);
    CHECK(region.used(dev) == 0);
  }
  CHECK(region.reserve(dev, 64 * MiB, 64 * MiB).granted);
}

TEST_CASE("a forked child is a process of its own in the slice") {
  const FreshPath path;
  SliceRegion region(path);
  const int dev = region.device(uuid(1));
  CHECK(region.reserve(dev, 100 * MiB, 0).granted);
  const pid_t child = spawn([&] {
    region.forget_slot_after_fork();
    const bool ok = region.reserve(dev, 50 * MiB, 0).granted && region.own_allocated(dev) == 50 * MiB &&
                    region.used(dev) == 150 * MiB;
    region.leave();
    _exit(ok ? 0 : 1);
  });
  CHECK(wait_exit(child) == 0);
  CHECK(region.used(dev) == 100 * MiB);
  CHECK(region.own_allocated(dev) == 100 * MiB);
}

TEST_CASE("a file that is not a region of this version is refused, naming it") {
  const FreshPath path;
  { SliceRegion region(path); }
  // Same magic, other version: another build of the shim is using it.
  std::fstream f(path.file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(8);
  const uint32_t other = 99;
  f.write(reinterpret_cast<const char*>(&other), sizeof other);
  f.close();
  try {
    SliceRegion region(path);
    FAIL("accepted");
  } catch (const RegionError& e) {
    CHECK(std::string(e.what()).find(path.file) != std::string::npos);
  }
  CHECK_THROWS_AS(SliceRegion("/nonexistent-dir/x.cache"), RegionError);
}

TEST_CASE("sizes near 2^64 cannot wrap the check, and a refusal never empties the slot") {
  const FreshPath path;
  SliceRegion region(path);
  const int d = region.device(uuid(1));
  const uint64_t limit = 1000 * MiB;
  REQUIRE(region.reserve(d, 900 * MiB, limit).granted);
  for (uint64_t bytes :
       std::initializer_list<uint64_t>{UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - 900 * MiB + 1, 1ULL << 63,
                                       limit + 1, limit - 900 * MiB + 1}) {
    INFO(bytes);
    const auto r = region.reserve(d, bytes, limit);
    CHECK_FALSE(r.granted);
    CHECK(r.needed >= limit);  // saturated, never a small wrapped number
    CHECK(region.used(d) == 900 * MiB);
  }
  CHECK(region.reserve(d, 100 * MiB, limit).granted);  // exactly the cap: still allowed
  CHECK_FALSE(region.reserve(d, 1, limit).granted);
}

TEST_CASE("a file of another program is refused and left as it was: contents and permissions") {
  const FreshPath path;
  const std::string text = "HAMi-core's cache or anything else\n";
  {
    std::ofstream f(path.file);
    f << text;
  }
  chmod(path.file.c_str(), 0600);
  try {
    SliceRegion region(path);
    FAIL("accepted");
  } catch (const RegionError& e) {
    CHECK(std::string(e.what()).find("not a gpuslice accounting file") != std::string::npos);
  }
  std::ifstream in(path.file);
  const std::string after((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(after == text);
  struct stat st {};
  REQUIRE(stat(path.file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("a new region file is not world-writable - an existing one keeps its mode") {
  const FreshPath path;
  { SliceRegion region(path); }
  struct stat st {};
  REQUIRE(stat(path.file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0002) == 0);
  chmod(path.file.c_str(), 0600);
  { SliceRegion region(path); }
  REQUIRE(stat(path.file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("each slot records its process's host pid for the compute limiter") {
  const FreshPath path;
  SliceRegion region(path);
  const int d = region.device(uuid(1));
  region.set_host_pid(123456);
  const auto slots = region.live_slots(d);
  REQUIRE(slots.size() == 1);
  CHECK(slots[0].pid == static_cast<int>(getpid()));
  CHECK(slots[0].host_pid == 123456);
}
