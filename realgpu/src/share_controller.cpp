#include "gpuslice/realgpu/share_controller.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>

namespace gpuslice::realgpu {

namespace {
// How fast the integral pays back: over- or under-use is returned within
// about this many seconds.
constexpr double kPaybackSeconds = 2.0;
// Bounds on the integral (busy seconds): a short idle spell earns at most a
// small burst; a long overshoot is paid back without starving the slice.
constexpr double kMaxCredit = 0.1, kMaxDebt = 1.0;
// A period can move the rate by at most this factor either way, so one odd
// measurement (a kernel straddling the window) cannot swing it wildly.
constexpr double kMaxStep = 2.0;
// A pool of samples is judged once it holds this many launches, or this long.
constexpr uint64_t kPoolLaunches = 8;
constexpr double kPoolSeconds = 1.0;

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

ShareController::ShareController(double target_fraction) : target_(std::clamp(target_fraction, 0.0, 1.0)) {}

void ShareController::restart() {
  rate_ = std::numeric_limits<double>::infinity();
  debt_ = 0;
}

void ShareController::account(double seconds, double slice_util) {
  if (seconds > 0) debt_ = std::clamp(debt_ + (slice_util - target_) * seconds, -kMaxCredit, kMaxDebt);
}

void ShareController::observe(const Sample& s) {
  if (!s.measured || s.seconds <= 0) return;
  account(s.seconds, s.slice_util);
  pool_.seconds += s.seconds;
  pool_.slice_busy += s.slice_util * s.seconds;
  pool_.own_busy += s.own_util * s.seconds;
  pool_.launches += s.launches;
  if (pool_.launches < kPoolLaunches && pool_.seconds < kPoolSeconds) return;
  const Pool p = pool_;
  pool_ = {};
  const double goal =
      std::clamp(target_ - debt_ / kPaybackSeconds, 0.25 * target_, std::min(1.0, 2.0 * target_));
  if (std::isinf(rate_)) {
    // First look: the cost of one launch gives the rate directly.
    if (p.launches == 0 || p.own_busy <= 0) return;
    const double cost = p.own_busy / static_cast<double>(p.launches);
    const double own_part = p.slice_busy > 0 ? std::min(1.0, p.own_busy / p.slice_busy) : 1.0;
    rate_ = goal * own_part / cost;
    return;
  }
  const double slice = p.slice_busy / p.seconds;
  // Did the application use what it was allowed? If not, it idles or is
  // bound elsewhere: never raise its rate then (no wind-up, so no burst when
  // it wakes).
  const bool used_allowance = static_cast<double>(p.launches) + 1 >= 0.5 * rate_ * p.seconds;
  double factor = 0;
  if (slice > 0) {
    factor = std::clamp(goal / slice, 1.0 / kMaxStep, kMaxStep);
  } else if (used_allowance) {
    // It launches all it may and the driver sees nothing: the rate is so low
    // that the work rounds to 0% (on an H100 a rate set from a bad first look
    // held a 30% slice at 1.7% for good). Double until it shows.
    factor = kMaxStep;
  } else {
    return;  // idle: nothing learnt
  }
  if (factor > 1 && !used_allowance) return;
  rate_ = std::max(rate_ * factor, 0.1);
}

void LaunchGate::set_rate(double launches_per_second) {
  std::lock_guard lock(mutex_);
  rate_ = launches_per_second;
  if (std::isinf(rate_)) tokens_ = 1;
}

void LaunchGate::admit() {
  int64_t wait_ns = 0;
  {
    std::lock_guard lock(mutex_);
    ++launches_;
    if (std::isinf(rate_)) return;
    const int64_t now = now_ns();
    if (last_ns_ != 0) {
      // At most ~5 ms of launches can be saved up.
      const double cap = std::max(1.0, rate_ * 0.005);
      tokens_ = std::min(cap, tokens_ + static_cast<double>(now - last_ns_) * 1e-9 * rate_);
    }
    last_ns_ = now;
    // Reserve the launch now and sleep outside the lock, so a rate change
    // (or another thread) never waits behind a sleeper.
    tokens_ -= 1;
    if (tokens_ < 0) wait_ns = static_cast<int64_t>(-tokens_ / rate_ * 1e9);
  }
  if (wait_ns > 0) {
    timespec ts{static_cast<time_t>(wait_ns / 1'000'000'000), static_cast<long>(wait_ns % 1'000'000'000)};
    while (nanosleep(&ts, &ts) != 0) {
    }
  }
}

uint64_t LaunchGate::take_launch_count() {
  std::lock_guard lock(mutex_);
  const uint64_t n = launches_;
  launches_ = 0;
  return n;
}

}  // namespace gpuslice::realgpu
