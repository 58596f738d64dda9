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
// The history that prices a launch on a contended card: long enough that
// whole-period attribution averages out (about 15 of NVML's periods), short
// enough to follow an application whose kernels change.
constexpr double kHistorySeconds = 3.0;
// Another tenant counts as busy beside the slice above this share of the
// recent time.
constexpr double kContendedShare = 0.02;

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

void ShareController::remember(const Sample& s) {
  const double keep = std::exp(-s.seconds / kHistorySeconds);
  history_.seconds = history_.seconds * keep + s.seconds;
  history_.own_busy = history_.own_busy * keep + s.own_util * s.seconds;
  history_.slice_busy = history_.slice_busy * keep + s.slice_util * s.seconds;
  history_.others_busy = history_.others_busy * keep + s.others_util * s.seconds;
  history_.launches = history_.launches * keep + static_cast<double>(s.launches);
}

bool ShareController::contended() const {
  return history_.seconds > 0 && history_.others_busy > kContendedShare * history_.seconds;
}

double ShareController::launch_cost() const {
  if (history_.launches <= 0) return 0;
  // Until NVML has given this process a period, the card's busy time per
  // launch of ours stands in: more than a launch costs, so the slice starts
  // low rather than bursting unmeasured.
  const double busy = history_.own_busy > 0 ? history_.own_busy : history_.others_busy;
  return busy / history_.launches;
}

double ShareController::slice_from_launches(const Sample& s) const {
  const double cost = launch_cost();
  if (cost <= 0) return s.slice_util;
  const double slice_per_own =
      history_.own_busy > 0 ? std::clamp(history_.slice_busy / history_.own_busy, 1.0, 64.0) : 1.0;
  return std::min(1.0, static_cast<double>(s.launches) * cost / s.seconds * slice_per_own);
}

void ShareController::observe(const Sample& s) {
  if (!s.measured || s.seconds <= 0) return;
  remember(s);
  const bool shared = contended();
  const double slice_util = shared ? slice_from_launches(s) : s.slice_util;
  account(s.seconds, slice_util);
  pool_.seconds += s.seconds;
  pool_.slice_busy += slice_util * s.seconds;
  pool_.own_busy += s.own_util * s.seconds;
  pool_.launches += s.launches;
  if (pool_.launches < kPoolLaunches && pool_.seconds < kPoolSeconds) return;
  const Pool p = pool_;
  pool_ = {};
  const double goal =
      std::clamp(target_ - debt_ / kPaybackSeconds, 0.25 * target_, std::min(1.0, 2.0 * target_));
  if (std::isinf(rate_)) {
    // First look: the cost of one launch gives the rate directly (on a
    // contended card, the cost over the history).
    const double cost =
        shared ? launch_cost() : (p.launches > 0 ? p.own_busy / static_cast<double>(p.launches) : 0.0);
    if (cost <= 0) return;
    const double own_busy = shared ? history_.own_busy : p.own_busy;
    const double slice_busy = shared ? history_.slice_busy : p.slice_busy;
    const double own_part = own_busy > 0 && slice_busy > 0 ? std::min(1.0, own_busy / slice_busy) : 1.0;
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
