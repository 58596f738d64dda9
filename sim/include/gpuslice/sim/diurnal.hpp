// A diurnal arrival rate: a Poisson process whose rate follows the day,
// rate(t) = rate_per_s x (1 + amplitude x cos(2 pi (t - peak) / 1 day)),
// drawn by thinning (Lewis and Shedler): candidates at the peak rate, each
// kept with probability rate(t) / peak rate. docs/simulator.md#node-groups-and-the-autoscaler.
#pragma once

#include <random>

namespace gpuslice::sim {

struct DiurnalRate {
  double rate_per_s = 1;    // the mean over a day
  double amplitude = 0;     // 0..1: the peak is (1 + amplitude) x the mean, the trough (1 - amplitude) x
  double peak = 14 * 3600;  // seconds after midnight when the rate is highest
};

// The next arrival after `t`.
double next_diurnal_arrival(double t, const DiurnalRate& rate, std::mt19937_64& rng);

// openb_pods with `diurnal:`: the trace's pod shapes drawn at random
// (uniformly over its rows, by the seed), arriving at a diurnal rate for
// `days`, each running an exponential time of mean `mean_s`.
struct OpenbDiurnal {
  DiurnalRate rate;
  double days = 1;
  double mean_s = 3600;
};

}  // namespace gpuslice::sim
