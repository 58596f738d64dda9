#include "compute_limiter.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gpuslice/realgpu/clock.hpp"
#include "gpuslice/realgpu/hami_layout.hpp"
#include "gpuslice/realgpu/share_controller.hpp"
#include "runtime.hpp"

namespace gpuslice::shim {

namespace {

// Seconds since the epoch, as HAMi-core stamps last_kernel_time (coarse:
// read on every launch).
uint64_t epoch_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<uint64_t>(ts.tv_sec);
}

int period_ms() {
  const char* v = std::getenv("GPUSLICE_LIMITER_PERIOD_MS");
  const int p = v ? std::atoi(v) : 0;
  return p >= 10 && p <= 5000 ? p : 100;
}

// One device's loop state.
struct DeviceLimiter {
  DeviceLimiter(int o, nvmlDevice_t n, double target) : ordinal(o), nvml(n), controller(target) {}
  int ordinal;
  nvmlDevice_t nvml;
  realgpu::ShareController controller;
  realgpu::LaunchGate gate;
  unsigned long long last_sample_us = 0;
  // NVML's sampling period, learnt from the gaps between sample time stamps
  // (200 ms on an H100 with driver 580; 1/6 s is NVML's usual figure).
  unsigned long long sample_period_us = 166'667;
  bool period_learnt = false;
  bool throttling = false;
  int holding = -1;  // under `default`: the last hold decision (-1 before the first), for the debug log
  // Launches since the start of the window the next measurement covers. The
  // loop looks every period_ms, NVML stamps a sample every 200 ms or so: a
  // look that finds no new sample keeps its launches for the next one (taking
  // them away halved the count, and a slice at 9% of a 30% cap looked as if it
  // did not use its allowance, so its rate was never raised).
  uint64_t window_launches = 0;
  // Launches issued so far, as seen at each of the loop's recent looks, on
  // both clocks NVML may stamp with (the real one: wall-clock microseconds;
  // the fake: monotonic). The first look reads from it how many launches ran
  // before NVML's newest stamp, so it can price a launch from the prelude at
  // once instead of waiting for a second sample (0.2 s more at full speed).
  struct Tick {
    unsigned long long monotonic_us, wall_us;
    uint64_t launches;
  };
  std::deque<Tick> ticks;
  uint64_t launches_total = 0;
};

unsigned long long clock_us(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<unsigned long long>(ts.tv_sec) * 1'000'000ULL +
         static_cast<unsigned long long>(ts.tv_nsec) / 1000ULL;
}

// Launches issued by the time NVML stamped `stamp`, interpolated between the
// loop's looks; nullopt when the stamp is on neither clock's recent past.
std::optional<uint64_t> launches_at(const std::deque<DeviceLimiter::Tick>& ticks, unsigned long long stamp) {
  if (ticks.empty()) return std::nullopt;
  for (const bool wall : {true, false}) {
    auto at = [wall](const DeviceLimiter::Tick& t) { return wall ? t.wall_us : t.monotonic_us; };
    const unsigned long long now = at(ticks.back());
    if (stamp > now || now - stamp > 2'000'000) continue;
    if (stamp <= at(ticks.front())) return ticks.front().launches;
    for (size_t i = 1; i < ticks.size(); ++i)
      if (stamp <= at(ticks[i])) {
        const double f = static_cast<double>(stamp - at(ticks[i - 1])) /
                         static_cast<double>(std::max(1ULL, at(ticks[i]) - at(ticks[i - 1])));
        return ticks[i - 1].launches +
               static_cast<uint64_t>(f * static_cast<double>(ticks[i].launches - ticks[i - 1].launches));
      }
    return ticks.back().launches;
  }
  return std::nullopt;
}

// What NVML says about the device since the last look.
struct Usage {
  bool measured = false;
  bool window_opened = false;  // the first look: measurements start at its newest stamp
  double prelude_seconds = 0, prelude_slice = 0, prelude_own = 0,
         prelude_others = 0;  // before that stamp, since this process started
  unsigned long long newest_stamp = 0;
  double seconds = 0, own = 0, slice = 0, others = 0;
  bool foreign_process = false;
  int listed_processes = -1;  // NVML's running compute processes (-1: it could not say)
};

}  // namespace

