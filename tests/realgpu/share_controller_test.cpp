// The controller against a model of a device: each launch costs `cost`
// seconds of device time, the application launches as fast as it is let
// (or as fast as it wants), and the device runs one kernel at a time.
#include "gpuslice/realgpu/share_controller.hpp"

#include <catch2/catch.hpp>
#include <cmath>

using gpuslice::realgpu::ShareController;

namespace {

struct App {
  double cost;          // device seconds per launch
  double wants = 1e12;  // launches per second it would issue unthrottled
  ShareController controller;
  double credit = 0;  // fractional launches carried between periods
  double util = 0;    // last period's busy fraction
  uint64_t launches = 0;
};

// Runs `seconds` of periods; returns each app's average busy fraction.
// Launches are whole: a period holds an integer number of kernels.
std::vector<double> run(std::vector<App>& apps, double seconds, double period = 0.1) {
  std::vector<double> busy(apps.size(), 0);
  for (double t = 0; t < seconds; t += period) {
    double demand = 0;
    for (auto& a : apps) {
      const double rate = std::min(a.wants, a.controller.launch_rate());
      a.credit = std::min(a.credit + rate * period, period / a.cost + 1);  // the device bounds it too
      a.launches = static_cast<uint64_t>(a.credit);
      a.credit -= static_cast<double>(a.launches);
      demand += static_cast<double>(a.launches) * a.cost;
    }
    // Oversubscribed: the device runs what fits, the rest is not issued.
    const double scale = demand > period ? period / demand : 1.0;
    double slice = 0;
    for (auto& a : apps) {
      a.launches = static_cast<uint64_t>(static_cast<double>(a.launches) * scale);
      a.util = static_cast<double>(a.launches) * a.cost / period;
      slice += a.util;
    }
    for (size_t i = 0; i < apps.size(); ++i) {
      auto& a = apps[i];
      a.controller.observe({period, slice, a.util, a.launches, true});
      busy[i] += a.util * period;
    }
  }
  for (auto& b : busy) b /= seconds;
  return busy;
}

}  // namespace

TEST_CASE("the share holds within 3 points over 10 s whatever a launch costs (no SM count anywhere)") {
  for (double target : {0.10, 0.30, 0.60})
    for (double cost : {20e-6, 500e-6, 2e-3, 20e-3}) {
      INFO("target " << target << " cost " << cost);
      std::vector<App> apps{{cost, 1e12, ShareController(target)}};
      const auto share = run(apps, 10.0);
      CHECK(std::abs(share[0] - target) < 0.03);
      // And after the first second, within one point.
      std::vector<App> settled{{cost, 1e12, ShareController(target)}};
      run(settled, 1.0);
      CHECK(std::abs(run(settled, 10.0)[0] - target) < 0.01);
    }
}

TEST_CASE("several processes of one slice converge on the slice's share together") {
  std::vector<App> apps{{1e-3, 1e12, ShareController(0.3)}, {4e-3, 1e12, ShareController(0.3)}};
  run(apps, 2.0);
  const auto share = run(apps, 10.0);
  CHECK(std::abs(share[0] + share[1] - 0.3) < 0.02);
}

TEST_CASE("an application that idles does not save up a burst") {
  std::vector<App> apps{{1e-3, 50, ShareController(0.3)}};  // wants 5% of the device
  run(apps, 5.0);
  // The rate it holds is about what the target allows (0.3 / 1 ms = 300/s),
  // not a growing allowance from the periods it left unused.
  CHECK(apps[0].controller.launch_rate() <= 1.25 * 0.3 / 1e-3);
  apps[0].wants = 1e12;  // now it wants everything
  std::vector<double> first;
  App& a = apps[0];
  first = run(apps, 0.3);
  CHECK(first[0] < 0.45);
  CHECK(std::abs(run(apps, 10.0)[0] - 0.3) < 0.02);
  (void)a;
}

