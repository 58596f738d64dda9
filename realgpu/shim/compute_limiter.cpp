#include "compute_limiter.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
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
};

// What NVML says about the device since the last look.
struct Usage {
  bool measured = false;
  double seconds = 0, own = 0, slice = 0, others = 0;
  bool foreign_process = false;
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
      std::unordered_map<unsigned, double> busy_periods;  // periods' worth of busy time, per pid
      for (unsigned i = 0; i < count; ++i) {
        if (samples[i].timeStamp <= d.last_sample_us) continue;
        stamps.push_back(samples[i].timeStamp);
        busy_periods[samples[i].pid] += samples[i].smUtil / 100.0;
      }
      learn_period(d, stamps);
      if (!stamps.empty()) {
        const unsigned long long newest = *std::max_element(stamps.begin(), stamps.end());
        u.measured = d.last_sample_us != 0;
        u.seconds = static_cast<double>(newest - d.last_sample_us) * 1e-6;
        const double period = static_cast<double>(d.sample_period_us) * 1e-6;
        for (const auto& [pid, periods] : busy_periods) {
          const double util = u.measured ? std::min(1.0, periods * period / u.seconds) : 0.0;
          if (slice_pids.count(pid)) {
            u.slice += util;
            if (pid == own_pid) u.own += util;
          } else {
            u.others += util;
          }
        }
        d.last_sample_us = newest;
      }
    }
    if (rt.env().core_policy == realgpu::CorePolicy::Default &&
        (!rt.region() || rt.region()->utilization_switch() == realgpu::hami::kSwitchNoMonitor)) {
      nvmlProcessInfo_t infos[128];
      unsigned n = 128;
      if (real.nvmlDeviceGetComputeRunningProcesses_v3(d.nvml, &n, infos) == NVML_SUCCESS)
        for (unsigned i = 0; i < n; ++i)
          u.foreign_process = u.foreign_process || !slice_pids.count(infos[i].pid);
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
    const uint64_t launches = d.gate.take_launch_count();
    const Usage u = sample(d);
    auto& rt = Runtime::get();
    if (u.measured) {
      // The slice's utilization for the monitor, as HAMi-core's watcher writes it.
      auto* region = rt.region();
      const int rdev = rt.region_device(d.ordinal);
      if (region && rdev >= 0) region->set_sm_util(rdev, static_cast<unsigned>(std::lround(u.own * 100)));
    }
    if (rt.env().core_policy == realgpu::CorePolicy::Default && !must_hold(u)) {
      if (d.throttling) {
        d.controller.restart();
        d.gate.set_rate(std::numeric_limits<double>::infinity());
        d.throttling = false;
      }
      return;
    }
    d.throttling = true;
    d.controller.observe({u.seconds, u.slice, u.own, launches, u.measured});
    d.gate.set_rate(d.controller.launch_rate());
    // At debug level (LIBCUDA_LOG_LEVEL=4): what the loop saw and chose, to
    // compare with the card's own utilization on hardware.
    if (u.measured)
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
