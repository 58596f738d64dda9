// Holding a slice's compute share, without knowing the card.
//
// HAMi-core hands out tokens in grid blocks and refills them in steps that
// grow with the SM count squared, so the share it delivers depends on the
// card (a 30% cap gave ~46% on 188 SMs). Here the quantity controlled is TIME:
// the busy fraction of the device that the slice's kernels use, as the driver
// itself measures it (NVML per-process utilization). A feedback loop sets how
// many launches per second the process may issue:
//   - the first measurement gives the cost of a launch (busy seconds per
//     launch) and so the rate that would give the target;
//   - every period after, the rate is scaled by target / measured (the slice's
//     total, so several processes of one slice converge together);
//   - an integral of the error (busy seconds over or under budget) nudges the
//     target so the long-run average lands on it, not just near it;
//   - the rate never runs ahead of what the application actually asks for
//     (no wind-up while it idles, so no burst when it wakes);
//   - while another tenant is busy on the card, the slice's busy time is
//     taken as its launches times a launch's cost learnt over seconds, not
//     read period by period: an H100 time-slicing two contexts gives each
//     200 ms period wholly to one process (98 % to one, 0 % to the other),
//     and a loop judging single periods halved and doubled its rate in turn
//     and let two 30 % slices hold the card 100 % busy.
// Nothing here reads the SM count, the grid size or the clock rate.
#pragma once

#include <cstdint>
#include <limits>
#include <mutex>

namespace gpuslice::realgpu {

class ShareController {
 public:
  explicit ShareController(double target_fraction);

  struct Sample {
    double seconds = 0;      // length of the measured period
    double slice_util = 0;   // busy fraction of the device used by the whole slice
    double own_util = 0;     // ... by this process
    uint64_t launches = 0;   // launches this process issued in the period
    bool measured = true;    // false when the driver had no new sample
    double others_util = 0;  // ... by processes outside the slice
  };
  void observe(const Sample& s);
  // Busy time that cannot price a launch but counts against the share (what
  // ran before the first measurement): only the debt changes.
  void account(double seconds, double slice_util);
  // Launches per second this process may issue; infinity before the first
  // measurement and while unthrottled.
  double launch_rate() const { return rate_; }
  double target() const { return target_; }
  // After a stretch without throttling (default policy, alone on the card).
  void restart();

 private:
  double target_;
  double rate_ = std::numeric_limits<double>::infinity();
  double debt_ = 0;  // busy seconds used beyond the target (negative: under)
  // Decaying sums over the last seconds (see kHistorySeconds): what a launch
  // costs (own busy / launches), the slice's busy time per own busy time,
  // and how much of the time another tenant was busy.
  struct History {
    double seconds = 0, own_busy = 0, slice_busy = 0, others_busy = 0, launches = 0;
  } history_;
  void remember(const Sample& s);
  bool contended() const;
  // Busy seconds per launch over the history (0: no launch yet).
  double launch_cost() const;
  // The slice's busy fraction in `s` as its launches say (contended cards).
  double slice_from_launches(const Sample& s) const;
  // Samples are pooled until they hold enough launches to say something
  // (a 20 ms kernel at 10% runs once every 200 ms: single periods would
  // read 0% or 100%).
  struct Pool {
    double seconds = 0, slice_busy = 0, own_busy = 0;
    uint64_t launches = 0;
  } pool_;
};

// The gate every launch passes: a token bucket at the controller's rate.
// Tokens are launches; the bucket holds at most a few milliseconds' worth,
// so a throttled process cannot save up a burst.
class LaunchGate {
 public:
  void set_rate(double launches_per_second);
  // Blocks the caller until a launch is allowed; counts the launch.
  void admit();
  // Launches admitted since the last call.
  uint64_t take_launch_count();

 private:
  std::mutex mutex_;
  double rate_ = std::numeric_limits<double>::infinity();
  double tokens_ = 1;
  int64_t last_ns_ = 0;
  uint64_t launches_ = 0;
};

}  // namespace gpuslice::realgpu
