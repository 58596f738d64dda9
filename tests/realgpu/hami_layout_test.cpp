// The accounting file is HAMi-core's layout 1.2, byte for byte: read back
// from HAMi's offsets (hami_reader.hpp), never through the shim's struct.
// Also: which files are refused, taken over or shared, and the semaphore
// that keeps a libvgpu.so process out of a gpuslice file.
#include <fcntl.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>

#include "gpuslice/realgpu/file_users.hpp"
#include "gpuslice/realgpu/process_identity.hpp"
#include "gpuslice/realgpu/region_file.hpp"
#include "gpuslice/realgpu/slice_region.hpp"
#include "hami_reader.hpp"

using namespace gpuslice::realgpu;
using gpuslice::realgpu::testing::HamiFile;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t MiB = 1ULL << 20;

struct Scratch {
  std::string dir, file;
  Scratch() {
    char tmpl[] = "/tmp/gpuslice-layout-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    file = dir + "/0f1e2d3c.cache";
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

DeviceUuid uuid(unsigned char seed) {
  DeviceUuid u{};
  u.fill(seed);
  return u;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A file as libvgpu.so leaves it: HAMi's magic and version, one slot of a
// process `pid` (status 1), no gpuslice control slot.
void write_hami_core_file(const std::string& path, int32_t pid) {
  std::vector<unsigned char> b(2008953, 0);
  auto put = [&](size_t at, auto v) { std::memcpy(b.data() + at, &v, sizeof v); };
  put(0, int32_t{19920718});
  put(4, uint32_t{1});
  put(8, uint32_t{2});
  put(56, uint64_t{1});
  std::memcpy(b.data() + 64, "GPU-00000000-0000-0000-0000-000000000001", 40);
  put(1600, uint64_t{1000 * MiB});
  put(1728, uint64_t{100});
  put(1856, pid);
  put(1856 + 8 + 32, uint64_t{300 * MiB});  // used[0].total
  put(1856 + 1928, int32_t{1});
  put(2008896, int32_t{1});
  put(2008900, int32_t{1});
  put(2008904, int32_t{2});
  put(2008908, int32_t{1});
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<long>(b.size()));
}

}  // namespace

TEST_CASE("a new file is HAMi-core's layout 1.2: header, devices, limits, feedback fields") {
  Scratch s;
  RegionSetup setup;
  setup.devices = {uuid(0xa1), uuid(0xb2)};
  setup.memory_limits = {3000 * MiB, 5000 * MiB};
  setup.sm_limits = {30, 0};
  setup.priority = 0;
  { SliceRegion region(s.file, setup); }
  struct stat st {};
  REQUIRE(stat(s.file.c_str(), &st) == 0);
  CHECK(st.st_size == 2008953);  // sizeof(shared_region_t) + 1, as HAMi-core makes it
  const HamiFile f(s.file);
  CHECK(f.magic() == 19920718);
  CHECK(f.major() == 1);
  CHECK(f.minor() == 2);
  CHECK(f.sm_init_flag() == 0);
  CHECK(f.owner_pid() == 0);
  CHECK(f.device_num() == 2);
  CHECK(f.uuid(0) == uuid_text(uuid(0xa1)));
  CHECK(f.uuid(1) == uuid_text(uuid(0xb2)));
  CHECK(f.uuid(2).empty());
  CHECK(f.limit(0) == 3000 * MiB);
  CHECK(f.limit(1) == 5000 * MiB);
  CHECK(f.sm_limit(0) == 30);
  CHECK(f.sm_limit(1) == 100);  // HAMi-core's "no compute limit"
  CHECK(f.priority() == 0);
  CHECK(f.recent_kernel() == 2);
  CHECK(f.utilization_switch() == -1);  // no monitor has written it yet
  CHECK(f.proc_num() == 0);
  CHECK(f.last_kernel_time() == 0);
}

TEST_CASE("each process's slot: pid, hostpid, context/module/data/total and status, as HAMi reads them") {
  Scratch s;
  RegionSetup setup;
  setup.devices = {uuid(1), uuid(2)};
  setup.memory_limits = {4000 * MiB, 4000 * MiB};
  SliceRegion region(s.file, setup);
  REQUIRE(region.device(uuid(2)) == 1);
  region.set_footprint(1, 300 * MiB, Footprint::Context);
  region.set_footprint(1, 300 * MiB + 40 * MiB, Footprint::Module);  // a module load measured 40 MiB more
  REQUIRE(region.reserve(1, 1000 * MiB, 4000 * MiB).granted);
  region.set_host_pid(4242);
  region.set_nvml_usage(1, 1340 * MiB);
  int ready[2], go[2];
  REQUIRE(pipe(ready) == 0);
  REQUIRE(pipe(go) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    SliceRegion mine(s.file);
    const bool ok = mine.reserve(0, 200 * MiB, 4000 * MiB).granted;
    char c = ok ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    (void)!read(go[0], &c, 1);
    _exit(0);
  }
  char c = 0;
  REQUIRE(read(ready[0], &c, 1) == 1);
  REQUIRE(c == 'y');
  {
    const HamiFile f(s.file);
    CHECK(f.proc_num() == 2);
    const auto slots = f.live_slots();
    REQUIRE(slots.size() == 2);
    const auto& a = slots[0];
    CHECK(a.pid == getpid());
    CHECK(a.hostpid == 4242);
    CHECK(a.status == 1);
    CHECK(a.seqlock == 0);
    CHECK(a.used[1].context == 300 * MiB);
    CHECK(a.used[1].module == 40 * MiB);
    CHECK(a.used[1].data == 1000 * MiB);
    CHECK(a.used[1].total == 1340 * MiB);
    CHECK(a.used[0].total == 0);
    CHECK(a.monitorused[1] == 1340 * MiB);
    const auto& b = slots[1];
    CHECK(b.pid == child);
    CHECK(b.hostpid == 0);  // not found yet: HAMi-core leaves 0 too
    CHECK(b.used[0].data == 200 * MiB);
    CHECK(b.used[0].total == 200 * MiB);
  }
  (void)!write(go[1], &c, 1);
  int status = 0;
  waitpid(child, &status, 0);
  // The child exited without leaving (as after SIGKILL): the next look
  // returns its slot, marked exited so HAMi's monitor stops counting it.
  CHECK(region.used(0) == 0);
  const HamiFile f(s.file);
  CHECK(f.proc_num() == 1);
  CHECK(f.slot(1).status == 0);
  CHECK(f.slot(1).pid == 0);
  CHECK(f.live_slots().size() == 1);
}

TEST_CASE("the monitor's reader sums what HAMi sums") {
  Scratch s;
  RegionSetup setup;
  setup.devices = {uuid(3)};
  setup.memory_limits = {2000 * MiB};
  SliceRegion region(s.file, setup);
  region.set_footprint(0, 100 * MiB);
  REQUIRE(region.reserve(0, 500 * MiB, 2000 * MiB).granted);
  region.set_sm_util(0, 37);
  region.mark_launch(1'700'000'000);
  const RegionFile r(s.file, false);
  CHECK(r.written_by_gpuslice());
  CHECK(r.device_count() == 1);
  CHECK(r.uuid(0) == uuid_text(uuid(3)));
  CHECK(r.memory_limit(0) == 2000 * MiB);
  const auto m = r.memory(0);
  CHECK(m.context == 100 * MiB);
  CHECK(m.buffer == 500 * MiB);
  CHECK(m.total == 600 * MiB);
  CHECK(r.sm_util(0) == 37);
  CHECK(r.last_kernel_time() == 1'700'000'000);
  CHECK(r.recent_kernel() == 2);
  REQUIRE(r.processes().size() == 1);
  CHECK(r.processes()[0].pid == getpid());
}

TEST_CASE("a launch marks the file active and never overrules a monitor's block") {
  Scratch s;
  SliceRegion region(s.file);
  RegionFile monitor(s.file, true);
  CHECK(monitor.replace_recent_kernel(2, 0));
  region.mark_launch(100);
  CHECK(monitor.recent_kernel() == 2);
  CHECK(!region.blocked_by_priority());
  CHECK(monitor.replace_recent_kernel(2, -1));
  region.mark_launch(101);
  CHECK(monitor.recent_kernel() == -1);
  CHECK(region.blocked_by_priority());
  CHECK(monitor.last_kernel_time() == 101);
  region.mark_launch(50);  // an older time never moves it back
  CHECK(monitor.last_kernel_time() == 101);
  monitor.set_utilization_switch(1);
  CHECK(region.utilization_switch() == 1);
}

TEST_CASE("libvgpu.so waits at HAMi-core's semaphore in a gpuslice file, and it holds nothing") {
  Scratch s;
  { SliceRegion region(s.file); }
  const int fd = open(s.file.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  void* p = mmap(nullptr, 2008952, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  REQUIRE(p != MAP_FAILED);
  auto* sem = reinterpret_cast<sem_t*>(static_cast<char*>(p) + 24);
  int value = -1;
  REQUIRE(sem_getvalue(sem, &value) == 0);
  CHECK(value == 0);
  CHECK(sem_trywait(sem) != 0);
  CHECK(errno == EAGAIN);
  // The owner HAMi-core would check is 0, so it does not "recover" the
  // lock from a dead owner either: it waits, then gives up.
  CHECK(*reinterpret_cast<uint64_t*>(static_cast<char*>(p) + 16) == 0);
  munmap(p, 2008952);
}

TEST_CASE("a HAMi-core file is refused while a live libvgpu.so process maps it, taken over after") {
  Scratch s;
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  const pid_t user = fork();
  REQUIRE(user >= 0);
  if (user == 0) {
    write_hami_core_file(s.file, getpid());
    const int fd = open(s.file.c_str(), O_RDWR);
    void* p = mmap(nullptr, 2008952, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    char c = p == MAP_FAILED ? 'n' : 'y';
    (void)!write(ready[1], &c, 1);
    pause();
    _exit(0);
  }
  char c = 0;
  REQUIRE(read(ready[0], &c, 1) == 1);
  REQUIRE(c == 'y');
  const std::string before = read_all(s.file);
  try {
    SliceRegion region(s.file);
    FAIL("shared a file with a live libvgpu.so process");
  } catch (const RegionError& e) {
    CHECK(std::string(e.what()).find("libvgpu.so (HAMi-core) process, pid " + std::to_string(user)) !=
          std::string::npos);
  }
  CHECK(read_all(s.file) == before);  // untouched
  kill(user, SIGKILL);
  waitpid(user, nullptr, 0);
  // Its container restarted with the gpuslice shim: the file is taken over.
  RegionSetup setup;
  setup.devices = {uuid(9)};
  setup.memory_limits = {800 * MiB};
  SliceRegion region(s.file, setup);
  CHECK(region.used(0) == 0);  // the dead process's 300 MiB are not carried over
  CHECK(region.reserve(0, 800 * MiB, region.memory_limit(0)).granted);
  const HamiFile f(s.file);
  CHECK(f.magic() == 19920718);
  CHECK(f.uuid(0) == uuid_text(uuid(9)));
  CHECK(f.limit(0) == 800 * MiB);
  CHECK(f.live_slots().size() == 1);
}

TEST_CASE("files of another layout or another program are refused and left as they were") {
  Scratch s;
  SECTION("HAMi-core 0.x: the magic, a smaller layout") {
    std::vector<unsigned char> b(1197897, 0);  // any size but layout 1.2's
    const int32_t magic = 19920718;
    std::memcpy(b.data(), &magic, 4);
    std::ofstream(s.file, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<long>(b.size()));
  }
  SECTION("layout 1.2's size and magic, version 2.0") {
    write_hami_core_file(s.file, 0);
    std::fstream f(s.file, std::ios::in | std::ios::out | std::ios::binary);
    const uint32_t two = 2;
    f.seekp(4);
    f.write(reinterpret_cast<const char*>(&two), 4);
  }
  SECTION("garbage of layout 1.2's size") {
    std::ofstream f(s.file, std::ios::binary);
    for (size_t i = 0; i < 2008953; ++i) f.put(static_cast<char>(i * 7 + 1));
  }
  SECTION("a gpuslice control slot of another version") {
    { SliceRegion region(s.file); }
    std::fstream f(s.file, std::ios::in | std::ios::out | std::ios::binary);
    const uint32_t other = 7;
    f.seekp(1856 + 1023 * 1960 + 16);
    f.write(reinterpret_cast<const char*>(&other), 4);
  }
  chmod(s.file.c_str(), 0640);
  const std::string before = read_all(s.file);
  CHECK_THROWS_AS(SliceRegion(s.file), RegionError);
  CHECK(read_all(s.file) == before);
  struct stat st {};
  REQUIRE(stat(s.file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
}

TEST_CASE("a process using the file holds it: the monitor can tell a live container from a dead one") {
  Scratch s;
  auto region = std::make_unique<SliceRegion>(s.file);
  CHECK(file_locked_by_user(s.file));
  region.reset();
  CHECK_FALSE(file_locked_by_user(s.file));
}
