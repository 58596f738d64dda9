#include "gpuslice/sim/diurnal.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "gpuslice/sim/openb.hpp"

namespace gpuslice::sim {

double next_diurnal_arrival(double t, const DiurnalRate& rate, std::mt19937_64& rng) {
  const double top = rate.rate_per_s * (1 + rate.amplitude);
  std::exponential_distribution<double> gap(top);
  std::uniform_real_distribution<double> keep(0, 1);
  constexpr double kDay = 86400;
  for (;;) {
    t += gap(rng);
    const double now =
        rate.rate_per_s * (1 + rate.amplitude * std::cos(2 * std::numbers::pi * (t - rate.peak) / kDay));
    if (keep(rng) * top <= now) return t;
  }
}

Workload openb_diurnal(const Workload& shapes, const OpenbDiurnal& spec, uint64_t seed) {
  Workload out;
  if (shapes.empty()) return out;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, shapes.size() - 1);
  std::exponential_distribution<double> duration(1.0 / spec.mean_s);
  const double end = spec.days * 86400;
  for (double t = next_diurnal_arrival(0, spec.rate, rng); t < end && out.size() < kMaxPods;
       t = next_diurnal_arrival(t, spec.rate, rng)) {
    PodSpec p = shapes[pick(rng)];
    p.request.name = fmt::format("openb-{}", out.size());
    p.name.clear();
    p.arrival = t;
    p.duration = duration(rng);
    p.resampled = false;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace gpuslice::sim