struct ComputeLimiter::Impl {
  enum State : int { Unknown = 0, Off = 1, On = 2 };
  std::atomic<int> state[realgpu::kMaxDevices] = {};
  std::unique_ptr<DeviceLimiter> devices[realgpu::kMaxDevices];
  std::mutex mutex;
  std::once_flag thread_once;
  bool any_limit = false;
  std::atomic<uint64_t> stamped_second{0};  // last_kernel_time is written at most once a second

  Impl() {
    const auto& env = Runtime::get().env();
    for (int i = 0; i < realgpu::kMaxDevices; ++i)
      any_limit = any_limit || (env.throttles(i) && env.core_policy != realgpu::CorePolicy::Disable);
  }

  // The monitor's side of a launch. A task held back by a higher priority
  // waits before it launches (HAMi-core sleeps 1 s between looks; 100 ms
  // here), then marks the file active.
  void feedback(realgpu::SliceRegion& region) {
    if (region.blocked_by_priority() && Runtime::get().env().core_policy != realgpu::CorePolicy::Disable) {
      auto& rt = Runtime::get();
      const auto ordinal = rt.current_ordinal();
      if (ordinal && rt.sm_limit(*ordinal) > 0)
        while (region.blocked_by_priority()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    region.mark_active();
    const uint64_t now = epoch_seconds();
    if (stamped_second.load(std::memory_order_relaxed) != now) {
      stamped_second.store(now, std::memory_order_relaxed);
      region.note_kernel_time(now);
    }
  }

  DeviceLimiter* device(int ordinal) {
    if (ordinal < 0 || ordinal >= realgpu::kMaxDevices) return nullptr;
    const int s = state[ordinal].load(std::memory_order_acquire);
    if (s == On) return devices[ordinal].get();
    if (s == Off) return nullptr;
    std::lock_guard lock(mutex);
    if (state[ordinal].load() == Unknown) setup(ordinal);
    return state[ordinal].load() == On ? devices[ordinal].get() : nullptr;
  }

  void setup(int ordinal) {
    auto& rt = Runtime::get();
    const int limit = rt.sm_limit(ordinal);
    if (limit == 0 || rt.env().core_policy == realgpu::CorePolicy::Disable) {
      state[ordinal] = Off;
      return;
    }
    nvmlDevice_t nvml = rt.nvml_device(ordinal);
    if (!nvml) {
      rt.log(Level::Error, "Device %d: NVML unavailable, CUDA_DEVICE_SM_LIMIT=%d cannot be enforced", ordinal,
             limit);
      state[ordinal] = Off;
      return;
    }
    // Be one of the slice's processes from the first launch on, so that
    // siblings do not take this process for a foreign tenant.
    if (auto* region = rt.region()) region->join();
    devices[ordinal] = std::make_unique<DeviceLimiter>(ordinal, nvml, limit / 100.0);
    state[ordinal].store(On, std::memory_order_release);
    std::call_once(thread_once, [this] { std::thread([this] { loop(); }).detach(); });
  }

  // The smallest gap between distinct sample time stamps is the sampling
  // period (consecutive periods of one busy process are one period apart).
  static void learn_period(DeviceLimiter& d, std::vector<unsigned long long>& stamps) {
    std::sort(stamps.begin(), stamps.end());
    stamps.erase(std::unique(stamps.begin(), stamps.end()), stamps.end());
    unsigned long long previous = d.last_sample_us;
    for (const unsigned long long stamp : stamps) {
      const unsigned long long gap = previous != 0 ? stamp - previous : 0;
      if (gap >= 10'000 && gap <= 1'000'000 && (!d.period_learnt || gap < d.sample_period_us)) {
        d.sample_period_us = gap;
        d.period_learnt = true;
      }
      previous = stamp;
    }
  }

  Usage sample(DeviceLimiter& d) {
    auto& rt = Runtime::get();
    const auto& real = rt.real();
    Usage u;
    // NVML numbers processes as the host does: each slice process by the
    // host pid it found at its first context (its own pid outside a pid
    // namespace, or when it has not found one).
    const unsigned own_pid = rt.host_pid();
    std::unordered_set<unsigned> slice_pids{own_pid};
    if (auto* region = rt.region()) {
      const int rdev = rt.region_device(d.ordinal);
      if (rdev >= 0)
        for (const auto& s : region->live_slots(rdev))
          slice_pids.insert(static_cast<unsigned>(s.host_pid ? s.host_pid : s.pid));
    }
    // The processes on the card now: a process outside the slice makes
    // `default` hold its share (before a monitor decides), and only a live
    // one's samples count as another tenant's busy time (NVML keeps a
    // finished process's last periods; the check's 60 % slice, started
    // right after its 30 % one, took them for a neighbour's).
    // An empty list means NVML could not say (this process holds a context,
    // so a working NVML lists at least it): then every sample counts.
    const std::vector<unsigned> live = rt.nvml_pids(d.ordinal);  // sorted
    if (!live.empty()) u.listed_processes = static_cast<int>(live.size());
    for (const unsigned pid : live) u.foreign_process = u.foreign_process || !slice_pids.count(pid);
    std::vector<nvmlProcessUtilizationSample_t> samples(64);
    unsigned count = static_cast<unsigned>(samples.size());
    nvmlReturn_t rc = real.nvmlDeviceGetProcessUtilization(d.nvml, samples.data(), &count, d.last_sample_us);
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
      samples.resize(count + 16);
      count = static_cast<unsigned>(samples.size());
      rc = real.nvmlDeviceGetProcessUtilization(d.nvml, samples.data(), &count, d.last_sample_us);
    }
    if (rc == NVML_SUCCESS && count > 0) {
      // NVML keeps one sample per sampling period and per process that ran
      // kernels in it; a period without a kernel of a process has no sample
      // of it. So a process's busy time is the sum of its samples, each a
      // share of one period, never "mean smUtil x time since the last look"
      // (that read a process that started 1.5 s into the window as busy the
      // whole window, and set its rate 12 times too low).
      std::vector<unsigned long long> stamps;
      unsigned long long oldest_own = 0;
      for (unsigned i = 0; i < count; ++i) {
        if (samples[i].timeStamp <= d.last_sample_us) continue;
        stamps.push_back(samples[i].timeStamp);
        if (samples[i].pid == own_pid && (oldest_own == 0 || samples[i].timeStamp < oldest_own))
          oldest_own = samples[i].timeStamp;
      }
      learn_period(d, stamps);
      if (!stamps.empty()) {
        const unsigned long long newest = *std::max_element(stamps.begin(), stamps.end());
        // On the first look NVML hands over its whole buffer, older tenants
        // included, and the window of measurements opens at its newest stamp.
        // What this process ran before that (its own samples all come after
        // its start, so from one period before the oldest of them) is the
        // prelude: unthrottled, it is counted as debt that the controller pays
        // back, so a short run still lands on its share.
        const bool first_look = d.last_sample_us == 0;
        const unsigned long long opened =
            first_look ? (oldest_own > d.sample_period_us ? oldest_own - d.sample_period_us : 0)
                       : d.last_sample_us;
        if (opened != 0 && newest > opened) {
          const double seconds = static_cast<double>(newest - opened) * 1e-6;
          const double period = static_cast<double>(d.sample_period_us) * 1e-6;
          std::unordered_map<unsigned, double> busy_periods;  // periods' worth of busy time, per pid
          for (unsigned i = 0; i < count; ++i)
            if (samples[i].timeStamp > opened) busy_periods[samples[i].pid] += samples[i].smUtil / 100.0;
          double slice = 0, own = 0, others = 0;
          for (const auto& [pid, periods] : busy_periods) {
            const double util = std::min(1.0, periods * period / seconds);
            if (slice_pids.count(pid)) {
              slice += util;
              if (pid == own_pid) own += util;
            } else if (live.empty() || std::binary_search(live.begin(), live.end(), pid)) {
              others += util;
            }
          }
          if (first_look) {
            u.prelude_seconds = seconds;
            u.prelude_slice = slice;
            u.prelude_own = own;
            u.prelude_others = others;
          } else {
            u.measured = true;
            u.seconds = seconds;
            u.slice = slice;
            u.own = own;
            u.others = others;
          }
        }
        u.window_opened = first_look;
        u.newest_stamp = newest;
        d.last_sample_us = newest;
      }
    }
    return u;
  }

  // Under `default`: whether the slice must hold its share now. A monitor's
  // utilization_switch decides once one has written it; before that, a
  // process outside the slice using the card does.
  static bool must_hold(const Usage& u) {
    auto* region = Runtime::get().region();
    const int sw = region ? region->utilization_switch() : realgpu::hami::kSwitchNoMonitor;
    if (sw != realgpu::hami::kSwitchNoMonitor) return sw == 1;
    return u.foreign_process || u.others > 0;
  }

  void steer(DeviceLimiter& d) {
    const uint64_t fresh = d.gate.take_launch_count();
    d.window_launches += fresh;
    d.launches_total += fresh;
    if (d.ticks.size() < 32)
      d.ticks.push_back({clock_us(CLOCK_MONOTONIC), clock_us(CLOCK_REALTIME), d.launches_total});
    Usage u = sample(d);
    std::optional<uint64_t> before_stamp;
    if (u.window_opened) {
      // The window opens at NVML's newest stamp: launches issued after it
      // belong to the next measurement, those before it to the prelude.
      before_stamp = launches_at(d.ticks, u.newest_stamp);
      d.window_launches = before_stamp ? d.launches_total - *before_stamp : 0;
      d.ticks.clear();
      d.ticks.shrink_to_fit();
    }
    auto& rt = Runtime::get();
    if (u.measured) {
      // The slice's utilization for the monitor, as HAMi-core's watcher writes it.
      auto* region = rt.region();
      const int rdev = rt.region_device(d.ordinal);
      if (region && rdev >= 0) region->set_sm_util(rdev, static_cast<unsigned>(std::lround(u.own * 100)));
    }
    const bool hold = rt.env().core_policy != realgpu::CorePolicy::Default || must_hold(u);
    if (rt.env().core_policy == realgpu::CorePolicy::Default && d.holding != static_cast<int>(hold)) {
      // At debug level: why `default` holds the slice to its share or lets it
      // burst, each time that changes (a slice that bursts beside a neighbour
      // on hardware is explained here).
      d.holding = hold;
      auto* region = rt.region();
      rt.log(
          Level::Debug,
          "Device %d: default policy %s: monitor switch %d, NVML lists %d compute process(es), one outside "
          "the slice: %s; others %.1f%% of the last window",
          d.ordinal, hold ? "holds the share" : "bursts",
          region ? region->utilization_switch() : realgpu::hami::kSwitchNoMonitor, u.listed_processes,
          u.foreign_process ? "yes" : "no", u.others * 100);
    }
    if (!hold) {
      d.window_launches = 0;
      if (d.throttling) {
        d.controller.restart();
        d.gate.set_rate(std::numeric_limits<double>::infinity());
        d.throttling = false;
      }
      return;
    }
    d.throttling = true;
    uint64_t launches = 0;
    if (u.prelude_seconds > 0 && before_stamp) {
      // The prelude prices a launch: judged like any window.
      u.measured = true;
      u.seconds = u.prelude_seconds;
      u.slice = u.prelude_slice;
      u.own = u.prelude_own;
      u.others = u.prelude_others;
      launches = *before_stamp;
    } else if (u.prelude_seconds > 0) {
      // On no clock we know: it still counts against the share.
      d.controller.account(u.prelude_seconds, u.prelude_slice);
      return;
    } else if (!u.measured) {
      return;  // nothing new from the driver: keep counting
    } else {
      launches = d.window_launches;
      d.window_launches = 0;
    }
    d.controller.observe({u.seconds, u.slice, u.own, launches, u.measured, u.others});
    d.gate.set_rate(d.controller.launch_rate());
    // At debug level (LIBCUDA_LOG_LEVEL=4): what the loop saw and chose, to
    // compare with the card's own utilization on hardware.
    Runtime::get().log(
        Level::Debug,
        "Device %d: slice %.1f%%, own %.1f%%, others %.1f%% over %.3f s; %llu launches; rate %.1f/s",
        d.ordinal, u.slice * 100, u.own * 100, u.others * 100, u.seconds,
        static_cast<unsigned long long>(launches), d.controller.launch_rate());
  }

  void loop() {
    const int period = period_ms();
    for (;;) {
      const double next = realgpu::monotonic_seconds() + period * 1e-3;
      for (int i = 0; i < realgpu::kMaxDevices; ++i)
        if (state[i].load(std::memory_order_acquire) == On) steer(*devices[i]);
      const double wait = next - realgpu::monotonic_seconds();
      if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    }
  }
};

ComputeLimiter::ComputeLimiter() : impl_(new Impl()) {}

ComputeLimiter& ComputeLimiter::get() {
  static auto* limiter = new ComputeLimiter();  // never destroyed: its thread runs to exit
  return *limiter;
}

void ComputeLimiter::admit() {
  if (auto* region = Runtime::get().region()) impl_->feedback(*region);
  if (!impl_->any_limit) return;
  const auto ordinal = Runtime::get().current_ordinal();
  if (!ordinal) return;
  if (auto* d = impl_->device(*ordinal)) d->gate.admit();
}

}  // namespace gpuslice::shim
