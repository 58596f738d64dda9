// HAMi-core's node-side failures, as storms on one slice's file:
//  - a kill storm: processes allocating and freeing, SIGKILLed at random
//    moments (inside the lock too); HAMi-core then left every process of the
//    slice waiting ("Lock shrreg timeout", HAMi-core #86, HAMi #2500) and
//    stale slots counted (HAMi #2281);
//  - a start storm: hundreds of processes joining one slice at once (about a
//    minute with HAMi-core, HAMi #1662).
// Each prints its figures on stderr.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "gpuslice/realgpu/slice_region.hpp"
#include "hami_reader.hpp"

using namespace gpuslice::realgpu;
using gpuslice::realgpu::testing::HamiFile;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t MiB = 1ULL << 20;

double now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Scratch {
  std::string dir, file;
  Scratch() {
    char tmpl[] = "/tmp/gpuslice-storm-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    file = dir + "/slice.cache";
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// Memory shared with forked children (they may die at any instant, so they
// publish as they go).
template <class T>
T* shared_array(size_t n) {
  void* p = mmap(nullptr, sizeof(T) * n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  return new (p) T[n]();
}

// What the kernel says a process is doing: /proc/PID/stat's state, wchan and
// syscall (the call it is blocked in, with its arguments, or "running").
std::string proc_text(pid_t pid) {
  auto read = [&](const char* what) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/" + what);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
    return text.empty() ? std::string("?") : text;
  };
  std::string text = "stat: " + read("stat") + "; wchan: " + read("wchan") + "; syscall: " + read("syscall");
  // Waiting on a futex (202): its third argument is the value seen, whose
  // low 30 bits are a robust mutex's owner. Is that owner alive?
  std::istringstream call(read("syscall"));
  std::string number, address, op, value;
  if (call >> number >> address >> op >> value && number == "202") {
    const auto owner = static_cast<pid_t>(std::stoull(value, nullptr, 16) & 0x3fffffffULL);
    auto of_owner = [&](const char* what) {
      std::ifstream f("/proc/" + std::to_string(owner) + "/" + what);
      return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    };
    const std::string stat = of_owner("stat");
    text +=
        "; futex owner " + std::to_string(owner) + ": " +
        (stat.empty() ? "no such process"
                      : stat + "; its wchan: " + of_owner("wchan") + "; its syscall: " + of_owner("syscall"));
  }
  return text;
}

// Kills what a test forked when it ends, however it ends (a failed REQUIRE
// must not leave paused children holding the test's output open).
struct Reaper {
  std::vector<pid_t> pids;
  ~Reaper() {
    for (pid_t p : pids)
      if (p > 0) kill(p, SIGKILL);
    for (pid_t p : pids)
      if (p > 0) waitpid(p, nullptr, 0);
  }
};

RegionSetup one_card(uint64_t limit) {
  RegionSetup s;
  DeviceUuid u{};
  u.fill(0x42);
  s.devices = {u};
  s.memory_limits = {limit};
  return s;
}

}  // namespace

TEST_CASE(
    "kill storm: 8 processes, 500 SIGKILLs at random moments - totals match the living, no wait > 1 s") {
  constexpr int kWorkers = 8, kKills = 500;
  constexpr uint64_t kLimit = 256 * MiB;
  Scratch s;
  SliceRegion region(s.file, one_card(kLimit));
  struct Worker {
    std::atomic<uint64_t> held{0};
    std::atomic<int64_t> pid{0};
    std::atomic<double> max_wait{0};
    std::atomic<int> parked{0};
  };
  auto* w = shared_array<Worker>(kWorkers);
  auto* stop = shared_array<std::atomic<int>>(1);
  Reaper reaper;
  reaper.pids.assign(kWorkers, 0);
  auto spawn = [&](int i) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      SliceRegion mine(s.file);
      mine.join();  // every living worker has its slot, even one that never got to allocate
      std::mt19937_64 rng(static_cast<uint64_t>(getpid()));
      uint64_t held = 0;
      w[i].held = 0;
      while (stop->load() == 0) {
        const uint64_t bytes = (1 + rng() % 8) * MiB;
        if (rng() % 3 != 0 && mine.reserve(0, bytes, kLimit).granted) {
          held += bytes;
        } else {
          const uint64_t back = std::min(held, bytes * 2);
          mine.release(0, back);
          held -= back;
        }
        w[i].held = held;
        w[i].max_wait = std::max(w[i].max_wait.load(), mine.max_lock_wait());
      }
      w[i].parked = 1;
      pause();
      _exit(0);
    }
    w[i].pid = pid;
    reaper.pids[static_cast<size_t>(i)] = pid;
  };
  for (int i = 0; i < kWorkers; ++i) spawn(i);
  std::mt19937 rng(20261124);
  double storm_max_wait = 0;
  const double start = now();
  for (int k = 0; k < kKills; ++k) {
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
    const int i = static_cast<int>(rng() % kWorkers);
    kill(static_cast<pid_t>(w[i].pid.load()), SIGKILL);
    waitpid(static_cast<pid_t>(w[i].pid.load()), nullptr, 0);
    reaper.pids[static_cast<size_t>(i)] = 0;
    storm_max_wait = std::max(storm_max_wait, w[i].max_wait.load());
    w[i].max_wait = 0;
    spawn(i);
  }
  const double storm_seconds = now() - start;
  stop->store(1);
  for (int i = 0; i < kWorkers; ++i) {
    const double deadline = now() + 10;
    while (w[i].parked.load() == 0 && now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // A worker that never parks is stuck somewhere: say where (its state,
    // the kernel function it waits in, its system call) before failing.
    INFO("worker " << i << " (pid " << w[i].pid.load() << ") "
                   << proc_text(static_cast<pid_t>(w[i].pid.load())));
    REQUIRE(w[i].parked.load() == 1);
    storm_max_wait = std::max(storm_max_wait, w[i].max_wait.load());
  }
  uint64_t living = 0;
  for (int i = 0; i < kWorkers; ++i) living += w[i].held.load();
  const double before_view = now();
  const uint64_t total = region.used(0);
  const double view_seconds = now() - before_view;
  std::fprintf(stderr,
               "kill storm: %d SIGKILLs in %.2f s; longest lock wait %.4f s; living hold %llu MiB, region "
               "says %llu MiB; first view after the storm took %.4f s\n",
               kKills, storm_seconds, storm_max_wait, static_cast<unsigned long long>(living / MiB),
               static_cast<unsigned long long>(total / MiB), view_seconds);
  CHECK(total == living);
  CHECK(storm_max_wait < 1.0);
  CHECK(view_seconds < 1.0);
  // Slot by slot, as HAMi's monitor reads them: one live slot per living
  // worker, holding exactly what it says.
  const HamiFile f(s.file);
  const auto slots = f.live_slots();
  CHECK(slots.size() == static_cast<size_t>(kWorkers));
  for (int i = 0; i < kWorkers; ++i) {
    INFO("worker " << i);
    const auto it = std::find_if(slots.begin(), slots.end(),
                                 [&](const HamiFile::Slot& sl) { return sl.pid == w[i].pid.load(); });
    REQUIRE(it != slots.end());
    CHECK(it->used[0].data == w[i].held.load());
    CHECK(it->used[0].total == w[i].held.load());
  }
  for (int i = 0; i < kWorkers; ++i) kill(static_cast<pid_t>(w[i].pid.load()), SIGKILL);
  for (int i = 0; i < kWorkers; ++i) waitpid(static_cast<pid_t>(w[i].pid.load()), nullptr, 0);
  reaper.pids.clear();
  CHECK(region.used(0) == 0);
  CHECK(HamiFile(s.file).live_slots().empty());
}

