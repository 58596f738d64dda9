#include "gpuslice/sim/generator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace gpuslice::sim {

int64_t gpu_milli_of(const core::PodRequest& request, int64_t typical_card_mib) {
  int64_t milli = 0;
  for (const auto& c : request.containers) {  // init containers run before, not beside
    if (!c.wants_devices()) continue;
    const int64_t cores = 10 * std::min<int64_t>(c.cores, 100);
    int64_t memory = 0;
    // Koordinator's bytes as MiB, a KAI fraction as per mille.
    const int64_t mib = c.memory_mib > 0 ? c.memory_mib : c.memory_bytes / (int64_t{1} << 20);
    if (mib > 0)
      memory = typical_card_mib > 0 ? std::min<int64_t>(1000, 1000 * mib / typical_card_mib) : 0;
    else if (c.memory_fraction > 0)
      memory = std::min<int64_t>(1000, static_cast<int64_t>(1000 * c.memory_fraction));
    else if (c.memory_percent != core::kMemoryPercentUnset)
      memory = 10 * static_cast<int64_t>(c.memory_percent);
    milli += static_cast<int64_t>(c.count) * std::max(cores, memory);
  }
  return milli;
}

int64_t typical_card_mib(const core::Cluster& fleet) {
  std::vector<int64_t> mib;
  for (size_t id = 0; id < fleet.size(); ++id)
    for (const auto& d : fleet.node(id).devices) mib.push_back(d.memory_mib);
  if (mib.empty()) return 0;
  std::nth_element(mib.begin(), mib.begin() + static_cast<long>(mib.size() / 2), mib.end());
  return mib[mib.size() / 2];
}

Workload generate(const GeneratorSpec& spec, uint64_t seed, int64_t typical_mib) {
  if (spec.mix.empty()) throw std::invalid_argument("a generator needs at least one pod template");
  std::mt19937_64 rng(seed);
  std::vector<double> weights;
  for (const auto& t : spec.mix) weights.push_back(t.weight);
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
  std::exponential_distribution<double> gap(spec.rate_per_s);
  std::exponential_distribution<double> exp_duration(1.0 / spec.mean_s);
  // A lognormal with the requested mean: mu = ln(mean) - sigma^2/2.
  std::lognormal_distribution<double> lognormal(std::log(spec.mean_s) - spec.sigma * spec.sigma / 2,
                                                spec.sigma);
  Workload out;
  out.reserve(spec.pods);
  double t = 0;
  for (size_t i = 0; i < spec.pods; ++i) {
    if (spec.arrival == "poisson" && spec.diurnal_amplitude > 0)
      t = next_diurnal_arrival(t, {spec.rate_per_s, spec.diurnal_amplitude, spec.diurnal_peak}, rng);
    else if (spec.arrival == "poisson")
      t += gap(rng);
    else if (spec.arrival == "uniform")
      t = static_cast<double>(i) / spec.rate_per_s;
    else if (spec.arrival != "burst")
      throw std::invalid_argument("unknown arrival process " + spec.arrival);
    const PodTemplate& tpl = spec.mix[pick(rng)];
    PodSpec p;
    p.request = tpl.request;
    p.request.name = fmt::format("{}-{}", tpl.name, i);
    p.kind = tpl.name;
    p.priority = tpl.priority;
    p.controlled = tpl.controlled;
    p.pdb_protected = tpl.pdb_protected;
    p.arrival = t;
    if (spec.duration == "exponential")
      p.duration = exp_duration(rng);
    else if (spec.duration == "fixed")
      p.duration = spec.mean_s;
    else if (spec.duration == "lognormal")
      p.duration = lognormal(rng);
    else if (spec.duration == "forever")
      p.duration = kForever;
    else
      throw std::invalid_argument("unknown duration distribution " + spec.duration);
    p.gpu_milli = gpu_milli_of(p.request, typical_mib);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace gpuslice::sim