TEST_CASE("a rate too low for the driver to see recovers: 0% while the allowance is used doubles it") {
  // Seen on an H100: a first look that overestimated a launch's cost 12-fold
  // set a 30% slice of 200 us kernels to 30 launches/s; NVML then read its
  // work (0.6%) as 0%, the controller learnt nothing, and it stayed at 1.7%.
  // Here the device reports whole percents, as NVML does, truncated (0.6%
  // reads 0).
  ShareController controller(0.30);
  const double cost = 200e-6, period = 0.2;
  controller.observe({1.6, 0.76, 0.76, 490, true});  // the bad first look
  REQUIRE(controller.launch_rate() * cost < 0.01);   // under 1% of the device
  double share = 0;
  for (int i = 0; i < 100; ++i) {  // 20 s
    const auto launches = static_cast<uint64_t>(controller.launch_rate() * period);
    const double util = std::floor(static_cast<double>(launches) * cost / period * 100) / 100;
    controller.observe({period, util, util, launches, true});
    if (i >= 75) share += util / 25;  // the last 5 s
  }
  CHECK(std::abs(share - 0.30) <= 0.03);
}

TEST_CASE("an application that idles is not raised when the driver reads 0%") {
  ShareController controller(0.30);
  controller.observe({1.0, 0.30, 0.30, 100, true});
  const double rate = controller.launch_rate();
  for (int i = 0; i < 20; ++i) controller.observe({0.2, 0.0, 0.0, 0, true});
  CHECK(controller.launch_rate() == rate);
}

TEST_CASE("what ran before the first measurement is paid back: a short run still lands on its share") {
  // 0.3 s unthrottled at the start (the driver's first samples), then the
  // controller; over 3 s the average comes back to the target only when the
  // prelude is accounted.
  auto average = [](bool account_prelude) {
    std::vector<App> apps{{2e-3, 1e12, ShareController(0.3)}};
    if (account_prelude) apps[0].controller.account(0.3, 1.0);
    return (0.3 * 1.0 + run(apps, 2.7)[0] * 2.7) / 3.0;
  };
  CHECK(std::abs(average(true) - 0.3) <= 0.03);
  CHECK(average(false) > 0.35);  // without it the burst stays in the average
}

// Two slices time-sliced on one card, read as an H100 reads them: NVML gives
// each 200 ms period wholly to one process (drawn in proportion to its busy
// time), whose sample is the card's busy share; the other sees 0 % for
// itself and the card's share for others. The device runs what fits.
static std::vector<double> run_time_sliced(ShareController& a, ShareController& b, double seconds,
                                           uint32_t seed, double settle) {
  const double cost = 2e-3, period = 0.2;
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 1;
  auto uniform = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) * 0x1.0p-53;
  };
  std::vector<double> busy{0, 0};
  ShareController* c[2] = {&a, &b};
  for (double t = 0; t < seconds; t += period) {
    double util[2];
    uint64_t launches[2];
    for (int i = 0; i < 2; ++i) {
      const double rate = std::isinf(c[i]->launch_rate()) ? 1e12 : c[i]->launch_rate();
      launches[i] = static_cast<uint64_t>(std::min(rate * period, period / cost));
    }
    const double demand = static_cast<double>(launches[0] + launches[1]) * cost;
    const double scale = demand > period ? period / demand : 1.0;
    for (int i = 0; i < 2; ++i) {
      launches[i] = static_cast<uint64_t>(static_cast<double>(launches[i]) * scale);
      util[i] = static_cast<double>(launches[i]) * cost / period;
    }
    const double card = util[0] + util[1];
    const int owner = card > 0 && uniform() * card < util[0] ? 0 : 1;
    for (int i = 0; i < 2; ++i) {
      const double seen = card > 0 && i == owner ? card : 0.0;
      c[i]->observe({period, seen, seen, launches[i], true, card - seen});
      if (t >= settle) busy[i] += util[i] * period / (seconds - settle);
    }
  }
  return busy;
}

TEST_CASE("two slices hold their shares when NVML gives each period to one process (as an H100 does)") {
  // On the H100 a controller that judged each period alone halved its rate
  // on a 98 % period and doubled it on a 0 % one: no pull towards the
  // target, and two 30 % slices drifted to 100 % of the card and stayed.
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    ShareController a(0.30), b(0.30);
    const auto share = run_time_sliced(a, b, 12.0, seed, 2.0);  // as the check: 2 s to settle, 10 s
    INFO("shares " << share[0] << " and " << share[1]);
    // The card, as the check judges it from outside: within 5 points.
    CHECK(std::abs(share[0] + share[1] - 0.60) <= 0.05);
    // Each slice: within 10 points. Which slice ran is all NVML says here,
    // one draw a period: 50 draws give a slice's share to about 4 points (one
    // standard deviation), so no reading of these samples does much better.
    CHECK(std::abs(share[0] - 0.30) <= 0.10);
    CHECK(std::abs(share[1] - 0.30) <= 0.10);
  }
}