TEST_CASE("start storm: 256 processes joining one slice at once all initialise within 2 s") {
  constexpr int kProcesses = 256;
  Scratch s;
  const RegionSetup setup = one_card(64 * 1024 * MiB);
  auto* done = shared_array<std::atomic<double>>(kProcesses);
  auto* released_at = shared_array<std::atomic<double>>(1);
  int go[2], hold[2];
  REQUIRE(pipe(go) == 0);
  REQUIRE(pipe(hold) == 0);
  Reaper children;
  for (int i = 0; i < kProcesses; ++i) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(go[1]);
      close(hold[1]);
      char c;
      (void)!read(go[0], &c, 1);  // EOF when the parent lets all go
      SliceRegion mine(s.file, setup);
      const bool ok = mine.reserve(0, MiB, setup.memory_limits[0]).granted;
      done[i] = ok ? now() - released_at->load() : -1;
      (void)!read(hold[0], &c, 1);  // stay alive until the parent has looked
      _exit(0);
    }
    children.pids.push_back(pid);
  }
  close(go[0]);
  close(hold[0]);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // all are waiting
  released_at->store(now());
  close(go[1]);
  const double deadline = now() + 30;
  auto all_done = [&] {
    for (int i = 0; i < kProcesses; ++i)
      if (done[i].load() == 0) return false;
    return true;
  };
  while (!all_done() && now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::vector<double> times;
  for (int i = 0; i < kProcesses; ++i) times.push_back(done[i].load());
  std::sort(times.begin(), times.end());
  const HamiFile f(s.file);
  std::fprintf(
      stderr, "start storm: %d processes; initialised after %.3f s (median), %.3f s (last); %zu live slots\n",
      kProcesses, times[kProcesses / 2], times.back(), f.live_slots().size());
  CHECK(times.front() > 0);  // none failed (-1) or missing (0)
  CHECK(times.back() <= 2.0);
  CHECK(f.live_slots().size() == static_cast<size_t>(kProcesses));
  CHECK(f.proc_num() == kProcesses);
  close(hold[1]);
  for (pid_t c : children.pids) waitpid(c, nullptr, 0);
  children.pids.clear();
}
